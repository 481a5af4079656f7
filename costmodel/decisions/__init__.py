"""Decisions on top of the model, pure: quotes (:mod:`.quotes`), demand (:mod:`.demand`), the
decision between them (:mod:`.decision`), capacity planning (:mod:`.plan`) and sensitivity
(:mod:`.sensitivity`). They import the model only (tests/test_layering.py)."""
