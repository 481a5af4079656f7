"""A market as a file gives it: the ``[market]`` table of a scenario file that holds one
beside the scenario (the scenario's loader leaves it alone), or of a file of its own."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model.errors import InputError
from .scenario_file import read_scenario_file

__all__ = ["market_table"]


def market_table(path: str | Path) -> dict[str, Any] | None:
    """The ``[market]`` table of the file at ``path`` (TOML or JSON) as written (a price may
    carry its ``source``); None when it has none."""
    table = read_scenario_file(Path(path)).get("market")
    if table is not None and not isinstance(table, dict):
        raise InputError([("market", f"{path}: [market] must be a table")])
    return table
