"""The model: the declared calculation and everything it reads, pure (no IO, no web, database,
workbook or command-line library).

Units (:mod:`.units`), the declaration language (:mod:`.declaration`) and its evaluator
(:mod:`.evaluate`), the declared steps (:mod:`.steps`), the scenario's inputs (:mod:`.inputs`)
and load profiles (:mod:`.profile`), reference rates (:mod:`.rates`), the physics of benchmark
curves (:mod:`.curves`) and power (:mod:`.power`), the priced result (:mod:`.results`), the chain
that runs them (:mod:`.chain`) and the typed errors (:mod:`.errors`). It imports nothing above it
(tests/test_layering.py)."""
