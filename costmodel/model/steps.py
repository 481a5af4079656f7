"""The TCO calculation, declared once.

Everything the engine computes is a :class:`Step` below. The numpy evaluator
(:mod:`costmodel.model.evaluate`) runs these steps on arrays; the workbook renderer writes the same
expressions as spreadsheet formulas over defined names; the units are checked once when this
module is imported. Inputs are named like scenario keys with dots replaced by underscores.

Conventions (stated in every disclosure): a year is 8,760 h and 12 months; money is USD; power
at a boundary is per accelerator; hosting is charged on rated rack-boundary power; cost per
million tokens counts tokens of the operating point's token kind.
"""
from __future__ import annotations

from .declaration import Constant, Declaration, Enum, Input, Step
from .units import HOURS_PER_YEAR, MONTHS_PER_YEAR, SHOWN_CURRENCY

BOUNDARIES = ("chip", "node", "rack", "facility")
BASES = ("rated", "measured")
TOKEN_KINDS = ("mixed", "output", "input")
THROUGHPUT_BASES = ("per_accelerator", "per_kw")
COST_BASES = ("own", "rent")
RACK_POWER_BASES = ("built", "all_in")
PRICINGS = ("flat", "tariff")
LOAD_BASES = ("utilisation", "hourly")
SITE_BASES = ("rack", "given")
CARBON_BASES = ("flat", "hourly")
# which product carbon footprints a scenario states (none: no embodied emissions counted)
EMBODIED_BASES = ("none", "accelerator", "node", "both")


def _i(key: str, unit: str, description: str, optional: bool = False) -> Input:
    return Input(key.replace(".", "_"), unit, description, key, optional)


def _profile(name: str, key: str, unit: str, axes: tuple[str, ...],
             description: str) -> Input:
    """A profile input (:mod:`costmodel.model.profile` builds it from the tariff, the load shape
    and the calendar); absent (NaN) when the scenario has neither tariff nor load shape."""
    return Input(name, unit, description, key, True, axes)


