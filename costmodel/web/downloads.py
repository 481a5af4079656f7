"""What every page offers to take away: the workbook of what is on screen, the JSON the API
answers for the same request, and that request as a curl line (for people who automate it
next)."""
from __future__ import annotations

import json
import shlex
from typing import Any

from flask import Response, request

from ..app import WorkbookFile

__all__ = ["XLSX", "xlsx_response", "json_response", "curl_line", "api_base"]

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def xlsx_response(book: WorkbookFile) -> Response:
    """The workbook as an attachment named for what it holds."""
    return Response(book.content, mimetype=XLSX, headers={
        "Content-Disposition": f'attachment; filename="{book.filename}"',
        "Cache-Control": "no-store"})


def json_response(data: Any, filename: str) -> Response:
    """JSON as the API writes it (the app's JSON provider), offered as a file."""
    from flask import current_app
    return Response(current_app.json.dumps(data), mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="{filename}"'})


def api_base() -> str:
    """This server's address as the browser reached it (``http://127.0.0.1:8000``)."""
    return request.host_url.rstrip("/")


def curl_line(path: str, body: dict[str, Any], *, output: str | None = None) -> str:
    """``curl -X POST <this server><path> -H 'Content-Type: application/json' -d '<body>'``;
    a key header when reads need one; ``-o FILE`` for a binary answer."""
    from flask import current_app
    parts = ["curl", "-X", "POST", f"{api_base()}{path}",
             "-H", "Content-Type: application/json"]
    if not current_app.config.get("OPEN_READS"):
        parts += ["-H", "Authorization: Bearer $COSTMODEL_KEY"]
    parts += ["-d", json.dumps(body, separators=(",", ":"), ensure_ascii=False)]
    if output:
        parts += ["-o", output]
    # quoted for a POSIX shell; the key stays a variable for the shell to expand
    return " ".join(shlex.quote(p) if "$COSTMODEL_KEY" not in p else f'"{p}"' for p in parts)
