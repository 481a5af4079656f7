"""Package data, not code: installed as ``costmodel.templates`` (see pyproject's package-dir)
and found through :mod:`costmodel.resources`. This file makes the folder a regular package,
which both a wheel and an editable install can import."""
