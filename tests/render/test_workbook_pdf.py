"""Workbooks printed as a finance team sends them: LibreOffice prints each sample workbook to
PDF, every formula recalculated first (:func:`costmodel.render.workbook.recalc.to_pdf`).

Each sheet prints on at most the pages docs/finance.md states for it (the table is read
from the page, so the page and the files cannot disagree), no error value prints, no row
prints over the next, no text is cut, the sources print beside the inputs they support,
labels lead with words, and a comparison's first page answers the comparison.

Every check runs twice: in Liberation Sans (Arial's metrics, what the workbooks are laid out
for) and in DejaVu Sans (what LibreOffice sets Arial in where neither is installed, as on a
fresh Debian), each with only its fonts visible (``print_support``), on any machine.

Skipped where LibreOffice is not installed, unless COSTMODEL_REQUIRE_LIBREOFFICE is set (as
.ci/run sets it): then a missing LibreOffice fails the run instead of hiding the check.
Where Liberation Sans or pdftotext (poppler-utils: the words' places) are missing, their
checks are skipped, unless COSTMODEL_REQUIRE_PRINT is set (as .ci/run sets it).
"""
from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import CURVE_SCENARIOS, ROOT, SCENARIOS, require_libreoffice, workbook_systems
from print_support import FONTS, REQUIRED, font_env

from costmodel.render.workbook.export import build_workbook, save_workbook
from costmodel.render.workbook.recalc import to_pdf

pytestmark = pytest.mark.libreoffice

require_libreoffice()

pypdf = pytest.importorskip("pypdf", reason="pypdf (the test extra) reads the printed pages")

# the samples of docs/finance.md, built as `costmodel workbook` builds them
NEGOTIATION = ROOT / "fixtures" / "quotes" / "negotiation.toml"
SAMPLES = {
    "sample-tco": ([SCENARIOS / "sample-tco.toml"], False),
    "sample-tou": ([SCENARIOS / "sample-tou.toml"], False),
    "matched-comparison": (CURVE_SCENARIOS, True),
    # a decision for the file's demand (`costmodel quotes decide ... --workbook`)
    "decision": ([NEGOTIATION, *(SCENARIOS / f"curve-gpt-oss-120b-{hw}.toml"
                                 for hw in ("b200", "h100"))], "decision"),
}
FIRST_PAGE = {"decision": "Decision"}  # the answer, on page one (else the Summary)
# what a spreadsheet prints for an error: Excel's values and LibreOffice's Err:5xx
ERRORS = ("#N/A", "#VALUE!", "#REF!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!", "Err:")
_FOOTER = re.compile(r"(\w+) Page (\d+) of (\d+)")


