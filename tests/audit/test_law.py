"""The real-valued mechanisms' declared laws, and the audit's check near their edges.

* ``report_cdf`` is the law the reports are drawn from: at the law's edges and at nine
  quantiles of 200,000 reports, for every mean protocol at ε in {0.5, 2} and three inputs,
  the empirical CDF is within z of it (z for a two-sided 1e-4 over all points).
* The audit's law check (:mod:`ldp.audit.law`) holds for every honest mean protocol at
  the default audit, and fails for two planted samplers that stay on the declared grid
  (so the support check cannot see them): a Laplace whose tails are cut (reports beyond
  the 0.3% quantiles redrawn), and a PM whose last cell of the centre piece also takes the
  next 2% of the outer range's reports.  Both also break ε-LDP, and the audit's bound says
  so too.  A third plant stays ε-LDP and is seen by the law check alone: a PM that sends
  30% of its centre reports to the outer pieces instead (more private than declared, and
  its estimator biased).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldp import audit, registry
from ldp.numeric import PM, Laplace
from ldp.validation import ParameterError

MEANS = sorted(registry.protocols("mean"))
INPUTS = (-1.0, 0.3, 1.0)
QUANTILES = (0.001, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999)


@pytest.mark.parametrize("name", MEANS)
def test_the_declared_law_is_the_drawn_one(name):
    points = len(MEANS) * 2 * len(INPUTS) * (len(QUANTILES) + 6)
    z = stats.norm.isf(1e-4 / (2 * points))
    for epsilon in (0.5, 2.0):
        mechanism = registry.get(name, "mean").cls(epsilon=epsilon)
        for t in INPUTS:
            reports = mechanism.perturb(np.full(200_000, t), np.random.default_rng(11))
            xs = np.concatenate([np.quantile(reports, QUANTILES), mechanism.law_edges(t)])
            empirical = (reports[:, None] <= xs).mean(axis=0)
            declared = mechanism.report_cdf(t, xs)
            spread = np.sqrt(np.maximum(declared * (1 - declared), 1e-12) / reports.shape[0])
            assert np.all(np.abs(empirical - declared) <= z * spread + 1e-12), (epsilon, t)


@pytest.mark.parametrize("name", MEANS)
def test_honest_samplers_match_their_law_near_its_edges(name):
    for epsilon in (0.5, 2.0):
        mechanism = registry.get(name, "mean").cls(epsilon=epsilon)
        found = audit.lower_bound(mechanism, -1.0, 1.0, rng=np.random.default_rng(4))
        assert found.law is not None and found.law.holds, str(found.law)
        assert found.holds(epsilon)


class CutLaplace(Laplace):
    """Laplace that redraws every report beyond the 0.3% quantiles of its noise: the
    cut tails a float sampler with a bound on its noise leaves."""

    def _perturb(self, values, rng):
        reports = super()._perturb(values, rng)
        edge = np.quantile(super()._perturb(np.zeros(20_000), rng), 0.997)
        far = np.abs(reports - values) > edge
        while far.any():
            reports[far] = super()._perturb(values[far], rng)
            far = np.abs(reports - values) > edge
        return reports


class HeavyEdgePM(PM):
    """PM whose reports in the 2% of the range just above the centre piece land in the
    piece's last cell instead: one boundary cell takes its neighbours' mass."""

    def _perturb(self, values, rng):
        reports = super()._perturb(values, rng)
        for t in np.unique(values):
            users = values == t
            left, right = self.pieces(t)
            last = right - self.cell / 2  # the midpoint of the piece's last cell
            near = users & (reports > right) & (reports <= right + 0.02 * 2 * self.bound)
            reports[near] = last
        return reports


class ThinCentrePM(PM):
    """PM that redraws 30% of its centre-piece reports from the outer pieces: every ratio
    stays within e^ε, but the law is not the declared one."""

    def _perturb(self, values, rng):
        reports = super()._perturb(values, rng)
        for t in np.unique(values):
            left, right = self.pieces(t)
            users = np.flatnonzero(values == t)
            centre = users[(reports[users] >= left) & (reports[users] <= right)]
            moved = centre[rng.random(centre.shape[0]) < 0.3]
            redraw = super()._perturb(values[moved], rng)
            outside = (redraw < left) | (redraw > right)
            while not outside.all():
                redraw[~outside] = super()._perturb(values[moved][~outside], rng)
                outside = (redraw < left) | (redraw > right)
            reports[moved] = redraw
        return reports


def test_a_sampler_more_private_than_declared_is_seen_by_the_law_check_alone():
    leaky = ThinCentrePM(epsilon=1.0)
    found = audit.lower_bound(leaky, -1.0, 1.0, rng=np.random.default_rng(6))
    assert found.epsilon <= leaky.epsilon  # no privacy violation to find
    assert found.law is not None and not found.law.holds, str(found.law)


@pytest.mark.parametrize(
    "leaky", [CutLaplace(epsilon=1.0), HeavyEdgePM(epsilon=1.0)], ids=["cut tails", "heavy edge"]
)
def test_a_sampler_off_its_law_near_an_edge_is_caught(leaky):
    found = audit.lower_bound(leaky, -1.0, 1.0, rng=np.random.default_rng(6))
    assert found.law is not None and not found.law.holds, str(found.law)
    assert not found.holds(leaky.epsilon)
    assert np.all(leaky.in_support(leaky.perturb(np.zeros(1000), np.random.default_rng(0))))


@pytest.mark.parametrize("name", MEANS)
@pytest.mark.parametrize("bad", [1.5, float("nan"), [0.0, 0.1]])
def test_a_law_at_an_input_outside_minus_one_one_is_refused_naming_t(name, bad):
    mechanism = registry.get(name, "mean").cls(epsilon=1.0)
    with pytest.raises(ParameterError, match="t"):
        mechanism.report_cdf(bad, np.zeros(3))
    with pytest.raises(ParameterError, match="t"):
        mechanism.law_edges(bad)
