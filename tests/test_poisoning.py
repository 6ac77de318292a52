"""Fake users against the frequency oracles (:mod:`ldp.poisoning`, [CJG21]).

The measured frequency gain of each (protocol, attack) is averaged over ``TRIALS``
collections and compared with its closed form (:mod:`ldp.theory.poisoning`): within
``Z`` standard errors, Z from a family-wise false alarm of 0.001 over the cases
(Bonferroni, two-sided).  The same check rejects a closed form that forgets the targets'
own frequency (the β f_T term), which shows its power.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ldp import poisoning
from ldp.audit.support import declared_support
from ldp.oracles import BLH, GRR, HM, HR, OLH, ORACLES, OUE, SHE, SS, SUE
from ldp.theory import poisoning as theory
from ldp.validation import ParameterError

FLH = ORACLES["FLH"]
PROTOCOLS = (GRR, SUE, OUE, BLH, OLH, SS, FLH, HR, HM)
CASES = [(cls, attack) for cls in PROTOCOLS for attack in poisoning.ATTACKS]
TRIALS, N, D, BETA = 40, 10_000, 32, 0.05
TARGETS = [3, 7, 11]
Z = float(stats.norm.isf(0.001 / (2 * len(CASES))))
DOC = Path(__file__).resolve().parents[1] / "docs" / "poisoning.md"


def measured(cls, attack: str):
    oracle = cls(epsilon=1.0, domain_size=D)
    values = np.random.default_rng(0).integers(0, D, size=N)
    found = [
        poisoning.attack(oracle, values, attack, TARGETS, BETA, np.random.default_rng([5, t]))
        for t in range(TRIALS)
    ]
    gains = np.array([f.gain for f in found])
    supported = float(np.mean([f.supported for f in found]))
    return oracle, found[0], gains.mean(), gains.std(ddof=1) / np.sqrt(TRIALS), supported


@pytest.mark.parametrize(("cls", "attack"), CASES, ids=[f"{c.__name__}-{a}" for c, a in CASES])
def test_the_measured_gain_is_the_closed_form(cls, attack: str) -> None:
    oracle, first, mean, se, supported = measured(cls, attack)
    expected = poisoning.expected_gain(
        oracle, attack, TARGETS, first.beta, first.f_targets, supported
    )
    assert abs(mean - expected) <= Z * se + 1e-12, (mean, expected, se)


def test_a_closed_form_without_the_targets_frequency_is_rejected() -> None:
    """The planted formula β (S − r q*)/(p* − q*) misses −β f_T (0.005 here): the check
    above rejects it for GRR's maximal gain attack, whose gain varies little."""
    oracle, first, mean, se, _ = measured(GRR, "MGA")
    p, q = oracle.p_star, oracle.q_star
    wrong = first.beta * (1 - len(TARGETS) * q) / (p - q)
    assert abs(mean - wrong) > Z * se


def test_the_paper_closed_forms_for_grr_and_oue() -> None:
    """[CJG21]: kRR's MGA gains β(1 − f_T) + β(d − r)/(e^ε − 1); OUE's MGA 2rβe^ε/(e^ε − 1)
    − β f_T; RIA β(1 − f_T) for every pure oracle; OLH's RPA −β f_T."""
    e, beta, f_t, r = np.exp(1.0), 0.05, 0.1, 3
    grr, oue, olh = (cls(epsilon=1.0, domain_size=D) for cls in (GRR, OUE, OLH))
    assert poisoning.expected_gain(grr, "MGA", TARGETS, beta, f_t) == pytest.approx(
        beta * (1 - f_t) + beta * (D - r) / (e - 1), rel=1e-9
    )
    assert poisoning.expected_gain(oue, "MGA", TARGETS, beta, f_t) == pytest.approx(
        2 * r * beta * e / (e - 1) - beta * f_t, rel=1e-9
    )
    for oracle in (grr, oue, olh):
        assert poisoning.expected_gain(oracle, "RIA", TARGETS, beta, f_t) == pytest.approx(
            beta * (1 - f_t), rel=1e-9
        )
    assert poisoning.expected_gain(olh, "RPA", TARGETS, beta, f_t) == pytest.approx(
        -beta * f_t, abs=1e-12
    )


#: Pure oracles without ``craft_reports``, and the largest count of TARGETS one of their
#: reports supports: an L-GRR report names one value; a PI-RAPPOR report supports every
#: target whose hash cell it holds, and some report holds all three.
SEARCHED = {ORACLES["LGRR"]: 1, ORACLES["PIRAPPOR"]: 3}


def searched_support(cls) -> float:
    """The mean S of the searched maximal gain attack on ``cls`` over TRIALS collections,
    after checking their mean gain against the closed form at that S."""
    oracle, first, mean, se, supported = measured(cls, "MGA")
    expected = poisoning.expected_gain(
        oracle, "MGA", TARGETS, first.beta, first.f_targets, supported
    )
    assert abs(mean - expected) <= Z * se + 1e-12, (mean, expected, se)
    return supported


@pytest.mark.parametrize("cls", list(SEARCHED), ids=lambda cls: cls.__name__)
def test_a_pure_oracle_without_the_hook_is_attacked_by_search(cls) -> None:
    assert searched_support(cls) == SEARCHED[cls]


