"""The Chargeback page (``/chargeback``): upload a month of usage records (CSV) and the fleet
file (TOML or JSON, its pools' scenarios inline), choose the tenant key and the idle rule,
and see each tenant's charge as a table and a chart, with the check that the charges and the
idle line add up to the fleet's cost to the cent; download the workbook and the FOCUS CSV.
The application layer's :func:`costmodel.app.chargeback.chargeback`, as ``costmodel
chargeback`` and ``POST /api/v1/chargeback`` answer it (a heavy request: its slot is held).
"""
from __future__ import annotations

import json
import tomllib

from flask import Response, render_template, request

from ..app.caps import chargeback_workbook_too_large
from ..app.chargeback import (
    IDLE_RULES,
    ChargebackRequest,
    chargeback,
    chargeback_workbook,
    focus_csv,
    usage_from_file,
)
from ..http.services import services
from ..model.errors import InputError, parse_nested
from .downloads import xlsx_response
from .errors import error_page
from .guard import computes
from .session import need
from .site import blueprint

__all__ = ["chargeback_page"]


def _fleet(data: bytes, name: str) -> dict:
    """An uploaded fleet file's table (TOML, or JSON by its name or its first character)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError([("fleet", "not UTF-8 text")]) from None
    try:
        if name.lower().endswith(".json") or text.lstrip().startswith("{"):
            parsed = parse_nested(json.loads, text, "fleet")
        else:
            parsed = parse_nested(tomllib.loads, text, "fleet")
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise InputError([("fleet", f"not TOML or JSON: {exc}")]) from None
    if not isinstance(parsed, dict):
        raise InputError([("fleet", "a fleet must be a table/object")])
    return parsed


def _page(status: int = 200, **values) -> tuple[str, int]:
    form = {"by": request.form.get("by", "tenant"),
            "idle": request.form.get("idle", "separate"),
            "period": request.form.get("period", "")}
    return render_template("web/chargeback.html", form=form, idle_rules=IDLE_RULES,
                           **values), status


@blueprint.get("/chargeback")
def chargeback_page():
    """The form."""
    need("read")
    return _page()


@blueprint.post("/chargeback")
@computes("POST", "/api/v1/chargeback")
def chargeback_post():
    """The ledger of the uploaded records: the page, or (``format``) the workbook or the
    FOCUS CSV."""
    need("read")
    usage, fleet = request.files.get("usage"), request.files.get("fleet")
    errors: dict[str, str] = {}
    if usage is None or not usage.filename:
        errors["usage"] = "choose a usage file (CSV) to upload"
    if fleet is None or not fleet.filename:
        errors["fleet"] = "choose the fleet file (TOML or JSON) to upload"
    if errors:
        return _page(422, errors=errors)
    try:
        records = usage_from_file(usage.read(), usage.filename, "usage")
        req = ChargebackRequest(_fleet(fleet.read(), fleet.filename), records,
                                period=request.form.get("period") or None,
                                by=request.form.get("by") or "tenant",
                                idle=request.form.get("idle") or "separate")
        with services().sessions(write=False) as session:
            ledger = chargeback(services().context(session), req)
    except InputError as exc:
        return _page(422, errors={p or "usage": m for p, m in exc.errors})
    kind = request.form.get("format", "html")
    if kind == "xlsx":
        why = chargeback_workbook_too_large(len(ledger.lines))
        if why is not None:
            return error_page(413, why, "The workbook would be too large")
        return xlsx_response(chargeback_workbook(ledger))
    if kind == "csv":
        return Response(focus_csv(ledger), mimetype="text/csv", headers={
            "Content-Disposition": 'attachment; filename="chargeback_focus.csv"',
            "Cache-Control": "no-store"})
    answer = ledger.to_json()
    top = max([t["charge"]["value"] for t in answer["tenants"]]
              + [answer["idle_line"]["value"], 0.01])
    return _page(answer=answer, top=top)