INPUTS = [
    _i("accelerator.rated_power", "W", "rated power of one accelerator package (TDP)"),
    _i("accelerator.measured_power", "W", "measured sustained draw of one accelerator",
       optional=True),
    _i("accelerator.memory_bandwidth", "TB/s", "memory bandwidth of one accelerator",
       optional=True),
    _i("accelerator.price", "USD", "purchase price of one accelerator"),
    _i("accelerator.hourly_price", "USD/h", "all-in rental or owning price per "
       "accelerator-hour; replaces amortised capex and maintenance", optional=True),
    _i("accelerator.all_in_power", "W", "all-in power per accelerator at the rack boundary "
       "(the chip and its share of host, NICs and network), as a reference rate states it; "
       "replaces the node and rack build-up", optional=True),
    _i("node.accelerators", "dimensionless", "accelerators per node"),
    _i("node.host_power", "W", "node power besides accelerators: CPUs, memory, NICs, fans, "
       "storage"),
    _i("node.psu_efficiency", "dimensionless", "node power-supply efficiency"),
    _i("node.price", "USD", "node price excluding accelerators"),
    _i("rack.nodes", "dimensionless", "nodes per rack"),
    _i("rack.switch_power", "W", "switch power per rack"),
    _i("rack.other_power", "W", "other rack power (management, cooling doors, ...)"),
    _i("rack.power_delivery_efficiency", "dimensionless", "rack power-delivery efficiency"),
    _i("rack.price", "USD", "network and rack price per rack"),
    _i("facility.pue", "dimensionless", "power usage effectiveness of the facility"),
    _i("facility.hosting", "USD/kW/month", "hosting (colocation) price per kW of rated "
       "rack-boundary power and month"),
    _i("financing.life", "year", "economic life of the equipment"),
    _i("financing.cost_of_capital", "dimensionless", "annual cost of capital"),
    _i("financing.salvage", "dimensionless", "salvage value at end of life, fraction of capex"),
    _i("financing.maintenance", "dimensionless", "maintenance per year, fraction of capex"),
    _i("electricity.price", "USD/kWh", "electricity price (flat; none with a tariff)",
       optional=True),
    _i("electricity.tariff.fixed_charge", "USD/month", "the tariff's fixed charges per site "
       "and month", optional=True),
    _i("electricity.tariff.scale", "dimensionless", "factor on every energy rate of the "
       "tariff (1: as published)", optional=True),
    _i("electricity.tariff.shift", "USD/kWh", "amount added to every energy rate of the "
       "tariff (0: as published)", optional=True),
    _i("electricity.site_accelerators", "dimensionless", "accelerators on the site that the "
       "fixed charges are spread over", optional=True),
    _profile("electricity_tariff_rates", "electricity.tariff.hourly", "USD/kWh",
             ("month", "hour"), "energy rate by month and hour of the typical days (weekday "
                                "hours, then weekend hours)"),
    _profile("electricity_tariff_demand_charge", "electricity.tariff.demand_charge",
             "USD/kW/month", ("month",), "demand charge on the month's peak power at the "
                                         "facility boundary, by month"),
    _profile("electricity_tariff_demand_period_charge",
             "electricity.tariff.demand_periods.demand_charge", "USD/kW/month", ("period",),
             "demand charge of each demand period, on the busiest hour within the period's "
             "hours at the facility boundary, each month it is billed"),
    _profile("electricity_tariff_demand_period_hours", "electricity.tariff.demand_periods.hours",
             "dimensionless", ("period", "hour"), "1 where an hour of the typical days is in "
                                                  "the demand period, else 0"),
    _profile("electricity_tariff_demand_period_months",
             "electricity.tariff.demand_periods.months", "month/year", ("period",),
             "months a year each demand period is billed"),
    _profile("tariff_month_weight", "calendar.month_weight", "dimensionless", ("month",),
             "share of the year's days in each month of the tariff (days / 365)"),
    _profile("tariff_months_billed", "calendar.months_billed", "month/year", ("month",),
             "months a year each month of the tariff is billed"),
    _profile("hour_weight", "calendar.hour_weight", "dimensionless", ("hour",),
             "share of the year's hours in each hour of the typical days (weekdays 5/7, "
             "weekend days 2/7, over 24 hours)"),
    _profile("load_hourly", "load.hourly", "dimensionless", ("hour",),
             "fraction of each hour of the typical days spent serving at the operating point"),
    _i("electricity.carbon_intensity", "gCO2e/kWh", "location-based grid emission factor: "
       "the annual average of the grid the power is drawn from", optional=True),
    _profile("electricity_carbon_hourly", "electricity.carbon_hourly", "gCO2e/kWh", ("hour",),
             "location-based grid emission factor in each hour of the typical days"),
    _i("electricity.market_carbon_intensity", "gCO2e/kWh", "market-based emission factor: "
       "a supplier's or a contract's stated factor, or the residual mix", optional=True),
    _profile("electricity_market_carbon_hourly", "electricity.market_carbon_hourly",
             "gCO2e/kWh", ("hour",), "market-based emission factor in each hour of the "
                                     "typical days"),
    _i("accelerator.embodied", "gCO2e", "embodied emissions of one accelerator: its product "
       "carbon footprint (manufacture and transport, cradle to gate)", optional=True),
    _i("node.embodied", "gCO2e", "embodied emissions of one node without its accelerators: "
       "its product carbon footprint", optional=True),
    _i("money.rate", f"{SHOWN_CURRENCY}/USD", "units of the currency results are shown in, "
       "per USD (1 for USD; a stated, dated exchange rate otherwise)"),
    _i("utilisation", "dimensionless", "fraction of hours serving at the operating point"),
    _i("idle_power", "dimensionless", "fraction of boundary power drawn while idle"),
    _i("operating_point.throughput", "token/s", "throughput per accelerator", optional=True),
    _i("operating_point.throughput_per_kw", "token/s/kW", "published throughput per kW",
       optional=True),
    _i("operating_point.normalised_by", "W", "power per accelerator the per-kW figure was "
       "divided by", optional=True),
    _i("workload.isl", "token", "input sequence length (tokens per request)"),
    _i("workload.osl", "token", "output sequence length (tokens per request)"),
    _i("pricing.gross_margin", "dimensionless", "target gross margin on price"),
    _i("pricing.output_weight", "dimensionless", "price of an output token in input tokens "
       "(allocation rule for the input/output split)"),
]

