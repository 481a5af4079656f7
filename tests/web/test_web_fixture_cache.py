"""The shipped examples the Compare, Task and Quotes pages offer are read once per version of
their files, not on every render (several times a render); an edited file is read again, and
a caller that changes what it got changes nothing for the next."""
from __future__ import annotations

import os

from costmodel.web import pages


def test_read_once_per_version_of_the_files(tmp_path, monkeypatch):
    path = tmp_path / "one.toml"
    path.write_text('name = "First"\nutilisation = 0.5\n', encoding="utf-8")
    monkeypatch.setattr(pages, "shipped_scenarios", lambda: {"fixture:one": path})
    monkeypatch.setattr(pages, "_FIXTURES_READ", {})
    reads = []
    real = pages.tomllib.loads
    monkeypatch.setattr(pages.tomllib, "loads", lambda text: reads.append(text) or real(text))

    first = pages.fixture_scenarios()
    assert first == {"fixture:one": ("First", {"name": "First", "utilisation": 0.5})}

    first["fixture:one"][1]["utilisation"] = 0.9  # the caller's own copy
    assert pages.fixture_scenarios()["fixture:one"][1]["utilisation"] == 0.5
    assert len(reads) == 1

    path.write_text('name = "Second"\nutilisation = 0.75\n', encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert pages.fixture_scenarios()["fixture:one"] == (
        "Second", {"name": "Second", "utilisation": 0.75})
    assert len(reads) == 2
