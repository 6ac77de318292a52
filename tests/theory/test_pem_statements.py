"""The closed forms behind [PEM]'s stated numbers (ldp.theory.pem_statements)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp.theory import pem as pem_theory
from ldp.theory import pem_statements as statements


def test_lemma1_e_is_four_over_olh_variance():
    e = 2.0
    assert statements.lemma1_e(e) == pytest.approx((math.exp(e) - 1) ** 2 / math.exp(e))
    assert 4 / statements.lemma1_e(math.log(10)) == pytest.approx(40 / 81)  # Eq. (3)


def test_prop1_scores_partition_beats_split_at_small_frequencies():
    p1, p2 = statements.prop1_scores(1.0, 4, 0.01, 1e5, 0.01)
    assert p1 > p2


def test_sec2b_arithmetic():
    assert statements.users_for_margin(0.7**2, 0.001) == pytest.approx(4_410_000)
    assert statements.users_for_margin(40 / 81, 0.001) == pytest.approx(4e6 / 0.9)
    assert statements.max_values_at_least(0.001) == 1000
    with pytest.raises(ValueError):
        statements.max_values_at_least(0.0)


def test_rule_config_takes_the_largest_eta_under_the_limit():
    rule = statements.rule_config(16, 64)  # γ = 4: η = 13 gives 5 groups, 5 · 2^17 queries
    assert (rule.gamma, rule.etas[0], rule.g) == (4, 13, 5)
    assert 2 ** (rule.gamma + 14) * math.ceil(60 / 14) > 2**20  # η = 14 does not fit


def test_neighbours_keep_the_number_of_groups():
    config = pem_theory.PEMConfig.uniform(64, 16, 12)
    near = statements.neighbour_configs(config, 16)
    assert {"γ -1", "γ +1", "n[1] -10%", "n[1] +10%", "|C_i| x 0.75", "η + 1"} <= set(near)
    assert all(c.g == config.g and c.queries <= 2**20 for c in near.values())
    assert near["n[1] +10%"].fractions[0] == pytest.approx(1.1 / config.g)
    assert near["|C_i| x 0.75"].candidate_sizes == (12, 12, 12, 12, 16)


def test_candidate_size_gain_compares_against_k():
    ratio, kept = statements.candidate_size_gain(256, 64, 10**6, 2.0, (0.5, 0.75))
    assert ratio > 1 and kept < 256
    same, kept = statements.candidate_size_gain(256, 64, 10**6, 2.0, (1,))
    assert same == pytest.approx(1.0) and kept == 256
    assert np.isfinite(ratio)