ENUMS = [
    Enum("power_boundary", BOUNDARIES, "where power is metered", "power.boundary"),
    Enum("power_basis", BASES, "rated (datasheet TDP) or measured accelerator power",
         "power.basis"),
    Enum("operating_point_token_kind", TOKEN_KINDS, "which tokens the throughput counts",
         "operating_point.token_kind"),
    Enum("operating_point_throughput_basis", THROUGHPUT_BASES,
         "throughput given per accelerator, or per kW with its normalising power",
         "operating_point.throughput_basis"),
    Enum("accelerator_cost_basis", COST_BASES,
         "own (amortised capex + maintenance) or rent (hourly price)",
         "accelerator.cost_basis"),
    Enum("electricity_pricing", PRICINGS, "a flat price per kWh, or a tariff (rates by "
         "hour, demand and fixed charges)", "electricity.pricing"),
    Enum("load_basis", LOAD_BASES, "a utilisation spread evenly over every hour, or a load "
         "shape by hour", "load_basis"),
    Enum("electricity_site_basis", SITE_BASES, "the site the fixed charges are spread over: "
         "one rack, or a given number of accelerators", "electricity.site_basis"),
    Enum("accelerator_rack_power_basis", RACK_POWER_BASES,
         "rack-boundary power built up from chip, node and rack (built), or the accelerator's "
         "all-in power (all_in)", "accelerator.rack_power_basis"),
    Enum("electricity_carbon_basis", CARBON_BASES, "the location-based factor: one annual "
         "average (flat), or a factor by hour weighed by the power drawn in each hour",
         "electricity.carbon_basis"),
    Enum("electricity_market_carbon_basis", CARBON_BASES, "the market-based factor: one "
         "annual figure (flat), or a factor by hour", "electricity.market_carbon_basis"),
    Enum("embodied_basis", EMBODIED_BASES, "the product carbon footprints given: none, the "
         "accelerator's, the node's, or both", "embodied_basis"),
]

CONSTANTS = [
    Constant("seconds_per_hour", 3600.0, "s/h", "seconds in an hour"),
    Constant("hours_per_year", HOURS_PER_YEAR, "h/year", "hours in a year (365 days)"),
    Constant("months_per_year", MONTHS_PER_YEAR, "month/year", "months in a year"),
    Constant("one_year", 1.0, "year", "length of the period that annual rates refer to"),
    Constant("watts_per_kilowatt", 1000.0, "W/kW", "watts in a kilowatt"),
    Constant("tokens_per_mtok", 1e6, "token/Mtok", "tokens in a million tokens"),
    Constant("gigabytes_per_terabyte", 1000.0, "GB/TB", "gigabytes in a terabyte"),
]


def _boundary_chain(suffix: str, chip: str) -> list[Step]:
    """Node and rack power per accelerator built on a chip power; used for the chosen basis
    and again for rated power (which hosting is charged on)."""
    label = " (rated basis)" if suffix else ""
    return [
        Step(f"node_wall_power{suffix}", "W",
             f"(node_accelerators * {chip} + node_host_power) / node_psu_efficiency",
             f"wall power of one node{label}"),
        Step(f"rack_wall_power{suffix}", "W",
             f"(rack_nodes * node_wall_power{suffix} + rack_switch_power + rack_other_power)"
             f" / rack_power_delivery_efficiency", f"power of one rack at its feed{label}"),
        Step(f"power_node{suffix}", "W", f"node_wall_power{suffix} / node_accelerators",
             f"power per accelerator at the node boundary{label}"),
        Step(f"power_rack{suffix}", "W",
             f"choose(accelerator_rack_power_basis, rack_wall_power{suffix} / "
             f"accelerators_per_rack, accelerator_all_in_power)",
             f"power per accelerator at the rack boundary{label}: the rack's share, or the "
             f"all-in power"),
    ]


