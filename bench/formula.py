"""The cost formula written by hand in numpy: the benchmarks' baseline for the evaluator."""
from __future__ import annotations

import numpy as np


def _rack_power(x: dict, watts: np.ndarray) -> np.ndarray:
    """Power per accelerator at the rack boundary [W] on a chip power ``watts``."""
    na, nr = x["node_accelerators"], x["rack_nodes"]
    node = (na * watts + x["node_host_power"]) / x["node_psu_efficiency"]
    rack = (nr * node + x["rack_switch_power"] + x["rack_other_power"]) \
        / x["rack_power_delivery_efficiency"]
    return rack / (na * nr)


def _owning(x: dict) -> np.ndarray:
    """Capital, maintenance and hosting per accelerator-hour [USD/h]."""
    na, per_rack = x["node_accelerators"], x["node_accelerators"] * x["rack_nodes"]
    r, life = x["financing_cost_of_capital"], x["financing_life"]
    g = (1 + r) ** life
    crf = np.where(r == 0, 1 / life, r * g / (g - 1))
    capex = x["accelerator_price"] + x["node_price"] / na + x["rack_price"] / per_rack
    capital = (capex - x["financing_salvage"] * capex / g) * crf / 8760
    maintenance = x["financing_maintenance"] * capex / 8760
    hosting = x["facility_hosting"] * _rack_power(x, x["accelerator_rated_power"]) / 1e3 \
        * 12 / 8760
    return capital + maintenance + hosting


def _throughput(x: dict) -> np.ndarray:
    return x["operating_point_throughput_per_kw"] * x["operating_point_normalised_by"] / 1e3


def hand_written(x: dict, chip: str = "accelerator_measured_power") -> np.ndarray:
    """cost per Mtok [USD/Mtok], written directly from the README's conventions, for a
    facility boundary, owned hardware and per-kW throughput; ``chip`` names the input whose
    power the energy is drawn at (hosting is charged on rated power either way)."""
    power = _rack_power(x, x[chip]) * x["facility_pue"]
    u = x["utilisation"]
    energy = power * (u + (1 - u) * x["idle_power"]) * x["electricity_price"] / 1e3
    return (energy + _owning(x)) / (u * _throughput(x) * 3600) * 1e6


def hand_written_tariff(x: dict, chip: str = "accelerator_measured_power") -> np.ndarray:
    """cost per Mtok [USD/Mtok] on a one-season tariff by hour with a load shape: the energy
    is the sum over the day's hours of weight x power drawn x rate, the demand charge bills
    the busiest hour at the facility meter, the fixed charge is shared by one rack; the rest
    as :func:`hand_written` (facility boundary, owned hardware, per-kW throughput)."""
    power = _rack_power(x, x[chip]) * x["facility_pue"]  # facility boundary: the meter's
    weight, load = x["hour_weight"][0][:, None], x["load_hourly"][0][:, None]  # (24, 1)
    drawn = load + (1 - load) * x["idle_power"]  # (24, n): power drawn each hour, a fraction
    rate = x["electricity_tariff_rates"][0][:, None] * x["electricity_tariff_scale"] \
        + x["electricity_tariff_shift"]
    energy = power * (weight * drawn * rate).sum(axis=0) / 1e3
    demand = power * drawn.max(axis=0) * 15.0 * 12 / 8760 / 1e3  # 15 USD/kW-month, 12 bills
    fixed = x["electricity_tariff_fixed_charge"] * 12 / 8760 \
        / (x["node_accelerators"] * x["rack_nodes"])
    served = float((weight * load).sum())
    return (energy + demand + fixed + _owning(x)) / (served * _throughput(x) * 3600) * 1e6
