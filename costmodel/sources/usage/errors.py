"""The one error a usage file gives: where (file, line, column) and what."""
from __future__ import annotations

from ...model.errors import InputError

__all__ = ["UsageError"]


class UsageError(InputError):
    """A usage file that does not read whole: nothing of it is returned.

    ``file``: the file's name as given; ``line``: 1-based, where known (a CSV row's line, a
    JSON line, or the line of a JSON document's member); ``column``: the CSV column's name or
    the JSON path of the value (``data[0].results[2].input_tokens``), where the error is
    about one; ``message``: what is wrong, without the place. The one line every face shows
    is ``usage.csv line 17, column input_tokens: cannot read 'x' as a number``.
    """

    def __init__(self, file: str, line: int | None, column: str | None, message: str):
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        super().__init__([("", f"{self.where()}: {message}")])

    def where(self) -> str:
        """``usage.csv line 17, column input_tokens`` (the parts known)."""
        out = self.file
        if self.line is not None:
            out += f" line {self.line}"
        if self.column:
            out += f", column {self.column}" if self.line is not None else f" at {self.column}"
        return out
