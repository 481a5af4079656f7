"""An agent's task as a file gives it: the ``[task]`` table of a task file, or of a scenario
file that holds one beside the scenario (the scenario's loader leaves it alone)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model.errors import InputError
from .scenario_file import read_scenario_file, split_sources

__all__ = ["task_table"]


def task_table(path: str | Path) -> dict[str, Any] | None:
    """The ``[task]`` table of the file at ``path`` (TOML or JSON), without its sources; None
    when it has none."""
    plain, _ = split_sources(read_scenario_file(Path(path)))
    table = plain.get("task")
    if table is not None and not isinstance(table, dict):
        raise InputError([("task", f"{path}: [task] must be a table")])
    return table
