"""The example scenarios shipped in the fixtures' ``scenarios/`` folder, by the name every face
gives them: ``fixture:<path without .toml>`` (``fixture:sample-tco``,
``fixture:published/deepseek-r1_gb300_peak``). A request names one by that name, never by a
path: the service reads only the files listed here."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..model.errors import InputError
from ..resources import fixtures_dir

__all__ = ["SHIPPED", "shipped_scenarios", "shipped_scenario"]

SHIPPED = "fixture:"  # the prefix of a shipped scenario's name


@lru_cache(maxsize=4)
def _listed(folder: str) -> dict[str, Path]:
    root = Path(folder)
    return {f"{SHIPPED}{p.relative_to(root).with_suffix('').as_posix()}": p
            for p in sorted(root.rglob("*.toml"))}


def shipped_scenarios() -> dict[str, Path]:
    """``fixture:<name>`` -> its file, for every shipped example scenario (listed once per
    process and fixtures folder)."""
    return _listed(str((fixtures_dir() / "scenarios").resolve()))


def shipped_scenario(name: str, where: str) -> Path:
    """The file of the shipped example scenario ``name``; InputError at ``where`` for a name
    the fixtures do not ship."""
    path = shipped_scenarios().get(name)
    if path is None:
        raise InputError([(where, f"no shipped scenario {name[:80]!r} (fixtures/scenarios "
                                  f"holds the examples)")])
    return path
