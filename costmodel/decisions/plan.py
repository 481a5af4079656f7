"""Capacity planning: the fleet a demand needs, or the fleet a power budget buys.

Pure arithmetic on the engine's own per-accelerator figures (a priced scenario's steps:
``throughput``, ``power_per_accelerator``, ``capex_per_accelerator``, ``cost_per_hour``) and
the scenario's inputs (accelerators per node, nodes per rack, utilisation); nothing here
re-derives a figure the declared calculation computes.

- Sized for a demand D [token/s, of the scenario's token kind]: accelerators =
  ceil(D / (throughput x utilisation x availability)), at least one, nodes = ceil(accelerators /
  accelerators per node), racks = ceil(nodes / nodes per rack). The fleet is rounded up, so
  the utilisation that results, D / (accelerators x throughput), is at most utilisation x
  availability (hours an accelerator is unavailable are hours it does not serve).
- Sized for a power budget B [W at the scenario's boundary]: the budget holds whole
  deployments (a node, or a rack, of k accelerators), each planned at its power at that
  boundary P x k plus a planning headroom h [fraction, 0 <= h < 1] above it:
  deployments = floor(B / (P x k x (1 + h))), accelerators = deployments x k. The division
  is exact (each figure taken as the decimal it prints as, as a fraction; nothing rounded
  on the way, not the deployment's power to 0.1 W before the headroom is added), then the
  floor; so the fleet's power at the boundary, deployments x P x k, is at most B / (1 + h).
  The same per gigawatt: B = 1 GW.
- Concurrent users at an interactivity I [token/s/user]: floor(accelerators x output
  throughput per accelerator / I).

A count within 10^-9 of a whole number is that number before it is rounded (float noise from
a unit conversion never buys an accelerator). Fleet totals are the accelerators times the
per-accelerator figures, whose node and rack overheads are each accelerator's equal share.
A month is 730 hours (8,760 / 12).
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..model.units import HOURS_PER_MONTH

__all__ = ["HOURS_PER_MONTH", "MAX_COUNT", "ROUNDING", "DEPLOYMENTS", "GIGAWATT",
           "PlanOverflow", "whole_up", "whole_down", "exact", "accelerators_for_demand",
           "planning_power", "deployments_for_budget", "nodes_for", "racks_for",
           "resulting_utilisation", "output_share", "output_throughput", "concurrent_users",
           "per_month"]

MAX_COUNT = 2 ** 53  # the largest count every JSON reader holds exactly (a float64 integer)
_DECIMALS = 9  # decimals kept before a count is rounded: 12.0000000001 accelerators is 12

DEPLOYMENTS = ("node", "rack")  # what a power budget holds whole
GIGAWATT = 1e9  # [W]

ROUNDING = [
    "accelerators for a demand, and their nodes and racks, are rounded up (a demand above "
    "zero needs at least one accelerator); concurrent users are rounded down",
    "a power budget holds whole deployments: floor(budget / (power per deployment at the "
    "boundary x (1 + headroom))), divided exactly (each figure as the decimal it prints as), "
    "then the floor; nothing is rounded on the way (the deployment's power is not rounded, to "
    "0.1 W or otherwise, before the headroom is added); its accelerators, nodes (and racks, "
    "for whole racks) are the whole deployments'; with whole nodes, racks are rounded up",
    "a count within 1e-9 of a whole number is that number before rounding",
    "fleet totals are accelerators x the per-accelerator figures (node and rack overheads "
    "shared equally, as in every figure)",
    "a month is 730 hours (8,760 / 12)",
]


class PlanOverflow(ValueError):
    """A count or figure beyond what the plan can state (more than :data:`MAX_COUNT`, or not
    finite): inputs too extreme for the calculation."""


def _count(x: float, what: str) -> float:
    """``x`` [count] checked finite and within :data:`MAX_COUNT`, noise below 1e-9 dropped."""
    if not math.isfinite(x):
        raise PlanOverflow(f"{what} is not finite: the inputs overflow the calculation")
    if x > MAX_COUNT:
        raise PlanOverflow(f"{what} would be more than {MAX_COUNT:,}: the inputs overflow "
                           f"the calculation")
    return round(x, _DECIMALS)


def whole_up(x: float, what: str = "the count") -> int:
    """ceil(x) [count], after dropping noise below 1e-9; :class:`PlanOverflow` when x is not
    finite or above :data:`MAX_COUNT`."""
    return math.ceil(_count(x, what))


def whole_down(x: float, what: str = "the count") -> int:
    """floor(x) [count], after dropping noise below 1e-9; :class:`PlanOverflow` as
    :func:`whole_up`."""
    return math.floor(_count(x, what))


def exact(x: float) -> Fraction:
    """``x`` [its unit] as the decimal it prints as (its shortest round-trip form), exactly:
    0.1 is 1/10, not the binary double nearest it; :class:`PlanOverflow` when not finite."""
    if not math.isfinite(x):
        raise PlanOverflow(f"{x} is not finite: the inputs overflow the calculation")
    return Fraction(repr(float(x)))


def accelerators_for_demand(demand: float, throughput: float, utilisation: float,
                            availability: float = 1.0) -> int:
    """Accelerators [count] that serve ``demand`` [token/s] on average when each serves
    ``throughput`` [token/s] for ``utilisation`` [fraction] of the hours it is available,
    ``availability`` [fraction] of all hours: ceil(D / (T x u x a)), and at least one: a
    demand above zero needs an accelerator to serve it, however small (a quotient below 1e-9
    would otherwise round to none, and the fleet's utilisation divide by zero)."""
    return max(1, whole_up(demand / (throughput * utilisation * availability),
                           "demand / (throughput x utilisation x availability)"))


def planning_power(power: float, per_deployment: int, headroom: float = 0.0) -> Fraction:
    """The power [W] one deployment of ``per_deployment`` [count] accelerators is planned at,
    each drawing ``power`` [W at the budget's boundary], with ``headroom`` [fraction] above
    it: P x k x (1 + h), exactly (:func:`exact`), nothing rounded."""
    return exact(power) * per_deployment * (1 + exact(headroom))


def deployments_for_budget(budget: float, planned: Fraction) -> int:
    """Whole deployments [count] a power ``budget`` [W] holds when each is planned at
    ``planned`` [W at the same boundary] (:func:`planning_power`): floor(B / planned), divided
    exactly; a quotient within 1e-9 of a whole number is that number (noise from a unit
    conversion or the steps' floating point never costs a deployment); :class:`PlanOverflow`
    beyond :data:`MAX_COUNT`."""
    what = "power budget / planning power per deployment"
    if planned <= 0:
        raise PlanOverflow(f"{what}: the planning power per deployment is not above zero")
    q = exact(budget) / planned
    if q > MAX_COUNT:
        raise PlanOverflow(f"{what} would be more than {MAX_COUNT:,}: the inputs overflow "
                           f"the calculation")
    near = round(q)
    if abs(q - near) <= Fraction(1, 10 ** _DECIMALS):
        return int(near)
    return math.floor(q)


def nodes_for(accelerators: int, per_node: float) -> int:
    """Nodes [count] holding ``accelerators`` [count], ``per_node`` [count] to a node."""
    return whole_up(accelerators / per_node, "accelerators / accelerators per node")


def racks_for(nodes: int, per_rack: float) -> int:
    """Racks [count] holding ``nodes`` [count], ``per_rack`` [count] to a rack."""
    return whole_up(nodes / per_rack, "nodes / nodes per rack")


def resulting_utilisation(demand: float, accelerators: int, throughput: float) -> float:
    """The fleet's utilisation [fraction of hours serving at the operating point]: ``demand``
    [token/s] over its capacity, ``accelerators`` [count] x ``throughput`` [token/s]."""
    return demand / (accelerators * throughput)


def output_share(token_kind: str, isl: float, osl: float) -> float:
    """Output tokens per token counted [dimensionless] for a request of ``isl`` input and
    ``osl`` output tokens [token]: OSL / (ISL + OSL) for mixed tokens, OSL / ISL for input
    tokens, 1 for output tokens."""
    return {"mixed": osl / (isl + osl), "input": osl / isl, "output": 1.0}[token_kind]


def output_throughput(throughput: float, token_kind: str, isl: float, osl: float) -> float:
    """Output token/s per accelerator [token/s] implied by a ``throughput`` [token/s] of
    ``token_kind`` tokens and the request shape (:func:`output_share`)."""
    return throughput * output_share(token_kind, isl, osl)


def concurrent_users(accelerators: int, output_per_accelerator: float,
                     interactivity: float | None) -> int | None:
    """Users [count] served at once at ``interactivity`` [token/s/user], each accelerator
    producing ``output_per_accelerator`` [output token/s]: floor(N x out / I); None when the
    interactivity is not known."""
    if interactivity is None:
        return None
    return whole_down(accelerators * output_per_accelerator / interactivity,
                      "accelerators x output throughput / interactivity")


def per_month(per_hour: float) -> float:
    """A rate per hour [X/h] as per month [X/month]: x 730 h."""
    return per_hour * HOURS_PER_MONTH
