"""The oracle_frontier trial and figure: every registered oracle (plug-ins included) placed
by variance, bits and decode time; the frontier and the advice computed from the table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from experiments.figures.fig_frontier import (
    FIGURE,
    _least_variance_claim,
    advice,
    costs,
    frontier,
    with_frontier,
)
from experiments.figures.fig_poisoning import FIGURE as POISONING
from experiments.figures.fig_poisoning import gains as attack_gains
from experiments.kinds.oracle_frontier import report_bits
from experiments.results import FRONTIER_SKIPS
from experiments.run import run_settings
from experiments.schema import FRONTIER_PROTOCOL, ConfigError
from ldp import registry
from ldp.oracles import GRR, OLH, OUE, PureOracle
from ldp.poisoning import ATTACKS

SMALL = (
    "experiment=oracle_frontier",
    "epsilon=1",
    "options.domain_size=16",
    "dataset.n=400",
    "n_trials=2",
    "n_jobs=1",
    "progress=false",
)


@dataclass(frozen=True, kw_only=True)
class Coin(PureOracle):
    """A plug-in stand-in: GRR-like over 16 values, declaring nothing (no closed form used)."""

    name = "COIN"

    @property
    def p_star(self) -> float:
        return 0.6

    @property
    def q_star(self) -> float:
        return 0.4 / (self.domain_size - 1)

    def perturb(self, values, rng):
        keep = rng.random(values.shape[0]) < self.p_star
        other = (values + rng.integers(1, self.domain_size, values.shape[0])) % self.domain_size
        return np.where(keep, values, other)

    def n_reports(self, reports) -> int:
        return int(np.shape(reports)[0])

    def support_counts(self, reports, candidates):
        return np.bincount(reports, minlength=self.domain_size)[candidates].astype(np.int64)


def test_every_registered_oracle_is_placed_or_skipped_with_a_reason(settings_of, register_protocol):
    register_protocol(Coin)
    _, store = run_settings(settings_of(*SMALL))
    table, _ = store.load()
    stats = with_frontier(costs(table))
    assert set(stats["oracle"]) == set(registry.protocols("oracle"))  # COIN included
    placed = stats.dropna(subset=["variance", "bits", "decode_s"])
    unplaced = stats.drop(placed.index)
    assert all(0 < flags < 2 * max(FRONTIER_SKIPS) for flags in unplaced["skipped"])  # reasons
    assert "COIN" in set(placed["oracle"]) and placed["on_frontier"].any()
    coin = stats.set_index("oracle").loc["COIN"]
    assert np.isnan(coin["exact"]) and coin["variance"] == coin["measured"] > 0
    e = np.exp(1.0)
    oue = stats.set_index("oracle").loc["OUE"]
    assert np.isclose(oue["exact"], 4 * e / (e - 1) ** 2, rtol=1e-9)
    lines = advice(stats)
    assert len(lines) == 1 and lines[0].startswith("d = 2^4, ε = 1: frontier ")
    figure = FIGURE.draw(table)
    assert len(figure.axes) == 1 and figure.texts
    assert [c.verdict for c in FIGURE.claims(table)]  # claims are computed (never empty)


def test_each_row_names_its_oracle_and_the_setting_names_none(settings_of) -> None:
    (setting,) = settings_of(*SMALL, "n_trials=1")
    assert setting.config["protocol"] == FRONTIER_PROTOCOL  # composed from OLH's node
    _, store = run_settings([setting])
    table, _ = store.load()
    assert set(table["protocol.name"]) == {"*"}  # no registered protocol is named "*"
    assert set(table["protocol.label"]) == {"every registered oracle"}
    what, dot, oracle = table["metric"].str.partition(".").T.to_numpy()
    gains = {f"gain_{attack}" for attack in ATTACKS}
    assert (dot == ".").all() and set(what) <= {"sq_error_n", "bits", "decode_s", "skipped"} | gains
    assert set(oracle) == set(registry.protocols("oracle"))
    assert (table[what == "bits"].groupby(oracle[what == "bits"]).size() == 1).all()


def test_a_protocol_parameter_is_refused_as_no_frontier_oracle_uses_it(settings_of) -> None:
    with pytest.raises(ConfigError, match=r"^protocol\.g: the oracle_frontier trial builds"):
        settings_of(*SMALL, "protocol.g=3")


def test_frontier_is_the_non_dominated_set() -> None:
    panel = pd.DataFrame(
        {
            "variance": [1.0, 2.0, 1.0, 3.0, np.nan],
            "bits": [10.0, 5.0, 10.0, 6.0, 1.0],
            "decode_s": [1.0, 1.0, 2.0, 1.0, 0.1],
        }
    )
    # 0 and 1 trade variance for bits; 2 is dominated by 0; 3 by 1; 4 is not placed
    assert frontier(panel).tolist() == [True, True, False, False, False]


def test_report_bits_from_the_declared_report_model() -> None:
    assert report_bits(GRR(epsilon=1.0, domain_size=1000)) == 10  # ⌈log2 d⌉
    assert report_bits(OUE(epsilon=1.0, domain_size=64)) == 64  # one bit per value
    olh = OLH(epsilon=1.0, domain_size=64)
    assert report_bits(olh) == 64 + np.ceil(np.log2(olh.g))  # seed and cell


def _exact_panel(pgr: float, ss: float = 1.0) -> pd.DataFrame:
    """One (d, ε) panel of exact variances: SS, PGR and two others."""
    rows = [("SS", ss), ("PGR", pgr * ss), ("OUE", 1.2), ("HR", 1.3)]
    return pd.DataFrame(
        [
            {"d": 2**14, "epsilon": 1.0, "oracle": name, "exact": var, "variance": var}
            for name, var in rows
        ]
    )


def test_pgr_beyond_its_one_percent_is_not_reproduced() -> None:
    claim = _least_variance_claim(_exact_panel(1.005), "SS", "PGR")
    assert claim.verdict == "identity"  # exact closed forms
    beyond = _least_variance_claim(_exact_panel(1.0378), "SS", "PGR")
    assert beyond.verdict == "partly" and "PGR/SS = 1.0378" in beyond.ours


def test_every_oracle_meets_the_attacks_it_can_express(settings_of, register_protocol) -> None:
    """Every oracle built at the setting gets the random item attack; a plug-in that
    declares no hook is attacked by search (MGA) too; the poisoning figure draws the table
    and its closed-form claim holds, and fails once the measured gains of one pair are
    planted 1.0 above their closed form."""
    register_protocol(Coin)
    _, store = run_settings(settings_of(*SMALL, "n_trials=6"))
    table, _ = store.load()
    found = attack_gains(table)
    attacks = found.groupby("oracle")["attack"].apply(set)
    built = set(table.loc[table["metric"].str.startswith("bits."), "metric"].str[5:])
    assert all("RIA" in attacks[name] for name in built), set(attacks.index) ^ built
    assert attacks["COIN"] == {"RIA", "MGA"} and attacks["OUE"] == set(ATTACKS)
    figure = POISONING.draw(table)
    assert len(figure.axes) == len(ATTACKS)
    closed_form = POISONING.claims(table)[0]
    assert closed_form.verdict.startswith("reproduced"), closed_form
    planted = table.copy()
    chosen = planted["metric"] == "gain_MGA.OUE"
    planted.loc[chosen, "value"] += 1.0
    assert POISONING.claims(planted)[0].verdict == "differs"
