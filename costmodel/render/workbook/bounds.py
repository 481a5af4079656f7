"""How much a decision workbook lays out, stated once (light: the API's document states it
without loading the workbook writer).

The service's other workbook bounds are the requests' (:mod:`costmodel.app.caps`): 12
scenarios, a task's steps x systems, a chargeback's lines.
"""
from __future__ import annotations

__all__ = ["MAX_OPTIONS", "MAX_TIERS"]

MAX_OPTIONS = 12  # ranked options a decision workbook lays out (each a column, and a Scan)
# tiers of one offer a decision workbook lays out: each is three input rows and a part of
# every one of the Scan's 14,000 bills (12 offers of 20 tiers: about 0.8 s of one core to
# decide and write; of 100, the most a quote may state: 6-30 s and 9 MB)
MAX_TIERS = 20
