"""A catalogue of planted leaks: every one must be caught by the default audit.

Each leak is a copy of an honest mechanism of :mod:`ldp.oracles` with one defect planted
in what ``perturb`` emits.  The audit runs at its default settings (events, trials,
alpha = 0.01) and must report a lower bound above the claimed ε: with probability at
least 1 - alpha that is proof the copy is not ε-LDP.  The seeds are fixed, so a pass is
reproducible; each audit reaches its bound far from the claim (see the margins printed
by ``python -m pytest tests/audit -q -rA``), not by luck of the seed.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp import audit, hashing
from ldp.oracles import GRR, OLH, ORACLES, OUE, HashReports, UnaryReports
from ldp.oracles.rappor.protocol import RapporReports, pack

CMS, FLH, RAPPOR = ORACLES["CMS"], ORACLES["FLH"], ORACLES["RAPPOR"]
PoolReports = type(
    FLH(epsilon=1.0, domain_size=4).perturb(np.zeros(1, dtype=np.int64), np.random.default_rng(0))
)


# ------------------------------------------------------------------ the leaks
class SeedParityOLH(OLH):
    """OLH whose seed's low bit equals the value's parity."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        low = np.asarray(values).astype(np.uint64) & np.uint64(1)
        return HashReports((reports.seeds & ~np.uint64(1)) | low, reports.values)


class EvenHashOLH(OLH):
    """OLH that redraws each user's seed until H_seed(v) is even."""

    def perturb(self, values, rng):
        values = np.asarray(values, dtype=np.int64)
        seeds = rng.integers(0, 2**64 - 1, size=len(values), dtype=np.uint64, endpoint=True)
        odd = hashing.hash_values(values, seeds, self.g) % 2 == 1
        while odd.any():
            seeds[odd] = rng.integers(0, 2**64 - 1, size=int(odd.sum()), dtype=np.uint64)
            odd = hashing.hash_values(values, seeds, self.g) % 2 == 1
        hashed = hashing.hash_values(values, seeds, self.g)
        keep = rng.random(len(values)) < self.p_star
        shift = rng.integers(1, self.g, size=len(values))
        return HashReports(seeds, np.where(keep, hashed, (hashed + shift) % self.g))


class DtypeGRR(GRR):
    """GRR whose reports are int32 when every value of the call is 0 (else int64)."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        return reports.astype(np.int32) if not np.asarray(values).any() else reports


class ShapeOUE(OUE):
    """OUE whose packed bits get a padding byte when no value of the call is 0."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        if np.asarray(values).all():
            padded = np.zeros((reports.bits.shape[0], reports.bits.shape[1] + 1), np.uint8)
            padded[:, :-1] = reports.bits
            return UnaryReports(padded, self.domain_size)
        return reports


class OwnCellCMS(CMS):
    """CMS that never flips the sign of the user's own cell."""

    def perturb(self, values, rng, family=None):
        reports = super().perturb(values, rng, family)
        cells = hashing.hash_values(np.asarray(values), reports.seeds, self.m)
        bits = np.unpackbits(reports.bits, axis=1, count=self.m)
        bits[np.arange(len(values)), cells] = 1
        return reports._replace(bits=np.packbits(bits, axis=1))


class NeverClearsRAPPOR(RAPPOR):
    """RAPPOR whose randomised responses never clear a bit of the Bloom filter."""

    def perturb(self, values, rng):
        values = np.asarray(values, dtype=np.int64)
        cohorts = rng.integers(0, self.m, size=len(values), dtype=np.int64)
        bloom = self.bloom_bits(cohorts, values)
        noisy = self.instantaneous(self.permanent(bloom, rng), rng)
        return RapporReports(cohorts, pack(noisy | bloom), self.k)


class HighColumnOUE(OUE):
    """OUE (d = 1024) whose bit 700 is forced to 1 for the value 0."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        bits = np.unpackbits(reports.bits, axis=1, count=self.domain_size)
        bits[np.asarray(values) == 0, 700] = 1
        return UnaryReports(np.packbits(bits, axis=1), self.domain_size)


class RareGRR(GRR):
    """GRR that, once in 1,000 reports, sends d + v: the value in clear, rarely."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        rare = rng.random(len(reports)) < 1e-3
        return np.where(rare, self.domain_size + np.asarray(values), reports)