def test_a_search_of_one_report_is_caught(monkeypatch) -> None:
    """The planted search scores one honest report, which is the random item attack:
    L-GRR's S falls to p* + (r − 1) q* (about 0.2 here) of the best report's 1."""
    lgrr = ORACLES["LGRR"]
    monkeypatch.setattr(poisoning, "SEARCH_POOL", 1)
    assert searched_support(lgrr) < SEARCHED[lgrr] / 2


def test_crafted_reports_are_reports_the_protocol_accepts() -> None:
    rng = np.random.default_rng(2)
    for cls in PROTOCOLS + tuple(SEARCHED):
        oracle = cls(epsilon=1.0, domain_size=D)
        for attack in poisoning.ATTACKS:
            if attack == "RPA" and cls in SEARCHED:
                continue  # no report space declared
            fake = poisoning.fake_reports(oracle, attack, TARGETS, 50, rng)
            assert oracle.n_reports(fake) == 50
            assert declared_support(oracle)(fake).all()  # no report a support check drops
            assert np.all(np.isfinite(oracle.estimate(fake, candidates=np.array(TARGETS))))
    oue = OUE(epsilon=1.0, domain_size=D)
    bits = np.unpackbits(poisoning.fake_reports(oue, "MGA", TARGETS, 20, rng).bits, axis=1)
    assert (bits.sum(axis=1) == round(oue.p_star + (D - 1) * oue.q_star)).all()
    assert bits[:, TARGETS].all()


def test_bad_input_names_the_parameter() -> None:
    grr, values = GRR(epsilon=1.0, domain_size=D), np.zeros(100, dtype=np.int64)
    rng = np.random.default_rng(0)
    with pytest.raises(ParameterError, match="beta"):
        poisoning.attack(grr, values, "MGA", TARGETS, 1.0, rng)
    with pytest.raises(ParameterError, match="targets"):
        poisoning.attack(grr, values, "MGA", [3, D], 0.1, rng)
    with pytest.raises(ParameterError, match="targets"):
        poisoning.attack(grr, values, "MGA", [3, 3], 0.1, rng)
    with pytest.raises(ParameterError, match="attack"):
        poisoning.attack(grr, values, "XYZ", TARGETS, 0.1, rng)
    with pytest.raises(ParameterError, match="attack"):  # SHE crafts none and is not pure
        poisoning.attack(SHE(epsilon=1.0, domain_size=D), values, "MGA", TARGETS, 0.1, rng)
    with pytest.raises(ParameterError, match="beta"):
        theory.frequency_gain(0.5, 0.1, -0.1, 1.0, 1, 0.0)
    with pytest.raises(ParameterError, match="'n'|n "):
        poisoning.fake_reports(grr, "MGA", TARGETS, -1, rng)


def test_the_examples_run() -> None:
    assert doctest.testmod(poisoning).failed == 0
    assert doctest.testfile(str(DOC), module_relative=False).failed == 0


def test_random_items_share_the_collections_pool_where_it_is_drawn_per_call() -> None:
    """FLH draws its hash pool once per call: the fake users' honest reports of targets must
    be hashed under the collection's pool, as a real attacker's are (the pool is public).
    Drawn in a call of their own, they would name other hash functions and gain about
    nothing (measured: -0.004 against 0.045); the attack draws all users in one call and
    gains its closed form β(1 - f_T), and joining batches of two pools is refused."""
    flh = FLH(epsilon=1.0, domain_size=D, k_prime=50)
    values = np.random.default_rng(0).integers(0, D, size=N)
    found = [
        poisoning.attack(flh, values, "RIA", TARGETS, BETA, np.random.default_rng([6, t]))
        for t in range(TRIALS)
    ]
    gains = np.array([f.gain for f in found])
    expected = poisoning.expected_gain(flh, "RIA", TARGETS, found[0].beta, found[0].f_targets)
    assert expected == pytest.approx(found[0].beta * (1 - found[0].f_targets))
    assert abs(gains.mean() - expected) <= Z * gains.std(ddof=1) / np.sqrt(TRIALS)
    assert gains.mean() > expected / 2  # not the ~0 of reports under another pool
    rng = np.random.default_rng(1)
    one, other = flh.perturb(values[:10], rng), flh.perturb(values[:10], rng)
    with pytest.raises(ValueError, match="different public 'pool'"):
        poisoning.join(one, other)


def test_fake_users_report_under_the_collections_public_pool() -> None:
    """The hooks of a protocol drawing its pool per call take the collection's pool (it is
    public): the crafted reports carry it, so they join the genuine ones."""
    flh = FLH(epsilon=1.0, domain_size=D, k_prime=50)
    genuine = flh.perturb(np.arange(D), np.random.default_rng(3))
    public = poisoning.shared_fields(genuine)
    assert list(public) == ["pool"]
    for attack in ("RPA", "MGA"):
        fake = poisoning.fake_reports(flh, attack, TARGETS, 20, np.random.default_rng(4), **public)
        assert np.array_equal(fake.pool, genuine.pool)
        assert poisoning.join(genuine, fake).index.shape == (D + 20,)
