"""TreeHist: heavy hitters by a prefix tree, one bit per level.

Bassily, Nissim, Stemmer, Thakurta, "Practical Locally Private Heavy Hitters", NeurIPS
2017 ([BNST], Sec. 3, Algorithm TreeHist; JMLR 21(16), 2020).  The m bits of a value span a
binary prefix tree of depth m.  The users are split uniformly at random into m groups, one
per level; a user of level ℓ reports the ℓ-bit prefix of their value through a frequency
oracle (OLH by default; [BNST] use their Hashtogram, any ε-LDP oracle fits).  The server
walks down the tree: at level ℓ it estimates the two children of every prefix it kept at
level ℓ-1 with level ℓ's reports and keeps only the *heavy* children; the survivors of
level m are the heavy hitters.  Each user reports once, so the protocol is ε-LDP.

Which children are heavy ("form"):

* ``"threshold"`` ([BNST] Algorithm TreeHist): a child is kept when its estimated count
  among level ℓ's n_ℓ users reaches τ_ℓ = z σ_ℓ, σ_ℓ² = Var of a zero-count estimate
  (the oracle's exact ``variance(n_ℓ, 0)``, [FO] Table 1), so τ_ℓ is of order √n_ℓ/ε and,
  scaled to all users, of order √(m n)/ε: [BNST]'s threshold Δ = O(√(n log(d/β))/ε)
  with log d = m.  The constant: z = Φ⁻¹(1 - β/Q), Q = 2 m w the most children the walk can
  query (w = ``width``), so that by a union bound (normal approximation of the estimate,
  as in [PEM] Sec. IV-B3) a prefix nobody holds survives any level with probability at most
  β (default 0.05); e.g. z ≈ 4.2 at m = 64, w = 32.  At most ``width`` (default 2k)
  children are kept per level, the highest: [BNST] bound the list by O(√n), the number of
  prefixes that can truly reach τ.
* ``"top-k"``: every level keeps its k best children.  This is PEM ([PEM] Sec. IV-A) with
  γ = 0 and η = 1 (g = m groups, |C_i| = k), so [PEM] Eq. (4)-(5) predict its F1 and NCR
  (:meth:`TreeHist.pem_config`); [PEM] Sec. VII's Principle 2 (fewer groups) is why it
  lands below the optimised PEM.

Output: the final survivors, highest estimate first, scaled to all n users; the k best, or,
with ``threshold`` = θ (the threshold version of [PEM] Sec. VI-B3, Fig. 7), every survivor
estimated at >= θ n.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from ldp import bits
from ldp.contract import Capabilities
from ldp.heavy_hitters.base import (
    ClientReports,
    HeavyHitterResult,
    Population,
    ReportGroup,
    UserReport,
    assign_groups,
    check_engine,
    resolve_oracle,
    top,
)
from ldp.heavy_hitters.baseline import check_report_size
from ldp.heavy_hitters.pem import check_fraction
from ldp.lazy import lazy_module
from ldp.oracles import OLH, FrequencyOracle
from ldp.registry import register
from ldp.theory import pem as pem_theory
from ldp.validation import check_choice, check_epsilon, check_generator, check_int, check_real

stats = lazy_module("scipy.stats")

FORMS = ("threshold", "top-k")


def _increasing(words: np.ndarray) -> np.ndarray:
    """The order that sorts distinct values (``bits.to_words``) increasingly: by the
    integer itself, or by the most significant word first."""
    return np.argsort(words) if words.ndim == 1 else np.lexsort(words.T[::-1])


def _prefix_histogram(prefixes: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The held prefixes (increasing) and their users, from the non-decreasing prefixes
    of the increasingly ordered distinct values and each value's users.

    What :func:`~ldp.heavy_hitters.base.aggregate` returns for these keys (then the held
    ones), found in one pass instead of a sort per level: the sampled engine's one
    histogram per level, over the same keys in the same order.
    """
    starts = np.flatnonzero(np.r_[True, prefixes[1:] != prefixes[:-1]])
    counts = (
        np.add.reduceat(np.asarray(weights, dtype=np.int64), starts) if len(starts) else weights
    )
    held = counts > 0
    return prefixes[starts][held], counts[held]