class FloatGRR(GRR):
    """GRR as float64 reports (exact integers: as private as GRR)."""

    def perturb(self, values, rng):
        return super().perturb(values, rng).astype(np.float64)


class LowBitFloatGRR(FloatGRR):
    """Float GRR whose last mantissa bit is the value's parity."""

    def perturb(self, values, rng):
        words = super().perturb(values, rng).view(np.uint64)
        words |= np.asarray(values).astype(np.uint64) & np.uint64(1)
        return words.view(np.float64)


class NaNFloatGRR(FloatGRR):
    """Float GRR that reports NaN for one in ten users holding 0."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        reports[(np.asarray(values) == 0) & (rng.random(len(reports)) < 0.1)] = np.nan
        return reports


class IndexFLH(FLH):
    """FLH whose pool index is v mod k' instead of uniform (the index names the value)."""

    def perturb(self, values, rng, pool=None):
        reports = super().perturb(values, rng, pool)
        index = np.asarray(values) % self.k_prime
        hashed = hashing.hash_values(np.asarray(values), reports.pool[index], self.g)
        keep = rng.random(len(values)) < self.p_star
        shift = rng.integers(1, self.g, size=len(values))
        return reports._replace(
            index=index, values=np.where(keep, hashed, (hashed + shift) % self.g)
        )


class RoundedLaplace:
    """One-hot plus Laplace(1) noise rounded to integers, as float64, with -0.0 cleared:
    each coordinate's ratio is at most e, two coordinates differ, so it is 2-LDP."""

    epsilon = 2.0

    def __init__(self, domain_size: int = 4) -> None:
        self.domain_size = domain_size

    def noisy(self, values, rng):
        x = np.round(rng.laplace(0.0, 1.0, size=(len(values), self.domain_size)))
        x[np.arange(len(values)), values] += 1.0
        return x

    def perturb(self, values, rng):
        return self.noisy(values, rng) + 0.0  # -0.0 + 0.0 is +0.0


class NegativeZero(RoundedLaplace):
    """The same without clearing -0.0: round(L) is -0.0 for L in (-1/2, 0), never after
    adding 1, so a -0.0 coordinate is not the user's (the sign of zero leaks)."""

    def perturb(self, values, rng):
        return self.noisy(values, rng)


# Leaks that show only in the report taken as a whole: no column, bit or pair of them
# moves beyond sampling error, one whole report does (the "whole report" digest).
class AllOnesOUE(OUE):
    """OUE (d = 64) that, once in 500 reports of the value 0, sends every bit set."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        rare = (np.asarray(values) == 0) & (rng.random(len(values)) < 2e-3)
        bits = np.array(reports.bits)
        bits[rare] = 0xFF
        return UnaryReports(bits, self.domain_size)


class FixedSeedOLH(OLH):
    """OLH that, once in 500 reports of the value 0, sends one fixed (seed, cell) pair:
    a random-looking 64-bit seed, so neither field's columns single it out."""

    SEED = np.uint64(0x9E3779B97F4A7C15)

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        rare = (np.asarray(values) == 0) & (rng.random(len(values)) < 2e-3)
        seeds = np.where(rare, self.SEED, np.asarray(reports.seeds))
        return HashReports(seeds, np.where(rare, 1, np.asarray(reports.values)))


