"""Reports carry what made them, and every estimator refuses reports it did not make.

Before the stamp (:mod:`ldp.reports`), GRR's estimator read GRR reports of ε = 2 as if made
at ε = 1 (a count of 2,522 for a true 1,000 below), OUE's bit vectors passed through SUE's
estimator and GRR's values through HR's, all with no error.  The fuzz test feeds every
registered oracle's and mean protocol's ``estimate`` the reports of every protocol, ε and
domain (its own class with other parameters included) and expects a ``ParameterError``
naming ``reports``; the same reports with the maker's own parameters must still be read.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldp import registry
from ldp.oracles import GRR, OUE, SUE
from ldp.reports import Stamped, origins, signature
from ldp.validation import ParameterError

KINDS = ("oracle", "mean")
NAMES = [name for kind in KINDS for name in registry.protocols(kind)]


def build(name: str, epsilon: float, domain_size: int):
    """The protocol ``name`` at (ε, d): mean protocols take ε only."""
    entry = registry.get(name)
    if entry.kind == "mean":
        return entry.cls(epsilon=epsilon)
    return entry.cls(epsilon=epsilon, domain_size=domain_size)


def some_reports(protocol, n: int = 30):
    rng = np.random.default_rng(7)
    if hasattr(protocol, "domain_size"):
        values = rng.integers(0, protocol.domain_size, n)
    else:
        values = rng.uniform(-1.0, 1.0, n)
    return protocol.perturb(values, rng)


def test_before_the_stamp_a_foreign_epsilon_read_as_a_wrong_count():
    """What the stamp prevents: the same reports, bare, give GRR at ε = 1 a count far
    from the truth (so a refusal is the only right answer)."""
    made = GRR(epsilon=2.0, domain_size=16)
    reports = made.perturb(np.zeros(1000, dtype=np.int64), np.random.default_rng(0))
    bare = np.asarray(reports).view(np.ndarray)
    assert GRR(epsilon=1.0, domain_size=16).estimate(bare)[0] > 2000  # true count: 1,000
    with pytest.raises(ParameterError, match=r"reports must be made by GRR\(epsilon=1\.0"):
        GRR(epsilon=1.0, domain_size=16).estimate(reports)


def test_the_maker_and_its_equal_read_the_reports():
    made = GRR(epsilon=2.0, domain_size=16)
    reports = made.perturb(np.zeros(1000, dtype=np.int64), np.random.default_rng(0))
    twin = GRR(epsilon=2.0, domain_size=16)
    assert np.array_equal(made.estimate(reports), twin.estimate(reports))
    bare = np.asarray(reports).view(np.ndarray)
    assert np.array_equal(made.estimate(bare), made.estimate(reports))


def test_the_stamp_survives_slicing_and_pickling_but_not_arithmetic():
    made = OUE(epsilon=1.0, domain_size=8)
    reports = made.perturb(np.arange(40) % 8, np.random.default_rng(1))
    own = signature(made)
    assert origins(reports) == {own}
    assert origins(reports.bits[:10]) == {own}
    assert origins(reports.bits[np.arange(40) % 2 == 0]) == {own}
    assert origins(pickle.loads(pickle.dumps(reports))) == {own}
    assert type(reports.bits.sum(axis=0)) is np.ndarray
    assert type(reports.bits + 1) is np.ndarray
    estimate = made.estimate(reports)
    assert type(estimate) is np.ndarray and not isinstance(estimate, Stamped)
    with pytest.raises(ParameterError, match="made by OUE"):
        SUE(epsilon=1.0, domain_size=8).estimate(reports)


def test_a_stamped_batch_is_its_bytes():
    """The stamp is a view: the bytes sent are those of the plain array."""
    made = GRR(epsilon=1.0, domain_size=5)
    reports = made.perturb(np.arange(10) % 5, np.random.default_rng(2))
    assert isinstance(reports, Stamped)
    assert reports.tobytes() == np.asarray(reports).view(np.ndarray).tobytes()


@pytest.mark.parametrize("name", registry.protocols("mean"))
def test_bare_mean_reports_must_be_finite_and_in_range(name):
    protocol = build(name, 1.0, 2)
    for bad in (np.array([0.0, np.nan]), np.array([np.inf, 0.0])):
        with pytest.raises(ParameterError, match="reports"):
            protocol.estimate(bad)
    if protocol.bounded:
        with pytest.raises(ParameterError, match="reports"):
            protocol.estimate(np.array([0.0, 2.0 * protocol.bound]))
    assert np.isfinite(protocol.estimate(np.zeros(3)))


EPSILONS = st.sampled_from([0.5, 1.0, 2.0, 4.0])
DOMAINS = st.sampled_from([2, 5, 16, 64])


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    maker=st.sampled_from(NAMES),
    reader=st.sampled_from(NAMES),
    made_at=st.tuples(EPSILONS, DOMAINS),
    read_at=st.tuples(EPSILONS, DOMAINS),
)
def test_every_estimator_refuses_reports_of_another_protocol_epsilon_or_domain(
    maker, reader, made_at, read_at
):
    made, read = build(maker, *made_at), build(reader, *read_at)
    reports = some_reports(made)
    if signature(made) == signature(read):  # the same law: the reports must be read
        assert np.all(np.isfinite(read.estimate(reports)))
        return
    with pytest.raises(ParameterError) as refused:
        read.estimate(reports)
    assert refused.value.name == "reports"


@pytest.mark.parametrize("name", NAMES)
def test_each_protocol_reads_its_own_reports(name):
    """The stamp never refuses the maker (the fuzz above draws each pair only sometimes)."""
    made = build(name, 1.0, 16)
    assert np.all(np.isfinite(made.estimate(some_reports(made))))
    assert origins(some_reports(made)) == {signature(made)}