# the embodied emissions per accelerator-hour as the totals count them: 0 when no product
# carbon footprint is given (the totals are then the operational emissions alone)
_EMBODIED_COUNTED = ("choose(embodied_basis, 0, embodied_per_hour, embodied_per_hour, "
                     "embodied_per_hour)")


def _per_mtok(name: str, group: str, member: str, per_hour: str, unit: str = "USD/Mtok",
              description: str = "") -> Step:
    return Step(name, unit, f"{per_hour} / tokens_per_hour * tokens_per_mtok", description,
                group, member)


STEPS = [
    # -- operating point -------------------------------------------------------------
    Step("throughput", "token/s",
         "choose(operating_point_throughput_basis, operating_point_throughput, "
         "operating_point_throughput_per_kw * operating_point_normalised_by"
         " / watts_per_kilowatt)",
         "throughput per accelerator at the operating point"),
    # -- power at the boundary ---------------------------------------------------------
    Step("accelerators_per_rack", "dimensionless", "node_accelerators * rack_nodes",
         "accelerators in one rack"),
    Step("power_chip", "W",
         "choose(power_basis, accelerator_rated_power, accelerator_measured_power)",
         "power per accelerator at the chip boundary, on the chosen basis"),
    *_boundary_chain("", "power_chip"),
    Step("power_facility", "W", "power_rack * facility_pue",
         "power per accelerator at the facility meter"),
    Step("power_per_accelerator", "W",
         "choose(power_boundary, power_chip, power_node, power_rack, power_facility)",
         "power per accelerator at the chosen boundary and basis"),
    *_boundary_chain("_rated", "accelerator_rated_power"),
    # -- efficiency ----------------------------------------------------------------------
    Step("throughput_per_kw", "token/s/kW",
         "throughput / power_per_accelerator * watts_per_kilowatt",
         "throughput per kW at the chosen boundary and basis"),
    Step("tokens_per_kwh", "token/kWh", "throughput_per_kw * seconds_per_hour",
         "tokens per kWh at the chosen boundary and basis"),
    Step("joules_per_token", "J/token", "power_per_accelerator / throughput",
         "energy per token at the chosen boundary and basis"),
    Step("bandwidth_per_watt", "GB/s/W",
         "accelerator_memory_bandwidth / power_per_accelerator * gigabytes_per_terabyte",
         "memory bandwidth per watt at the chosen boundary and basis"),
    # -- hourly costs, per accelerator ----------------------------------------------------
    Step("load_by_hour", "dimensionless", "choose(load_basis, utilisation, load_hourly)",
         "fraction of each hour of the typical days spent serving at the operating point"),
    Step("utilisation_served", "dimensionless",
         "choose(load_basis, utilisation, sum_hour(hour_weight * load_hourly))",
         "fraction of all hours serving at the operating point (the load shape's mean)"),
    Step("load_factor_by_hour", "dimensionless",
         "load_by_hour + (1 - load_by_hour) * idle_power",
         "average power in each hour as a fraction of operating-point power"),
    Step("load_factor", "dimensionless",
         "choose(load_basis, utilisation + (1 - utilisation) * idle_power, "
         "sum_hour(hour_weight * load_factor_by_hour))",
         "average power as a fraction of operating-point power"),
    Step("peak_load_factor", "dimensionless",
         "choose(load_basis, load_factor, max_hour(load_factor_by_hour))",
         "power in the busiest hour as a fraction of operating-point power"),
    Step("demand_period_load_factor", "dimensionless",
         "electricity_tariff_demand_period_hours * load_factor_by_hour",
         "power in each hour of each demand period as a fraction of operating-point power "
         "(0 in the hours outside the period)"),
    Step("demand_period_peak_load_factor", "dimensionless",
         "max_hour(demand_period_load_factor)",
         "power in the busiest hour of each demand period as a fraction of operating-point "
         "power"),
    Step("average_power", "W", "power_per_accelerator * load_factor",
         "average power per accelerator over all hours"),
    Step("tokens_per_hour", "token/h", "utilisation_served * throughput * seconds_per_hour",
         "tokens served per accelerator per hour, averaged over all hours"),
    Step("tariff_rate_by_hour", "USD/kWh",
         "sum_month(tariff_month_weight * electricity_tariff_rates) * electricity_tariff_scale"
         " + electricity_tariff_shift",
         "energy rate in each hour of the typical days, averaged over the year's days"),
    Step("electricity_effective_price", "USD/kWh",
         "choose(electricity_pricing, electricity_price, "
         "sum_hour(hour_weight * load_factor_by_hour * tariff_rate_by_hour) / load_factor)",
         "energy price per kWh drawn: the tariff's rates weighted by the power drawn in "
         "each hour"),
    Step("energy_cost_per_hour", "USD/h",
         "average_power * electricity_effective_price / watts_per_kilowatt",
         "energy charges per accelerator-hour"),
    Step("site_accelerators", "dimensionless",
         "choose(electricity_site_basis, accelerators_per_rack, "
         "electricity_site_accelerators)",
         "accelerators that share the site's fixed charges"),
    Step("demand_charge_per_hour", "USD/h",
         "choose(electricity_pricing, 0, power_facility * peak_load_factor * "
         "sum_month(electricity_tariff_demand_charge * tariff_months_billed) / hours_per_year"
         " / watts_per_kilowatt + power_facility * "
         "sum_period(electricity_tariff_demand_period_charge * "
         "electricity_tariff_demand_period_months * demand_period_peak_load_factor)"
         " / hours_per_year / watts_per_kilowatt)",
         "demand charges per accelerator-hour: each month's peak power at the facility "
         "boundary times that month's demand rate, and each demand period's peak (the "
         "busiest hour within its hours) times the period's rate, each month it is billed"),
    Step("fixed_charge_per_hour", "USD/h",
         "choose(electricity_pricing, 0, electricity_tariff_fixed_charge * months_per_year"
         " / hours_per_year / site_accelerators)",
         "fixed charges per accelerator-hour: the site's monthly charges shared by its "
         "accelerators"),
    Step("electricity_cost_per_hour", "USD/h",
         "energy_cost_per_hour + demand_charge_per_hour + fixed_charge_per_hour",
         "electricity bill per accelerator-hour: energy, demand and fixed charges"),
    Step("electricity_price_all_in", "USD/kWh",
         "electricity_cost_per_hour / average_power * watts_per_kilowatt",
         "the electricity bill per kWh drawn (energy, demand and fixed charges)"),
    # -- emissions (scope 2 of the power drawn, and the hardware's embodied emissions) ------
    # A factor by hour weighs each hour by the power drawn in it, as the tariff's rates are.
    # The flat factor is read outside the switch (factor + (hourly - factor)) so that a
    # scenario without one has no emissions (an empty cell in a workbook), never #N/A.
    Step("grid_factor_location", "gCO2e/kWh",
         "electricity_carbon_intensity + choose(electricity_carbon_basis, 0, "
         "sum_hour(hour_weight * load_factor_by_hour * electricity_carbon_hourly) / load_factor"
         " - electricity_carbon_intensity)",
         "location-based emission factor per kWh drawn: the annual factor, or the hourly "
         "factors weighted by the power drawn in each hour"),
    Step("grid_factor_market", "gCO2e/kWh",
         "electricity_market_carbon_intensity + choose(electricity_market_carbon_basis, 0, "
         "sum_hour(hour_weight * load_factor_by_hour * electricity_market_carbon_hourly)"
         " / load_factor - electricity_market_carbon_intensity)",
         "market-based emission factor per kWh drawn: the stated factor, or the hourly "
         "factors weighted by the power drawn in each hour"),
    Step("emissions_per_hour", "gCO2e/h",
         "average_power * grid_factor_location / watts_per_kilowatt",
         "location-based operational emissions per accelerator-hour: energy at the chosen "
         "boundary times the location-based factor"),
    Step("emissions_market_per_hour", "gCO2e/h",
         "average_power * grid_factor_market / watts_per_kilowatt",
         "market-based operational emissions per accelerator-hour: energy at the chosen "
         "boundary times the market-based factor"),
    Step("life_years", "dimensionless", "financing_life / one_year",
         "economic life in years"),
    Step("growth_factor", "dimensionless", "(1 + financing_cost_of_capital) ** life_years",
         "compounding over the life, (1 + r)^n"),
    Step("capital_recovery_factor", "1/year",
         "where(financing_cost_of_capital == 0, 1 / life_years, "
         "financing_cost_of_capital * growth_factor / (growth_factor - 1)) / one_year",
         "annuity per unit of capex, r(1+r)^n/((1+r)^n-1); 1/n when r = 0"),
    Step("capex_per_accelerator", "USD",
         "accelerator_price + node_price / node_accelerators + rack_price / "
         "accelerators_per_rack", "capital cost per accelerator, with its share of node "
         "and rack"),
    Step("salvage_present_value", "USD",
         "financing_salvage * capex_per_accelerator / growth_factor",
         "salvage at end of life, discounted to today"),
    Step("amortised_capex_per_year", "USD/year",
         "(capex_per_accelerator - salvage_present_value) * capital_recovery_factor",
         "annual capital charge (annuity) per accelerator"),
    Step("maintenance_per_year", "USD/year",
         "financing_maintenance * capex_per_accelerator / one_year",
         "maintenance per accelerator per year"),
    Step("capex_per_hour", "USD/h",
         "choose(accelerator_cost_basis, amortised_capex_per_year / hours_per_year, "
         "accelerator_hourly_price)",
         "capital charge per accelerator-hour (or the hourly rental price)"),
    Step("maintenance_per_hour", "USD/h",
         "choose(accelerator_cost_basis, maintenance_per_year / hours_per_year, 0)",
         "maintenance per accelerator-hour (none when renting)"),
    Step("hosting_per_hour", "USD/h",
         "facility_hosting * power_rack_rated * months_per_year / hours_per_year"
         " / watts_per_kilowatt",
         "hosting per accelerator-hour, charged on rated rack-boundary power"),
    # No product carbon footprint stated: no embodied figure (empty, never 0), and the totals
    # are the operational emissions alone.
    Step("embodied_per_accelerator", "gCO2e",
         "choose(embodied_basis, empty, accelerator_embodied, node_embodied / node_accelerators,"
         " accelerator_embodied + node_embodied / node_accelerators)",
         "embodied emissions per accelerator, with its share of the node (none when no "
         "product carbon footprint is given)"),
    Step("embodied_per_hour", "gCO2e/h",
         "embodied_per_accelerator / (financing_life * hours_per_year)",
         "embodied emissions per accelerator-hour: straight-line over the economic life, "
         "every hour of it, not discounted"),
    Step("emissions_total_per_hour", "gCO2e/h",
         f"emissions_per_hour + {_EMBODIED_COUNTED}",
         "location-based operational and embodied emissions per accelerator-hour (operational "
         "only when no footprint is given)"),
    Step("emissions_market_total_per_hour", "gCO2e/h",
         f"emissions_market_per_hour + {_EMBODIED_COUNTED}",
         "market-based operational and embodied emissions per accelerator-hour (operational "
         "only when no footprint is given)"),
    Step("opex_per_hour", "USD/h", "maintenance_per_hour + hosting_per_hour",
         "operating cost per accelerator-hour besides electricity"),
    Step("cost_per_hour", "USD/h",
         "electricity_cost_per_hour + capex_per_hour + opex_per_hour",
         "total cost per accelerator-hour"),
    # -- per million tokens -----------------------------------------------------------------
    _per_mtok("cost_per_mtok_energy", "cost_per_mtok", "energy", "electricity_cost_per_hour",
              description="electricity per million tokens (energy, demand and fixed "
                          "charges)"),
    _per_mtok("cost_per_mtok_capex", "cost_per_mtok", "capex", "capex_per_hour",
              description="capital (or rental) per million tokens"),
    _per_mtok("cost_per_mtok_opex", "cost_per_mtok", "opex", "opex_per_hour",
              description="maintenance and hosting per million tokens"),
    _per_mtok("cost_per_mtok_total", "cost_per_mtok", "total", "cost_per_hour",
              description="total cost per million tokens"),
    _per_mtok("emissions_per_mtok", None, None, "emissions_per_hour", "gCO2e/Mtok",
              "location-based operational emissions per million tokens"),
    _per_mtok("emissions_market_per_mtok", None, None, "emissions_market_per_hour",
              "gCO2e/Mtok", "market-based operational emissions per million tokens"),
    _per_mtok("embodied_per_mtok", None, None, "embodied_per_hour", "gCO2e/Mtok",
              "embodied emissions of the hardware per million tokens"),
    _per_mtok("emissions_total_per_mtok", None, None, "emissions_total_per_hour",
              "gCO2e/Mtok", "location-based operational and embodied emissions per million "
                            "tokens"),
    _per_mtok("emissions_market_total_per_mtok", None, None,
              "emissions_market_total_per_hour", "gCO2e/Mtok",
              "market-based operational and embodied emissions per million tokens"),
    # -- price ------------------------------------------------------------------------------
    Step("price_per_mtok_total", "USD/Mtok", "cost_per_mtok_total / (1 - pricing_gross_margin)",
         "price per million tokens at the target gross margin", "price_per_mtok", "total"),
    Step("tokens_per_request", "token",
         "choose(operating_point_token_kind, workload_isl + workload_osl, workload_osl, "
         "workload_isl)", "tokens of the counted kind in one request"),
    Step("price_per_request", "USD", "price_per_mtok_total * tokens_per_request / "
         "tokens_per_mtok", "price of one request at the target margin"),
    Step("cost_per_request", "USD", "cost_per_mtok_total * tokens_per_request / "
         "tokens_per_mtok", "cost of one request (before the margin)"),
    Step("weighted_tokens_per_request", "token",
         "workload_isl + pricing_output_weight * workload_osl",
         "request size in input-token equivalents under the allocation rule"),
    Step("price_per_mtok_input", "USD/Mtok",
         "price_per_request / weighted_tokens_per_request * tokens_per_mtok",
         "price per million input tokens", "price_per_mtok", "input"),
    Step("price_per_mtok_output", "USD/Mtok", "price_per_mtok_input * pricing_output_weight",
         "price per million output tokens", "price_per_mtok", "output"),
]

