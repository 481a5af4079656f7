"""What every command shares: one-line errors and JSON output."""
from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

__all__ = ["fail", "emit_json"]


def fail(message: str) -> NoReturn:
    """One readable line on stderr, exit status 2: bad input changes nothing."""
    click.echo(f"costmodel: error: {message}", err=True)
    sys.exit(2)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))