def stated_pages() -> dict[str, dict[str, int]]:
    """The page counts docs/finance.md states: sample -> sheet (and "All") -> pages."""
    text = (ROOT / "docs" / "finance.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = next(i for i, line in enumerate(lines) if line.startswith("| Sheet |"))
    columns = [c.strip() for c in lines[header].strip("|").split("|")]
    out: dict[str, dict[str, int]] = {name: {} for name in columns[2:]}
    for line in lines[header + 2:]:
        cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
        if len(cells) != len(columns):
            break
        for name, count in zip(columns[2:], cells[2:], strict=True):
            if count.isdigit():
                out[name][cells[0]] = int(count)
    return out


def _decision(files: list[Path]) -> tuple[list, bytes]:
    """The decision's own builds and its workbook, as ``quotes decide --workbook`` writes it."""
    import tomllib

    from costmodel import app
    from costmodel.cli import CONTEXT, specs_for
    from costmodel.decisions.demand import validate_demand
    from costmodel.render.workbook.export import WorkbookSystem
    from costmodel.sources.quote_file import read_quotes
    quotes, *scenarios = files
    req = app.DecisionRequest(read_quotes(str(quotes)),
                              specs_for(tuple(str(f) for f in scenarios), ()),
                              validate_demand(tomllib.loads(quotes.read_text())["demand"]))
    answer = app.quotes_decide(CONTEXT, req)
    return ([WorkbookSystem(p.result, p.curve) for p in answer.systems],
            app.render_decision_workbook(answer).content)


@pytest.fixture(scope="module")
def books(tmp_path_factory) -> dict[str, tuple[Path, list]]:
    """Each sample's workbook and its systems."""
    folder = tmp_path_factory.mktemp("books")
    out = {}
    for sample, (files, matched) in SAMPLES.items():
        if matched == "decision":
            systems, book = _decision(files)
            path = folder / f"{sample}.xlsx"
            path.write_bytes(book)
        else:
            systems, _ = workbook_systems(files, matched=matched)
            path = save_workbook(build_workbook(systems), folder / f"{sample}.xlsx")
        out[sample] = (path, systems)
    return out


@pytest.fixture(scope="module", params=FONTS)
def printed(request, books, tmp_path_factory
            ) -> dict[str, tuple[list[tuple[str, str]], list, Path]]:
    """Each sample printed in one font: its pages as (sheet, text), and its systems (the PDF
    as <sample>.pdf)."""
    folder = tmp_path_factory.mktemp(f"pdf-{request.param}")
    env = font_env(request.param, folder)
    out = {}
    for sample, (path, systems) in books.items():
        pdf = to_pdf(path, env=env)
        (folder / f"{sample}.pdf").write_bytes(pdf)
        reader = pypdf.PdfReader(io.BytesIO(pdf))
        fonts = {str(f["/BaseFont"]) for page in reader.pages
                 for f in page["/Resources"]["/Font"].values()}
        # the case prints in its font: a test in the wrong one would prove nothing
        text = {"liberation": "LiberationSans", "dejavu": "DejaVuSans"}[request.param]
        assert any(text in f for f in fonts), (sample, request.param, fonts)
        assert request.param == "liberation" or not any("Liberation" in f for f in fonts)
        pages = []
        for k, page in enumerate(reader.pages, 1):
            text = page.extract_text()
            footer = _FOOTER.search(text)
            assert footer and int(footer[2]) == k and int(footer[3]) == len(reader.pages), \
                (sample, k, text[:200])
            pages.append((footer[1], text))
        out[sample] = (pages, systems, folder / f"{sample}.pdf")
    return out


def _sheet_text(pages: list[tuple[str, str]], sheet: str) -> str:
    return "\n".join(text for title, text in pages if title == sheet)


def _squeezed(text: str) -> str:
    """Text without its whitespace: a wrapped cell reads as it was written."""
    return "".join(text.split())


def test_the_docs_state_a_count_for_every_sample_and_sheet():
    stated = stated_pages()
    assert set(stated) == set(SAMPLES)
    for sample, counts in stated.items():
        assert {"Summary", "Cover", "Inputs", "Calculations", "Results", "Sources",
                "All"} <= set(counts), sample
        assert sum(v for k, v in counts.items() if k != "All") == counts["All"], sample


@pytest.mark.parametrize("sample", list(SAMPLES))
def test_every_sheet_prints_within_the_pages_the_docs_state(printed, sample):
    pages, _, _ = printed[sample]
    stated = stated_pages()[sample]
    assert len(pages) <= stated["All"], [title for title, _ in pages]
    counted: dict[str, int] = {}
    for title, _ in pages:
        counted[title] = counted.get(title, 0) + 1
    assert set(counted) == set(stated) - {"All"}, counted  # every sheet, no other
    for title, n in counted.items():
        assert n <= stated[title], (title, n, stated[title])
    first = FIRST_PAGE.get(sample, "Summary")  # the answer, on page one
    assert pages[0][0] == first and counted["Summary"] == 1


@pytest.mark.parametrize("sample", list(SAMPLES))
def test_no_error_value_prints(printed, sample):
    pages, _, _ = printed[sample]
    for title, text in pages:
        for error in ERRORS:
            assert error not in text, (sample, title, error)


@pytest.mark.parametrize("sample", list(SAMPLES))
def test_sources_print_beside_the_inputs(printed, sample):
    pages, systems, _ = printed[sample]
    inputs = _squeezed(_sheet_text(pages, "Inputs"))
    for s in systems:  # what each system's rated power and price were taken from
        for key in ("accelerator.rated_power", "accelerator.price", "electricity.price"):
            source = s.result.provenance.get(key)
            if source:
                assert _squeezed(source) in inputs, (sample, key, source)


@pytest.mark.parametrize("sample", list(SAMPLES))
def test_labels_lead_with_words_and_keep_the_names(printed, sample):
    pages, _, _ = printed[sample]
    inputs = _sheet_text(pages, "Inputs")
    assert "Rated power of one accelerator package (TDP)" in inputs
    assert "accelerator_rated_power" in inputs
    calculations = _squeezed(_sheet_text(pages, "Calculations"))
    assert _squeezed("Total cost per million tokens") in calculations
    assert _squeezed("cost_per_mtok_total = cost_per_hour / tokens_per_hour * "
                     "tokens_per_mtok") in calculations


def test_unused_inputs_print_as_unused(printed):
    pages, _, _ = printed["sample-tco"]
    inputs = _sheet_text(pages, "Inputs")
    assert "Not used in this scenario" in inputs
    assert "not used in this scenario" in inputs  # beside each such input
    # the rental price is not used by owned accelerators: its row says so, without a value
    row = next(line for line in inputs.splitlines() if "accelerator_hourly_price" in line)
    assert "not used in this scenario" in row and not re.search(r"\d", row), row


def test_the_comparisons_first_page_answers_the_comparison(printed):
    pages, systems, _ = printed["matched-comparison"]
    title, first = pages[0]
    assert title == "Summary"
    assert "Ratios to system 1" in first
    costs = [s.result.values["cost_per_mtok_total"] for s in systems]
    for cost in costs:  # each system's cost per million tokens over the first's
        assert f"{cost / costs[0]:.2f}\u00d7" in first, (cost / costs[0], first)


def test_the_first_page_answers_in_the_scenarios_currency(printed):
    """sample-tou states EUR at 0.92 EUR/USD: page one answers in EUR/Mtok with the rate,
    its date and source; sample-tco (no [money]) in USD, with no rate."""
    pages, systems, _ = printed["sample-tou"]
    first = pages[0][1]
    eur = systems[0].result.values["cost_per_mtok_total"] * 0.92  # 0.1709 USD/Mtok
    assert f"Cost per million tokens EUR/Mtok {eur:.4f}" in first, first[:400]
    assert "Exchange rate (EUR per USD) EUR/USD 0.9200" in first
    assert "2026-11-30" in first and "USD/Mtok" not in first
    usd = printed["sample-tco"][0][0][1]
    assert "Cost per million tokens USD/Mtok" in usd and "Exchange rate" not in usd


_WORD = re.compile(r'xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<')


@pytest.mark.parametrize("sample", list(SAMPLES))
def test_no_row_prints_over_the_next(printed, sample):
    """Every row is as tall as its wrapped text: no word prints over another (a row too low
    for its lines runs into the next). Words set upright only: a chart's vertical axis
    title is set across the lines beside it."""
    for k, words in enumerate(_words(printed[sample][2]), 1):
        upright = [w for w in words if w[2] - w[0] >= 0.8 * (w[3] - w[1])]
        for i, (x0, y0, x1, y1, w) in enumerate(upright):
            for a0, b0, a1, b1, v in upright[i + 1:]:
                overlap = min(x1, a1) - max(x0, a0), min(y1, b1) - max(y0, b0)
                assert overlap[0] <= 1.5 or overlap[1] <= 2.5, (sample, k, w, v)


def _words(pdf: Path) -> list[list[tuple[float, float, float, float, str]]]:
    """Each page's words, with their boxes (x0, y0, x1, y1) [points from the top left]."""
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        message = "pdftotext (poppler-utils) is not installed: the words' places unread"
        if REQUIRED:
            pytest.fail(f"COSTMODEL_REQUIRE_PRINT is set but {message}")
        pytest.skip(message)
    boxes = subprocess.run([pdftotext, "-bbox", str(pdf), "-"],
                           capture_output=True, text=True, check=True).stdout
    return [[(float(a), float(b), float(c), float(d), w) for a, b, c, d, w in _WORD.findall(p)]
            for p in boxes.split("<page ")[1:]]


def test_the_tariff_prints_a_day_a_page_across_with_its_titles_whole(printed):
    """Each of the Tariff's pages holds a whole day's hours (00 to 23, or a weekend day's),
    the names column repeated on its left; no text runs out of that column (it would print
    cut beside the hours of a later day); the titles and each block's line print whole
    on each day's pages."""
    pages, _, pdf = printed["sample-tou"]
    words = _words(pdf)
    tariff = [(k, text) for k, (title, text) in enumerate(pages) if title == "Tariff"]
    days = {"weekday": 0, "weekend": 0}
    first: dict[str, int] = {}  # each day's first page
    for k, _ in tariff:
        def line(word, k=k):  # the words on the line of ``word``, left to right
            return sorted(w for w in words[k] if abs(w[1] - word[1]) < 1 and w is not word)
        # the header row: "hour", then the hours ("hour" also ends a system's title)
        header = next(line(w) for w in words[k] if w[4] == "hour" and line(w)
                      and line(w)[0][4] in ("00", "we") and line(w)[0][0] > w[0])
        hours = [w[4] for w in header]
        weekend = hours[0] == "we"
        assert hours == ([x for h in range(24) for x in ("we", f"{h:02d}")] if weekend else
                         [f"{h:02d}" for h in range(24)]), (k, hours)
        day = "weekend" if weekend else "weekday"
        days[day] += 1
        first.setdefault(day, k)
        edge = header[0][0]  # the names column ends where the first hour's header starts
        for x0, _, x1, _, w in words[k]:
            assert x0 >= edge - 1 or x1 <= edge + 1, (k, w, x0, x1, edge)
    assert days["weekday"] == days["weekend"] >= 1, days
    for k in first.values():  # each day's first page carries the titles whole
        text = pages[k][1]
        flat = _squeezed(text)
        assert _squeezed("Tariff and load by hour: change the blue cells and every figure "
                         "recomputes") in flat, (k, text[:300])
        assert _squeezed("electricity_tariff_rates: energy rate by month and hour") in flat


def test_to_pdf_refuses_a_missing_file(tmp_path):
    from costmodel.render.workbook.recalc import RecalcError
    with pytest.raises(RecalcError):
        to_pdf(tmp_path / "missing.xlsx")


def test_docs_name_the_samples_as_the_cli_writes_them():
    text = (ROOT / "docs" / "finance.md").read_text(encoding="utf-8")
    for sample, (files, _) in SAMPLES.items():
        assert f"out/{sample}.xlsx" in text, sample
        assert all(Path(f).name in text for f in files), sample
