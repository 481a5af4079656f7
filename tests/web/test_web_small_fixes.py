"""Small things a first visit meets (issue 37): the icon every browser asks for, and the curl
lines of pages over example scenarios read off curves, run as shown."""
from __future__ import annotations

import html
import re
import shlex
import struct
from urllib.parse import urlsplit

import pytest


def test_the_favicon_is_an_icon(web):
    r = web.get("/favicon.ico")
    assert r.status_code == 200
    assert r.mimetype in ("image/vnd.microsoft.icon", "image/x-icon")
    # an ICO file: reserved 0, type 1 (icon), one image, 32 x 32 pixels, a PNG inside
    reserved, kind, count = struct.unpack("<HHH", r.data[:6])
    assert (reserved, kind, count) == (0, 1, 1)
    assert r.data[6:8] == bytes([32, 32])
    assert r.data[22:30] == b"\x89PNG\r\n\x1a\n"


def _curl(page: str) -> list[str]:
    line = re.search(r'<pre id="curl-line"[^>]*>(.*?)</pre>', page, re.S)
    assert line, "no curl line"
    return shlex.split(html.unescape(line.group(1)))


def _run(web, argv: list[str]):
    """The curl command as shown, sent to the test app: its method, path, headers, body."""
    assert argv[:3] == ["curl", "-X", "POST"]
    url = urlsplit(argv[3])
    headers = dict(argv[i + 1].split(": ", 1) for i, a in enumerate(argv) if a == "-H")
    return web.post(url.path, data=argv[argv.index("-d") + 1].encode(), headers=headers)


@pytest.mark.parametrize("page", ["/task", "/compare?sys=fixture:curve-gpt-oss-120b-h100"
                                            "&sys=fixture:curve-gpt-oss-120b-b200"])
def test_a_curl_line_over_curves_names_no_file_and_runs_as_shown(web, page):
    text = web.get(page).get_data(as_text=True)
    argv = _curl(text)
    body = argv[argv.index("-d") + 1]
    assert ".csv" not in body and "../" not in body  # requests never name files
    assert '"curve":"h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"' in body
    r = _run(web, argv)
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()  # the Task page's systems, the Compare page's scenarios
    names = [s["scenario"] for s in answer.get("systems") or answer["scenarios"]]
    assert "gpt-oss-120b h100 (illustrative curve)" in names
