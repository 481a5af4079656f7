"""MkDocs hook: the methodology page's tables, generated from the declared calculation.

`<!-- declared-model -->` in docs/methodology.md is replaced, at every build, by the model's
inputs, categorical choices, constants and steps (name, formula, unit, description), read
from the declaration the engine evaluates, so the page cannot drift from the code.
"""
from costmodel.model.steps import MODEL  # the declaration; re-point here if the module moves

MARKER = "<!-- declared-model -->"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _per(axes: tuple[str, ...]) -> str:
    return f" (per {', '.join(axes)})" if axes else ""


def declared_model() -> str:
    steps = MODEL.steps.values()
    return "\n\n".join([
        f"### Steps\n\nThe {len(MODEL.steps)} steps, in the order they are evaluated (each may "
        "read inputs, choices, constants and the steps above it):",
        _table(("step", "formula", "unit", "what it is"),
               [(f"`{s.name}`", f"`{s.expression}`", f"`{s.unit}`{_per(s.axes)}", s.description)
                for s in steps]),
        f"### Inputs\n\nThe {len(MODEL.inputs)} numeric inputs, named like the scenario key "
        "with dots as underscores (optional ones may be absent: the steps that read them then "
        "give no value):",
        _table(("input", "scenario key", "unit", "what it is"),
               [(f"`{i.name}`", f"`{i.key}`",
                 f"`{i.unit}`{_per(i.axes)}" + (", optional" if i.optional else ""),
                 i.description) for i in MODEL.inputs.values()]),
        "### Choices\n\nCategorical inputs: `choose(choice, a, b, ...)` takes the option in "
        "the position of the choice's level, in the order listed here.",
        _table(("choice", "scenario key", "levels", "what it is"),
               [(f"`{e.name}`", f"`{e.key}`", ", ".join(f"`{v}`" for v in e.levels),
                 e.description) for e in MODEL.enums.values()]),
        "### Constants\n\nThe named conversion factors (no formula carries another number "
        "than 0 and 1):",
        _table(("constant", "value", "unit", "what it is"),
               [(f"`{c.name}`", f"{c.value:g}", f"`{c.unit}`", c.description)
                for c in MODEL.constants.values()]),
    ])


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, declared_model())
    return markdown
