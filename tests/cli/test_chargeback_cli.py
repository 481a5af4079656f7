"""``costmodel chargeback``: the hand-derived cases on the command line (JSON and the table),
the FOCUS CSV adding up to the fleet's cost, and one readable error line for bad input."""
from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest
from chargeback_support import (
    RESERVED,
    RESERVED_CENTS,
    TWO_TENANTS,
    TWO_TENANTS_CENTS,
    cents_of,
    fleet_toml,
)
from click.testing import CliRunner

from costmodel.cli import main


def run(*args):
    return CliRunner().invoke(main, ["chargeback", *map(str, args)])


@pytest.mark.parametrize("idle", ["separate", "usage", "even"])
def test_the_two_tenant_month_on_the_command_line(tmp_path, idle):
    usage = tmp_path / "usage.csv"
    usage.write_text(TWO_TENANTS)
    r = run(usage, "--fleet", fleet_toml(tmp_path), "--idle", idle, "--json")
    assert r.exit_code == 0, r.output
    assert cents_of(json.loads(r.output)) == TWO_TENANTS_CENTS[idle]
    text = run(usage, "--fleet", fleet_toml(tmp_path), "--idle", idle)
    assert "=> fleet" in text.output and "2,880.00" in text.output
    assert "(conserved)" in text.output


def test_the_focus_csv_adds_up_to_the_fleet_cost(tmp_path):
    usage = tmp_path / "usage.csv"
    usage.write_text(RESERVED)
    out = tmp_path / "charges.csv"
    r = run(usage, "--fleet", fleet_toml(tmp_path, reserved_share=0.5), "--focus", out,
            "--json")
    assert r.exit_code == 0, r.output
    assert cents_of(json.loads(r.output)) == RESERVED_CENTS
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert sum(Decimal(x["BilledCost"]) for x in rows) == Decimal("2880.00")
    assert sum(Decimal(x["EffectiveCost"]) for x in rows) == Decimal("2880.00")
    r_rows = [x for x in rows if x["SubAccountId"] == "R"]
    assert [(x["ChargeCategory"], x["BilledCost"], x["ConsumedUnit"]) for x in r_rows] == \
        [("Purchase", "1440.00", "Accelerator-Hours")]
    assert float(r_rows[0]["ConsumedQuantity"]) == 0.5 * 2 * 720
    idle = [x for x in rows if x["SubAccountId"] == ""]
    assert [x["BilledCost"] for x in idle] == ["740.00"]
    assert json.loads(rows[0]["Tags"]) == {"pool": "p1", "tenant": "A", "token_kind": "input"}
    assert rows[0]["BillingPeriodStart"] == "2026-11-01T00:00:00Z"
    assert rows[0]["BillingPeriodEnd"] == "2026-12-01T00:00:00Z"


def test_bad_input_is_one_line_and_no_file(tmp_path):
    usage = tmp_path / "usage.csv"
    usage.write_text(TWO_TENANTS.replace("1000000000,0,1000000000", "1000000000,0,x"))
    out = tmp_path / "book.xlsx"
    r = run(usage, "--fleet", fleet_toml(tmp_path), "--workbook", out)
    assert r.exit_code == 2
    assert r.output.strip() == (f"costmodel: error: {usage} line 2, column output_tokens: "
                                f"cannot read 'x' as a number")
    assert not out.exists()
    usage.write_text(TWO_TENANTS)
    r = run(usage, "--fleet", fleet_toml(tmp_path), "--by", "team")
    assert r.exit_code == 2 and "--by: no record has the tenant key 'team'" in r.output
    r = run(usage, "--fleet", fleet_toml(tmp_path), "--period", "2027-01")
    assert r.exit_code == 2 and "--period: no usage record starts in 2027-01" in r.output
