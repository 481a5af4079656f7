"""Usage records as plain columns: what every reader of ``costmodel.sources.usage`` returns.

One numpy array per column, all the same length; the grouping columns (team, key, model, a
tag...) are int32 codes into a tuple of labels, the label ``""`` standing for a record that
has no value for that key (unattributed). A key no record has a value for is left out, so a
tenant key that is absent from the files is absent from ``keys``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["UsageRecords", "RecordBuilder", "MAX_KEYS", "make_records", "concat"]

MAX_KEYS = 64  # grouping columns in one set of records (a real export has a dozen at most)


@dataclass(frozen=True)
class UsageRecords:
    """Usage records read whole from one or more files, columnar (one numpy array per column,
    all the same length). Token counts are float64 [token]; times are int64 [s since epoch,
    UTC]."""

    start: np.ndarray  # int64: start of the record's period [s]
    end: np.ndarray  # int64: end (exclusive) [s]; a per-request record: start == end
    input_tokens: np.ndarray  # float64: NEW (uncached) input tokens [token]
    cached_input_tokens: np.ndarray  # float64: cached input tokens [token]
    output_tokens: np.ndarray  # float64 [token]
    requests: np.ndarray  # float64 [request]
    keys: Mapping[str, np.ndarray]  # grouping column name -> int32 codes into labels[name]
    labels: Mapping[str, tuple[str, ...]]  # a missing value is the label "" (unattributed)
    sources: tuple[str, ...]  # the files read, with their shape: "usage.csv (csv)"

    def __post_init__(self):
        n = len(self.start)
        columns = (self.end, self.input_tokens, self.cached_input_tokens, self.output_tokens,
                   self.requests, *self.keys.values())
        if any(len(c) != n for c in columns) or set(self.keys) != set(self.labels):
            raise ValueError("usage columns of different lengths, or keys without labels")

    def __len__(self) -> int:
        return len(self.start)


def _compact(codes: np.ndarray, labels: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Codes and labels without the labels no record uses (first-seen order kept)."""
    codes = codes.astype(np.int32, copy=False)
    used = np.bincount(codes, minlength=len(labels)) > 0
    if used.all():
        return codes, tuple(labels)
    new = (np.cumsum(used) - 1).astype(np.int32)
    return new[codes], tuple(lab for lab, u in zip(labels, used, strict=True) if u)


def make_records(start, end, new_input, cached, output, requests,
                 keys: Mapping[str, tuple[np.ndarray, Sequence[str]]],
                 sources: tuple[str, ...]) -> UsageRecords:
    """Records from columns; ``keys``: name -> (codes, labels). Unused labels are dropped,
    and so is a key whose every record has the label ``""``."""
    out_keys: dict[str, np.ndarray] = {}
    out_labels: dict[str, tuple[str, ...]] = {}
    for name, (codes, labels) in keys.items():
        codes, labels = _compact(np.asarray(codes), labels)
        if labels and labels != ("",):
            out_keys[name], out_labels[name] = codes, labels
    return UsageRecords(
        start=np.asarray(start, dtype=np.int64), end=np.asarray(end, dtype=np.int64),
        input_tokens=np.asarray(new_input, dtype=np.float64),
        cached_input_tokens=np.asarray(cached, dtype=np.float64),
        output_tokens=np.asarray(output, dtype=np.float64),
        requests=np.asarray(requests, dtype=np.float64),
        keys=out_keys, labels=out_labels, sources=sources)


class RecordBuilder:
    """Records added one at a time (the JSON shapes), keys interned as they come."""

    def __init__(self):
        self.columns: tuple[list, ...] = ([], [], [], [], [], [])
        self.codes: dict[str, list[int]] = {}
        self.index: dict[str, dict[str, int]] = {}

    def __len__(self) -> int:
        return len(self.columns[0])

    def add(self, start: int, end: int, new_input: float, cached: float, output: float,
            requests: float, keys: Mapping[str, str]) -> None:
        """One record; ``keys``: name -> label (``""``: no value). Raises ValueError past
        :data:`MAX_KEYS` key names."""
        n = len(self)
        for name, label in keys.items():
            codes = self.codes.get(name)
            if codes is None:
                if len(self.codes) >= MAX_KEYS:
                    raise ValueError(f"more than {MAX_KEYS} different grouping keys "
                                     f"(at {name!r})")
                codes = self.codes[name] = [0] * n
                self.index[name] = {"": 0}
            index = self.index[name]
            code = index.get(label)
            if code is None:
                code = index[label] = len(index)
            codes.append(code)
        for codes in self.codes.values():
            if len(codes) == n:
                codes.append(0)
        for column, value in zip(self.columns, (start, end, new_input, cached, output,
                                                requests), strict=True):
            column.append(value)

    def build(self, source: str) -> UsageRecords:
        keys = {name: (np.array(codes, dtype=np.int32), tuple(self.index[name]))
                for name, codes in self.codes.items()}
        return make_records(*self.columns, keys=keys, sources=(source,))


def concat(parts: Sequence[UsageRecords]) -> UsageRecords:
    """One set of records from several (one a file): labels merged by name, a key that a
    part lacks is ``""`` for that part's records."""
    if len(parts) == 1:
        return parts[0]
    names: list[str] = []
    for p in parts:
        names += [k for k in p.keys if k not in names]
    keys: dict[str, tuple[np.ndarray, list[str]]] = {}
    for name in names:
        labels: list[str] = []
        index: dict[str, int] = {}
        pieces = []
        for p in parts:
            own = p.labels.get(name, ("",))
            remap = np.empty(len(own), dtype=np.int32)
            for i, label in enumerate(own):
                if label not in index:
                    index[label] = len(labels)
                    labels.append(label)
                remap[i] = index[label]
            codes = p.keys.get(name)
            pieces.append(remap[codes] if codes is not None
                          else np.full(len(p), remap[0], dtype=np.int32))
        keys[name] = (np.concatenate(pieces), labels)

    def joined(attr: str) -> np.ndarray:
        return np.concatenate([getattr(p, attr) for p in parts])

    sources = tuple(s for p in parts for s in p.sources)
    return make_records(joined("start"), joined("end"), joined("input_tokens"),
                        joined("cached_input_tokens"), joined("output_tokens"),
                        joined("requests"), keys=keys, sources=sources)