# the money figures of an answer, also in the currency results are shown in (money.currency):
# each is its USD figure times money.rate, named shown(...), in shown_currency units
SHOWN = ["capex_per_accelerator", "cost_per_hour", "cost_per_mtok_energy", "cost_per_mtok_capex",
         "cost_per_mtok_opex", "cost_per_mtok_total", "price_per_mtok_total",
         "price_per_mtok_input", "price_per_mtok_output", "price_per_request",
         "cost_per_request"]


def shown(name: str) -> str:
    """The step of a money figure in the currency results are shown in."""
    return f"{name}_shown"


_UNITS = {s.name: s.unit for s in STEPS}
STEPS += [Step(shown(n), _UNITS[n].replace("USD", SHOWN_CURRENCY), f"{n} * money_rate",
               f"{n}, in the currency results are shown in") for n in SHOWN]

MODEL = Declaration(INPUTS, ENUMS, CONSTANTS, STEPS)
"""The declared TCO calculation; unit-checked at import."""


def model_input(name: str) -> Input:
    """A model input or step by name, as an input of another declaration over the model's
    names (an agent's task, profit at market prices): the model's own input, or its step's
    unit and description with the step's name."""
    if name in MODEL.inputs:
        return MODEL.inputs[name]
    step = MODEL.steps[name]
    return Input(name, step.unit, step.description, name)
