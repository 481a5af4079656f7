"""The fonts LibreOffice may print the workbooks in, for the print tests: a fontconfig file
for each case that lets LibreOffice see only the fonts named, so a case prints alike on any
machine, whatever fonts it has installed.

- ``liberation``: Liberation Sans, which has Arial's metrics (the workbooks name Arial and are
  laid out for it), beside DejaVu: what a machine with Debian's fonts-liberation prints
  (.ci/run installs it).
- ``dejavu``: DejaVu alone, Arial set in DejaVu Sans (a digit 14 % wider): what a fresh Debian
  without fonts-liberation prints. Liberation fonts are rejected besides, should LibreOffice
  bring its own.

Liberation Sans is taken from the folder ``$COSTMODEL_LIBERATION_FONTS`` where it is set (the
package unpacked without installing it: ``apt-get download fonts-liberation`` then
``dpkg-deb -x fonts-liberation_*.deb DIR``, and DIR/usr/share/fonts/truetype/liberation),
else from the system's fonts. Where neither has it, the ``liberation`` case is skipped, unless
``COSTMODEL_REQUIRE_PRINT`` is set (.ci/run sets it): then it fails.
"""
from __future__ import annotations

import os
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

__all__ = ["FONTS", "font_env", "REQUIRED"]

FONTS = ("liberation", "dejavu")
REQUIRED = bool(os.environ.get("COSTMODEL_REQUIRE_PRINT"))
_SYSTEM = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))

_CONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
{dirs}
  <cachedir>{cache}</cachedir>
  <!-- Arial, and any family not found, as a Debian machine sets them -->
  <alias binding="same"><family>Arial</family><prefer>{arial}</prefer></alias>
  <match target="pattern">
    <edit name="family" mode="append_last"><string>DejaVu Sans</string></edit>
  </match>
{reject}
</fontconfig>
"""
_REJECT = """  <selectfont><rejectfont><glob>*Liberation*</glob>
    <pattern><patelt name="family"><string>Liberation Sans</string></patelt></pattern>
  </rejectfont></selectfont>"""


def _folder_of(font: str, roots: tuple[Path, ...]) -> Path | None:
    for root in roots:
        if root.is_dir():
            found = next(root.rglob(font), None)
            if found is not None:
                return found.parent
    return None


def font_env(case: str, folder: Path) -> dict[str, str]:
    """LibreOffice's environment for ``case`` (one of :data:`FONTS`): its fontconfig file,
    written in ``folder``. Skips (or fails, where required) when the fonts are missing."""
    dejavu = _folder_of("DejaVuSans.ttf", _SYSTEM)
    dirs = [dejavu]
    if case == "liberation":
        given = os.environ.get("COSTMODEL_LIBERATION_FONTS")
        dirs.append(_folder_of("LiberationSans-Regular.ttf",
                               (Path(given),) if given else _SYSTEM))
    if None in dirs:
        missing = "DejaVu Sans" if dejavu is None else "Liberation Sans"
        message = f"{missing} is not installed: the print in {case} cannot be checked"
        if REQUIRED:
            pytest.fail(f"COSTMODEL_REQUIRE_PRINT is set but {message}")
        pytest.skip(message)
    arial = "Liberation Sans" if case == "liberation" else "DejaVu Sans"
    config = folder / f"fonts-{case}.conf"
    config.write_text(_CONFIG.format(
        dirs="\n".join(f"  <dir>{escape(str(d))}</dir>" for d in dirs),
        cache=escape(str(folder / f"cache-{case}")),
        arial=f"<family>{arial}</family>",
        reject=_REJECT if case == "dejavu" else ""), encoding="utf-8")
    return {"FONTCONFIG_FILE": str(config)}
