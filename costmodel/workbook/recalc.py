"""Recalculate a workbook with LibreOffice headless, so its formulas carry computed values.

LibreOffice recalculates an .xlsx on load only when its profile says so
(``OOXMLRecalcMode`` = 0 under Calc/Formula/Load); without it, the stale or missing cached
values stay. Each call uses its own throw-away profile, so runs do not share state.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["soffice", "recalculate", "RecalcError"]

_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
           xmlns:xs="http://www.w3.org/2001/XMLSchema"
           xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
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
    exe = soffice()
    if exe is None:
        raise RecalcError("LibreOffice (soffice) is not installed")
    src = Path(path).resolve()
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="costmodel-lo-") as profile:
        user = Path(profile) / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(_PROFILE, encoding="utf-8")
        cmd = [exe, f"-env:UserInstallation={Path(profile).as_uri()}", "--headless",
               "--norestore", "--calc", "--convert-to", "xlsx", "--outdir", str(out),
               str(src)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise RecalcError(f"LibreOffice took longer than {timeout:g} s") from exc
    result = out / (src.stem + ".xlsx")
    if done.returncode != 0 or not result.exists():
        raise RecalcError(f"LibreOffice failed ({done.returncode}): "
                          f"{(done.stderr or done.stdout).strip()[-500:]}")
    return result