class SpreadPatternOUE(OUE):
    """OUE (d = 64) that, once in 100 reports of the value 0, sets bits 16 to 23 together
    (the other bits honest): each bit moves by under 1% and no report repeats, so neither
    a bit, a pair of bits nor the whole report shows it; the set of bits does."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        rare = (np.asarray(values) == 0) & (rng.random(len(values)) < 1e-2)
        bits = np.array(reports.bits)
        bits[rare, 2] = 0xFF
        return UnaryReports(bits, self.domain_size)


STRUCTURED = {
    "OUE d=64, eight fixed bits set together once in 100": lambda: SpreadPatternOUE(
        epsilon=1.0, domain_size=64
    ),
}

WHOLE_REPORT = {
    "OUE d=64, every bit set once in 500": lambda: AllOnesOUE(epsilon=1.0, domain_size=64),
    "OLH, one fixed (seed, cell) once in 500": lambda: FixedSeedOLH(epsilon=1.0, domain_size=4),
}

LEAKS = {
    "OLH seed parity": lambda: SeedParityOLH(epsilon=1.0, domain_size=4),
    "OLH seed redrawn until H(v) even": lambda: EvenHashOLH(epsilon=1.0, domain_size=4),
    "GRR dtype depends on v": lambda: DtypeGRR(epsilon=1.0, domain_size=4),
    "OUE shape depends on v": lambda: ShapeOUE(epsilon=1.0, domain_size=4),
    "CMS never flips its own cell": lambda: OwnCellCMS(epsilon=2.0, domain_size=4),
    "RAPPOR never clears a Bloom bit": lambda: NeverClearsRAPPOR(epsilon=4.0, domain_size=4),
    "OUE d=1024, leak in bit 700": lambda: HighColumnOUE(epsilon=1.0, domain_size=1024),
    "GRR leaks v once in 1,000": lambda: RareGRR(epsilon=2.0, domain_size=4),
    "float GRR, low bit = parity": lambda: LowBitFloatGRR(epsilon=1.0, domain_size=4),
    "float GRR, NaN for 0": lambda: NaNFloatGRR(epsilon=1.0, domain_size=4),
    "FLH index names v": lambda: IndexFLH(epsilon=1.0, domain_size=4, k_prime=16),
    "float histogram keeps -0.0": NegativeZero,
    **WHOLE_REPORT,
    **STRUCTURED,
}
SLOW = {"OUE d=1024, leak in bit 700", "GRR leaks v once in 1,000", "CMS never flips its own cell"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in LEAKS]
)
def test_every_planted_leak_is_caught(name: str) -> None:
    leaky = LEAKS[name]()
    seed = np.random.SeedSequence([2024, *name.encode()])
    result = audit.lower_bound(leaky, 0, 1, rng=np.random.default_rng(seed))
    print(f"{name}: claimed {leaky.epsilon}, {result}")
    assert result.epsilon > leaky.epsilon, str(result)


def test_the_honest_float_and_pool_copies_hold() -> None:
    """The honest bases of the float and FLH leaks pass: the leak, not the base, is caught."""
    for honest in (
        FloatGRR(epsilon=1.0, domain_size=4),
        FLH(epsilon=1.0, domain_size=4, k_prime=16),
        RoundedLaplace(),
    ):
        result = audit.lower_bound(honest, 0, 1, rng=np.random.default_rng(7), trials=40_000)
        assert result.epsilon <= honest.epsilon, str(result)


@pytest.mark.parametrize("name", list(WHOLE_REPORT))
def test_a_whole_report_leak_needs_the_whole_report(name: str, monkeypatch) -> None:
    """The power of the "whole report" column: without it the same audit misses these
    leaks (its bound stays at or below the claim), with it (the catalogue test above)
    each is caught.  The pattern columns are left out too: every bit set is also a
    pattern of eight bits set together, which they see."""
    from ldp.audit import events

    monkeypatch.setattr(events, "pattern_columns", lambda *a, **k: [])
    every = events.report_columns
    monkeypatch.setattr(
        events,
        "report_columns",
        lambda *a, **k: [c for c in every(*a, **k) if c.kind != "report"],
    )
    leaky = WHOLE_REPORT[name]()
    seed = np.random.SeedSequence([2024, *name.encode()])
    result = audit.lower_bound(leaky, 0, 1, rng=np.random.default_rng(seed))
    assert result.epsilon <= leaky.epsilon, str(result)


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_spread_pattern_needs_the_pattern_column(name: str, monkeypatch) -> None:
    """The power of the pattern columns (a structured set of bits as one column): without
    them the same audit misses the leak, with them (the catalogue test) it is caught."""
    from ldp.audit import events

    monkeypatch.setattr(events, "pattern_columns", lambda *a, **k: [])
    leaky = STRUCTURED[name]()
    seed = np.random.SeedSequence([2024, *name.encode()])
    result = audit.lower_bound(leaky, 0, 1, rng=np.random.default_rng(seed))
    assert result.epsilon <= leaky.epsilon, str(result)
