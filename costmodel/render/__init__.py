"""Renderings of results: the display rules (:mod:`.display`), terminal text (:mod:`.report`),
PDF one-pagers (:mod:`.onepage`), plots (:mod:`.frontier_plot`) and workbooks
(:mod:`.workbook`). They import no face (tests/test_layering.py)."""
