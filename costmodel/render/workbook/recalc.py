"""Open workbooks in LibreOffice headless and save them again as .xlsx, as an editor would,
with every formula recalculated (``recalc=True``) or the cached values kept as they were; or
print them to PDF (:func:`to_pdf`), recalculated, as a finance team would send them.

LibreOffice recalculates an .xlsx on load only when its profile says so
(``OOXMLRecalcMode`` under Calc/Formula/Load: 0 always, 1 never); the default asks, which
headless means never. Each call uses its own throw-away profile, so runs do not share state.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["soffice", "recalculate", "save_with_libreoffice", "to_pdf", "RecalcError"]

_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
           xmlns:xs="http://www.w3.org/2001/XMLSchema"
           xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>{mode}</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="ODFRecalcMode" oor:op="fuse"><value>{mode}</value></prop></item>
</oor:items>
"""


class RecalcError(RuntimeError):
    """LibreOffice is missing or failed."""


def soffice() -> str | None:
    """The LibreOffice executable, or None ($COSTMODEL_SOFFICE overrides the search)."""
    return os.environ.get("COSTMODEL_SOFFICE") or shutil.which("soffice") or \
        shutil.which("libreoffice")


def recalculate(path: str | Path, out_dir: str | Path, *, timeout: float = 120) -> Path:
    """Open ``path`` in LibreOffice, recalculate every formula, save as .xlsx in ``out_dir``.

    Returns the written file (same name as the input).
    """
    return save_with_libreoffice([path], out_dir, timeout=timeout)[0]


def save_with_libreoffice(paths: Sequence[str | Path], out_dir: str | Path, *,
                          recalc: bool = True, timeout: float = 120) -> list[Path]:
    """Open each of ``paths`` in one LibreOffice run and save it as .xlsx in ``out_dir`` (same
    names: their stems must differ), every formula recalculated when ``recalc``, else with
    the values cached in the file. Returns the written files, in order. [timeout: s]"""
    return _convert(paths, out_dir, "xlsx", recalc=recalc, timeout=timeout)


def to_pdf(path: str | Path, *, timeout: float = 120,
           env: Mapping[str, str] | None = None) -> bytes:
    """The workbook at ``path`` printed to PDF by LibreOffice: every visible sheet's print
    area, every formula recalculated first (the pages show what the formulas compute, not
    only the values cached in the file). ``env``: variables added to LibreOffice's
    environment (``FONTCONFIG_FILE``: the fonts it may use). [timeout: s]"""
    with tempfile.TemporaryDirectory(prefix="costmodel-pdf-") as out:
        (pdf,) = _convert([path], out, "pdf", recalc=True, timeout=timeout, env=env)
        return pdf.read_bytes()


def _convert(paths: Sequence[str | Path], out_dir: str | Path, kind: str, *, recalc: bool,
             timeout: float, env: Mapping[str, str] | None = None) -> list[Path]:
    """Convert each of ``paths`` to ``kind`` (``xlsx``, ``pdf``) in ``out_dir`` in one
    LibreOffice run with a throw-away profile (``env`` added to its environment)."""
    exe = soffice()
    if exe is None:
        raise RecalcError("LibreOffice (soffice) is not installed")
    sources = [Path(p).resolve() for p in paths]
    if len({s.stem for s in sources}) != len(sources):
        raise ValueError("the files' names must differ: each is saved under its own name")
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    results = [out / f"{s.stem}.{kind}" for s in sources]
    for r in results:  # a file left by an earlier run is no proof of this one
        if r not in sources:
            r.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="costmodel-lo-") as profile:
        user = Path(profile) / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(
            _PROFILE.format(mode=0 if recalc else 1), encoding="utf-8")
        cmd = [exe, f"-env:UserInstallation={Path(profile).as_uri()}", "--headless",
               "--norestore", "--calc", "--convert-to", kind, "--outdir", str(out),
               *map(str, sources)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, **env} if env else None)
        except subprocess.TimeoutExpired as exc:
            raise RecalcError(f"LibreOffice took longer than {timeout:g} s") from exc
    missing = [r.name for r in results if not r.exists()]
    if done.returncode != 0 or missing:
        raise RecalcError(f"LibreOffice failed ({done.returncode}; not written: "
                          f"{', '.join(missing) or 'none'}): "
                          f"{(done.stderr or done.stdout).strip()[-500:]}")
    return results
