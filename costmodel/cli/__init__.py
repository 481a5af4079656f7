"""The ``costmodel`` command.

Each command lives in the module named for what it holds and is imported when it is run (or
listed by ``--help``), never before: ``costmodel --version`` loads click alone, and ``costmodel
price`` what pricing needs, not the analyses, workbooks, plots, web or database
(tests/cli/test_cli_imports.py; the timings are bench/cli.py's).
"""
from __future__ import annotations

import importlib
from typing import Any

import click

from .. import __version__

__all__ = ["main", "COMMANDS"]

# command name -> the module (in this package) and the name it has there
COMMANDS: dict[str, tuple[str, str]] = {
    "price": ("scenarios", "price"),
    "compare": ("scenarios", "compare"),
    "workbook": ("scenarios", "workbook"),
    "reprice": ("scenarios", "reprice"),
    "chargeback": ("chargeback", "chargeback_command"),
    "catalog": ("reference", "catalog"),
    "steps": ("reference", "steps"),
    "energy": ("energy", "energy"),
    "curves": ("curves", "curves"),
    "quotes": ("quotes", "quotes"),
    "plan": ("plan", "plan"),
    "profit": ("profit", "profit"),
    "sensitivity": ("sensitivity", "sensitivity"),
    "task": ("task", "task"),
    "tariff": ("tariff", "tariff"),
    "save": ("saved", "save"),
    "saved": ("saved", "saved"),
    "db": ("service", "db"),
    "keys": ("service", "keys"),
    "serve": ("service", "serve"),
    "mcp": ("mcp", "mcp"),
    "market": ("market", "market"),
}


class _LazyGroup(click.Group):
    """A group whose commands are imported from :data:`COMMANDS` when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, name = COMMANDS[cmd_name]
        return getattr(importlib.import_module(f".{module}", __name__), name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="costmodel")
def main() -> None:
    """Price LLM inference per million tokens, and say what it divided by."""


def __getattr__(name: str) -> Any:
    """What every command shares (``CONTEXT``, ``specs_for``...), from :mod:`.common` when
    first named here."""
    common = importlib.import_module(".common", __name__)
    if name in common.__all__:
        return getattr(common, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