@dataclass(frozen=True)
class TreeHistClient:
    """The client of a level-ℓ user: the ℓ-bit prefix of the value, through the oracle.

    The level is drawn independently of the value, so a user's report is as private as
    the oracle's report of the prefix.  ``oracle_input`` and ``g`` let :mod:`ldp.audit`
    build its default events on what the oracle receives.
    """

    oracle: FrequencyOracle
    m: int
    level: int

    @property
    def g(self) -> int | None:
        """The oracle's hash range (local hashing), else None."""
        return getattr(self.oracle, "g", None)

    def oracle_input(self, value: int) -> int:
        """The ℓ-bit prefix of one value (what the oracle perturbs)."""
        return int(bits.prefix(np.array([value], dtype=np.uint64), self.m, self.level)[0])

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        """Each user's ε-LDP report of their value's ℓ-bit prefix (values as in
        :func:`ldp.bits.prefix`; non-negative int64 are taken as uint64)."""
        values = np.asarray(values)
        if values.dtype.kind == "i":
            if values.size and values.min() < 0:
                raise ValueError("values must be non-negative")
            values = values.astype(np.uint64)
        return self.oracle.perturb(bits.prefix(values, self.m, self.level), rng)


@register(color="#7570b3", order=105)
@dataclass(frozen=True, kw_only=True)
class TreeHist:
    """TreeHist ([BNST] Sec. 3): a binary prefix tree, m levels, one group of users each.

    Parameters
    ----------
    epsilon, k, m :
        Privacy budget, number of heavy hitters wanted, bits per value.
    oracle :
        The frequency-oracle class every level reports through (OLH).
    form :
        ``"threshold"`` (keep children estimated at >= τ_ℓ, [BNST]) or ``"top-k"`` (keep
        the k best children per level; PEM with γ = 0, η = 1).
    beta :
        The threshold form's failure probability: z = Φ⁻¹(1 - β/(2 m width)).
    z :
        The threshold constant itself, overriding ``beta``: τ_ℓ = z σ_ℓ.
    width :
        The threshold form's most prefixes kept per level (default 2k).
    threshold :
        None to output the k best survivors; a frequency θ to output every survivor
        estimated at >= θ n ([PEM] Sec. VI-B3).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        # exact when its frequency oracle's simulate_candidates is (the default OLH's is)
        closed_form_variance=False,
    )

    epsilon: float
    k: int
    m: int
    oracle: type[FrequencyOracle] = OLH
    form: Literal["threshold", "top-k"] = "threshold"
    beta: float = 0.05
    z: float | None = None
    width: int | None = None
    threshold: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        m = check_int(self.m, "m", minimum=1, maximum=4096)
        k = check_int(self.k, "k", minimum=1, maximum=2**m if m < 63 else None)
        check_choice(self.form, "form", FORMS)
        check_fraction(self.beta, "beta")
        if self.threshold is not None:
            check_fraction(self.threshold, "threshold")
        if self.z is not None:
            check_real(self.z, "z", minimum=0, open_minimum=True)
        width = 2 * k if self.width is None else self.width
        object.__setattr__(self, "width", check_int(width, "width", minimum=k))
        object.__setattr__(self, "oracle", resolve_oracle(self.oracle))
        # The deepest level's oracle must exist (e.g. GRR stops at 2^62 values): fail now.
        self.client(m)

    # --- the pieces ----------------------------------------------------------------------
    @property
    def levels(self) -> tuple[int, ...]:
        """The prefix length each group reports: 1, 2, ..., m."""
        return tuple(range(1, self.m + 1))

    @property
    def z_value(self) -> float:
        """z of τ_ℓ = z σ_ℓ: given, or Φ⁻¹(1 - β/(2 m width)) (union bound over queries)."""
        if self.z is not None:
            return float(self.z)
        return float(stats.norm.isf(self.beta / (2 * self.m * self.width)))

    def client(self, level: int) -> TreeHistClient:
        """The client of the users of ``level`` (1 <= level <= m)."""
        level = check_int(level, "level", minimum=1, maximum=self.m)
        return TreeHistClient(
            self.oracle(epsilon=self.epsilon, domain_size=2**level), self.m, level
        )

    def level_threshold(self, level: int, n_users: int) -> float:
        """τ_ℓ = z σ_ℓ: the estimated count (among ``n_users``) a prefix needs to survive."""
        return self._threshold(self.client(level).oracle, n_users, self.z_value)

    @staticmethod
    def _threshold(oracle: FrequencyOracle, n_users: int, z: float) -> float:
        return z * math.sqrt(oracle.variance(n_users, 0))

    def pem_config(self) -> pem_theory.PEMConfig:
        """The top-k form as a PEM configuration (γ = 0, η[i] = 1, n[i] = n/m, |C_i| = k),
        for [PEM] Eq. (4)-(5) (:func:`ldp.theory.pem.utility`)."""
        m = self.m
        return pem_theory.PEMConfig(m, 0, (1,) * m, (1 / m,) * m, (self.k,) * m)

    def report_groups(self) -> tuple[ReportGroup, ...]:
        """Level ℓ's group (weight 1/m) sends one report: the oracle's of the ℓ-bit prefix."""
        return tuple(
            ReportGroup(
                1 / self.m,
                (
                    UserReport(
                        self.client(level).oracle,
                        functools.partial(bits.prefix, m=self.m, ell=level),
                    ),
                ),
            )
            for level in self.levels
        )

    # --- the client ----------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> ClientReports:
        """What every user sends: a uniform level ℓ (its group ℓ - 1) and the oracle's report
        of the value's ℓ-bit prefix (:meth:`TreeHistClient.perturb`).

        ``values`` are m-bit values in the data set's representation; ``parts[ℓ - 1]``
        holds the reports of level ℓ's users, in user order.
        """
        rng = check_generator(rng)
        values = np.asarray(values)
        groups = assign_groups(len(values), np.full(self.m, 1 / self.m), rng)
        parts = tuple(
            self.client(level).perturb(values[groups == index], rng)
            for index, level in enumerate(self.levels)
        )
        return ClientReports(groups, parts)

    # --- the protocol --------------------------------------------------------------------
    def run(self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"):
        """Identify the heavy hitters of ``dataset`` (a :class:`ldp.datasets.Dataset`).

        ``engine="reports"`` decodes :meth:`perturb`'s reports of the data set's users;
        ``"sampled"`` draws each level's estimates from their exact law given the histogram
        of the level's prefixes (:class:`~ldp.heavy_hitters.base.Population`).
        """
        engine = check_engine(engine)
        rng = check_generator(rng)
        if dataset.m != self.m:
            raise ValueError(f"dataset has m = {dataset.m} bits, the protocol m = {self.m}")
        fractions = np.full(self.m, 1 / self.m)
        if engine == "sampled":
            population = Population.sampled(dataset, self.m, fractions, rng)
        else:
            for level in self.levels:  # refuse before any work
                check_report_size(self.client(level).oracle, dataset.n / self.m)
            population = Population.reported(self.perturb(dataset.values, rng), self.m)
        sizes, n, z = population.sizes, population.n, self.z_value
        if engine == "sampled":  # the distinct values in increasing order, once
            order = _increasing(population.words)
            ordered_words = population.words[order]
        kept = np.zeros(1, dtype=np.uint64)
        kept_estimates = np.zeros(1)
        queried, kept_sizes, kept_prefixes, thresholds = [], [], [], []
        for index, ell in enumerate(self.levels):
            domain = bits.extend(kept, ell - 1, 1)
            client = self.client(ell)
            if engine == "sampled" and ell <= 64:
                held, counts = _prefix_histogram(
                    bits.prefix(ordered_words, self.m, ell), population.weights([index])[order]
                )
                estimates = client.oracle.simulate_candidates(held, counts, domain, rng)
            else:
                prefixes = (
                    bits.prefix(population.words, self.m, ell) if engine == "sampled" else None
                )
                estimates = population.estimates(
                    client.oracle, domain, rng, groups=[index], part=index, keys=prefixes
                )
            best = top(estimates, self.k if self.form == "top-k" else self.width)
            if self.form == "threshold":
                tau = self._threshold(client.oracle, int(sizes[index]), z)
                best = best[estimates[best] >= tau]
                thresholds.append(tau)
            kept, kept_estimates = domain[best], estimates[best]
            queried.append(len(domain))
            kept_sizes.append(len(kept))
            kept_prefixes.append(kept)
            if len(kept) == 0:
                break
        identified = kept
        estimates = kept_estimates * (n / max(int(sizes[-1]), 1))
        if self.threshold is not None:
            above = estimates >= self.threshold * n
            identified, estimates = identified[above], estimates[above]
        else:
            identified, estimates = identified[: self.k], estimates[: self.k]
        if self.m > 64:
            identified = (
                bits.words_to_bytes(identified, self.m // 8)
                if len(identified)
                else np.zeros(0, dtype=f"S{self.m // 8}")
            )
        diagnostics = {
            "groups": [int(s) for s in sizes],
            "candidates_per_step": queried,
            "kept_per_step": kept_sizes,
            "kept_prefixes": kept_prefixes,
            "oracle_queries": int(sum(queried)),
            "levels_reached": len(queried),
            "thresholds": thresholds,
        }
        if self.form == "threshold":
            diagnostics["z"] = z
        return HeavyHitterResult(identified, estimates, diagnostics)
