"""Sensitivity and uncertainty: tornado, two-input grids and Monte Carlo over the declared
calculation.

Every analysis starts from a validated scenario's canonical inputs
(:meth:`Scenario.to_inputs`), moves the named inputs, and runs the chosen output step (default
``cost_per_mtok_total``) through ONE vectorized :class:`~costmodel.model.evaluate.Evaluator` call
(Monte Carlo: one call per chunk of :data:`CHUNK_SIZE` draws). Inputs are named by their dotted
scenario key (``electricity.price``); values are quantities in any unit of the input's
dimension (``"0.05 USD/kWh"``, ``"8.71 cent/kWh"``, ``0.7`` or ``"70 %"`` for fractions) and
are converted once to the input's canonical unit.

One idea per module:

- :mod:`.inputs`: the inputs that can move and their valid ranges;
- :mod:`.base`: the base scenario, the output, and the inputs it reads there;
- :mod:`.ranges`: the range and axis mini-language (``LOW..HIGH``, ``V1,V2``, ``LOW..HIGH:N``);
- :mod:`.distributions`: distributions that draw and know how much of them leaves a range;
- :mod:`.tornado`, :mod:`.grid`, :mod:`.montecarlo`: the three analyses.

Errors are :class:`SensitivityError` (an :class:`~costmodel.model.inputs.InputError`): one
readable line naming the key and what is wrong.
"""
from __future__ import annotations

from .base import DEFAULT_OUTPUT
from .distributions import (
    Distribution,
    LogNormal,
    Normal,
    Triangular,
    Uniform,
    parse_distribution,
)
from .grid import Grid, GridAxis, grid
from .inputs import SensitivityError
from .montecarlo import (
    CHUNK_SIZE,
    MAX_DRAWS,
    OUTSIDE_TOLERANCE,
    MonteCarlo,
    monte_carlo,
    sample_inputs,
)
from .ranges import parse_axis, parse_range
from .tornado import Tornado, TornadoBar, tornado

__all__ = [
    "DEFAULT_OUTPUT", "CHUNK_SIZE", "MAX_DRAWS", "OUTSIDE_TOLERANCE", "SensitivityError",
    "tornado", "Tornado", "TornadoBar",
    "grid", "Grid", "GridAxis",
    "monte_carlo", "sample_inputs", "MonteCarlo",
    "Distribution", "Uniform", "Triangular", "Normal", "LogNormal",
    "parse_distribution", "parse_range", "parse_axis",
]
