"""The base scenario an analysis moves away from: its inputs, the output step, and which
inputs that output reads.

A key whose value the output does not read in this scenario (``accelerator.measured_power``
on the rated basis, ``electricity.carbon_intensity`` for a cost) is an error when named.
Where a per-kW throughput's ``normalised_by`` was left to its default
(:data:`~costmodel.model.inputs.NORMALISED_BY_DEFAULT`, the accelerator's rated power), moving the
rated power moves it too, as re-pricing the scenario with ``--set accelerator.rated_power=...``
would.
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from ...model.declaration import ChosenNames, fold
from ...model.evaluate import Evaluator
from ...model.inputs import NORMALISED_BY_DEFAULT, Scenario
from ...model.steps import MODEL
from .inputs import VARS, SensitivityError, Var

__all__ = ["DEFAULT_OUTPUT", "Base", "live_inputs"]

DEFAULT_OUTPUT = "cost_per_mtok_total"


def _output(name: str) -> tuple[str, str]:
    """An output step by name (``cost_per_mtok_total``) or dotted (``cost_per_mtok.total``)
    -> (step name, unit)."""
    name = name.strip()
    if name in MODEL.steps and not MODEL.steps[name].axes:
        return name, MODEL.steps[name].unit
    for s in MODEL.steps.values():
        if s.group and f"{s.group}.{s.member}" == name:
            return s.name, s.unit
    close = difflib.get_close_matches(name, MODEL.scalar_steps, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise SensitivityError("output", f"unknown output {name!r}{hint} (see `costmodel steps`)")


@cache
def _evaluator(output: str) -> Evaluator:
    return Evaluator(MODEL, outputs=[output])


class _Live(ChosenNames):
    """Inputs an expression reads given the scenario's categorical choices (the options
    chosen; both sides of a ``where``: moving an input may change the side taken). A step
    read by name contributes what its own expression reads, folded once."""

    def __init__(self, levels: Mapping[str, Any]):
        super().__init__(levels)
        self.steps: dict[str, frozenset] = {}

    def name(self, id: str) -> frozenset:
        if id in MODEL.inputs:
            return frozenset((id,))
        if id in MODEL.steps:
            if id not in self.steps:
                self.steps[id] = fold(MODEL.steps[id].tree, self)
            return self.steps[id]
        return frozenset()  # a constant or an enum


def live_inputs(output: str, base: Mapping[str, Any]) -> set[str]:
    """Names of the inputs step ``output`` reads with the enum levels in ``base``."""
    return set(_Live(base).name(output))


class Base:
    """The base scenario's inputs [canonical units], its output, and what may move."""

    def __init__(self, scenario: Scenario, output: str):
        self.output, self.unit = _output(output)
        self.inputs = scenario.to_inputs()
        self.live = live_inputs(self.output, self.inputs)
        # input name -> inputs that move with it (a defaulted normalising power)
        self.links: dict[str, tuple[str, ...]] = {}
        if scenario.normalised_by_defaulted:
            self.links[VARS[NORMALISED_BY_DEFAULT].name] = (
                VARS["operating_point.normalised_by"].name,)
        self.value = float(_evaluator(self.output)(self.inputs)[self.output])

    def check_live(self, var: Var) -> None:
        if var.name not in self.live:
            raise SensitivityError(var.key, f"does not affect {self.output} in this scenario")

    def base_of(self, var: Var) -> float:
        return float(self.inputs[var.name])

    def env(self, varied: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """The base inputs with ``varied`` (input name -> array) and their links."""
        env = dict(self.inputs)
        for name, values in varied.items():
            for linked in self.links.get(name, ()):
                if linked not in varied:
                    env[linked] = values
        env.update(varied)
        return env

    def evaluate(self, varied: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        """The output [unit] for ``n`` rows of varied inputs, in one evaluator call."""
        out = _evaluator(self.output)(self.env(varied))[self.output]
        return np.broadcast_to(np.asarray(out, dtype=float), (n,))
