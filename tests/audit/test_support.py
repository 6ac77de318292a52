"""Reports outside the declared support (:mod:`ldp.audit.support`): checked on every report
the audit draws, an unbounded loss with no sampling error, never raised by an honest
protocol."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import audit, registry
from ldp.audit.support import declared_support
from ldp.numeric import PM, Laplace
from ldp.oracles import GRR, OLH, OUE, SHE, SS, HashReports, UnaryReports


class RareGRR(GRR):
    """GRR that, once in 1,000 reports, sends d + v: outside [0, d)."""

    def perturb(self, values, rng):
        reports = np.asarray(super().perturb(values, rng))
        rare = rng.random(len(reports)) < 1e-3
        return np.where(rare, self.domain_size + np.asarray(values), reports)


class PaddingOUE(OUE):
    """OUE (d = 12) that sets a padding bit (bit 15) for the value 0, once in 1,000."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        bits = np.array(reports.bits)
        rare = (np.asarray(values) == 0) & (rng.random(len(values)) < 1e-3)
        bits[rare, -1] |= np.uint8(1)
        return UnaryReports(bits, self.domain_size)


class BigSubsetSS(SS):
    """SS whose subset for the value 0 holds ω + 1 values, once in 1,000."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        bits = np.unpackbits(reports.bits, axis=1, count=self.domain_size)
        rare = np.flatnonzero((np.asarray(values) == 0) & (rng.random(len(values)) < 1e-3))
        for i in rare:
            bits[i, np.flatnonzero(bits[i] == 0)[0]] = 1
        return UnaryReports(np.packbits(bits, axis=1), self.domain_size)


class WideSHE(SHE):
    """SHE that reports T + 1 in the user's own coordinate for the value 0, once in 1,000."""

    def perturb(self, values, rng):
        reports = np.array(super().perturb(values, rng))
        rare = np.flatnonzero((np.asarray(values) == 0) & (rng.random(len(values)) < 1e-3))
        reports[rare, 0] = self.noise.support + 1
        return reports


class CellOLH(OLH):
    """OLH that reports the cell g (outside [0, g)) for the value 0, once in 1,000."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        rare = (np.asarray(values) == 0) & (rng.random(len(values)) < 1e-3)
        return HashReports(reports.seeds, np.where(rare, self.g, np.asarray(reports.values)))


LEAKS = {
    "GRR d + v": lambda: RareGRR(epsilon=2.0, domain_size=4),
    "OUE padding bit": lambda: PaddingOUE(epsilon=1.0, domain_size=12),
    "SS omega + 1 members": lambda: BigSubsetSS(epsilon=1.0, domain_size=12),
    "OLH cell g": lambda: CellOLH(epsilon=1.0, domain_size=4),
    "SHE coordinate T + 1": lambda: WideSHE(epsilon=1.0, domain_size=4),
}


@pytest.mark.parametrize("name", list(LEAKS))
def test_a_report_outside_the_support_is_an_unbounded_loss(name: str) -> None:
    leaky = LEAKS[name]()
    result = audit.lower_bound(leaky, 0, 1, rng=np.random.default_rng(5), trials=20_000)
    assert math.isinf(result.epsilon) and "outside the declared support" in result.best.name


@pytest.mark.parametrize("name", list(registry.protocols("oracle")))
def test_honest_reports_lie_in_their_support(name: str) -> None:
    oracle = registry.get(name).cls(epsilon=1.0, domain_size=12)
    check = declared_support(oracle)
    if check is None:
        pytest.skip(f"{name} declares no support check")
    reports = oracle.perturb(np.arange(5000) % 12, np.random.default_rng(1))
    assert np.all(check(reports))


def test_the_checks_that_exist() -> None:
    """Which oracles have no check at all (docs/privacy.md lists them; RAPPOR's, CMS's and
    dBitFlip's bit reports get a derived check that passes every report, as only unary
    reports carry their domain)."""
    none = {
        n
        for n, e in registry.protocols("oracle").items()
        if declared_support(e.cls(epsilon=1.0, domain_size=12)) is None
    }
    assert none == {"HCMS"}


# ------------------------------------------------------------------ mean protocols
class NudgedLaplace(Laplace):
    """The grid Laplace mechanism whose report for a user holding -1 is moved one ulp up,
    once in 1,000: off the grid 1/s by 2^-52 of its size."""

    def _perturb(self, values, rng):
        reports = super()._perturb(values, rng)
        rare = (values == -1.0) & (rng.random(len(values)) < 1e-3)
        return np.where(rare, np.nextafter(reports, np.inf), reports)


class SignedZeroPM(PM):
    """PM that reports -0.0 for the users holding -1, once in 1,000 (PM never reports 0)."""

    def _perturb(self, values, rng):
        reports = super()._perturb(values, rng)
        rare = (values == -1.0) & (rng.random(len(values)) < 1e-3)
        return np.where(rare, -0.0, reports)


MEAN_LEAKS = {
    "Laplace one ulp off the grid": lambda: NudgedLaplace(epsilon=1.0),
    "PM sends -0.0": lambda: SignedZeroPM(epsilon=1.0),
}


@pytest.mark.parametrize("name", list(MEAN_LEAKS))
def test_a_mean_report_off_its_grid_is_an_unbounded_loss(name: str) -> None:
    leaky = MEAN_LEAKS[name]()
    result = audit.lower_bound(leaky, -1.0, 1.0, rng=np.random.default_rng(5), trials=20_000)
    assert math.isinf(result.epsilon) and "outside the declared support" in result.best.name


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("name", list(registry.protocols("mean")))
def test_honest_mean_reports_lie_on_their_grid(name: str, epsilon: float) -> None:
    """Every registered mean protocol declares its support, every report it draws lies in
    it (the ends -1, 0, 1 and random values), and a report moved by one ulp does not
    (where the grid is coarser than the floats there)."""
    protocol = registry.get(name).cls(epsilon=epsilon)
    check = declared_support(protocol)
    assert check is not None
    rng = np.random.default_rng(2)
    values = np.concatenate([[-1.0, 0.0, 1.0] * 1000, rng.uniform(-1, 1, 20_000)])
    reports = np.asarray(protocol.perturb(values, rng))
    assert np.all(check(reports))
    assert not check(np.array([np.nan, np.inf, -0.0])).any()
    assert not check(reports.astype(np.float32)).any()
    moved = np.nextafter(reports, np.inf)
    assert np.mean(check(moved)) < 0.6
