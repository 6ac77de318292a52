"""PEM, the Prefix Extending Method ([PEM] Sec. IV-A).

Users are split into g groups; group i reports the prefix v[0:γ+η[1]+...+η[i]] through a
frequency oracle (OLH by default).  The aggregator queries D_1 = {0,1}^{γ+η[1]} with the
first group's reports and keeps the |C_1| best prefixes, then D_i = C_{i-1} x {0,1}^{η[i]}
with group i's reports, and so on; C_g holds the heavy hitters.  Without explicit
parameters the configuration comes from the optimizer of Sec. IV-C
(:func:`ldp.theory.pem.optimize`), or from the authors' rule (``shape="paper"``,
:func:`ldp.theory.pem.paper_config`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from ldp import bits, budget
from ldp.contract import Capabilities
from ldp.heavy_hitters.base import (
    ClientReports,
    HeavyHitterResult,
    Population,
    ReportGroup,
    UserReport,
    assign_groups,
    build_oracle,
    check_dataset,
    check_engine,
    check_m,
    resolve_oracle,
    top,
)
from ldp.heavy_hitters.baseline import check_choice, check_fraction, check_report_size
from ldp.oracles import OLH, FrequencyOracle
from ldp.registry import register
from ldp.theory import pem as theory
from ldp.validation import (
    ParameterError,
    check_epsilon,
    check_generator,
    check_int,
    check_int_sequence,
    check_real,
)

#: Where PEM's shape comes from when no η is given ([PEM] Sec. IV-C, or the authors' code).
SHAPES = ("optimizer", "paper")
#: The optimizer's named assumed distributions (:func:`ldp.theory.pem.assumed_frequencies`).
ASSUMED = ("zipf", "zipf1.5", "exponential", "uniform")
#: The optimizer's goals (:func:`ldp.theory.pem.utility_weights`).
GOALS = ("f1", "ncr")


def check_assumed(assumed: object, k: int, name: str = "assumed") -> None:
    """The optimizer's assumed distribution: a name of :data:`ASSUMED`, or at least k finite,
    non-negative frequencies (a 1-D sequence, not all zero)."""
    if isinstance(assumed, str):
        check_choice(assumed, name, ASSUMED)
        return
    if not isinstance(assumed, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be one of {ASSUMED} or a sequence of frequencies, got "
            f"{type(assumed).__name__}"
        )
    try:
        frequencies = np.asarray(assumed, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of real frequencies") from None
    if frequencies.ndim != 1 or frequencies.shape[0] < k:
        raise ParameterError(
            name,
            f"shape {frequencies.shape}",
            f"a 1-D sequence of at least k = {k} frequencies",
            message=f"{name} must give at least k = {k} frequencies in one dimension, got "
            f"shape {frequencies.shape}",
        )
    if not (np.all(np.isfinite(frequencies)) and np.all(frequencies >= 0)):
        raise ParameterError(name, "a non-finite or negative entry", "finite and >= 0")
    if not frequencies.sum() > 0:
        raise ParameterError(name, "all zero", "not all zero")


@register(color="#56b4e9", order=100)
@dataclass(frozen=True, kw_only=True)
class PEM:
    """The Prefix Extending Method.

    Parameters
    ----------
    epsilon, k, m :
        Privacy budget, number of heavy hitters wanted, bits per value (m <= 64, or a
        multiple of 8 up to 4096 for byte strings: :func:`~ldp.heavy_hitters.base.check_m`).
    oracle : type or str
        The frequency-oracle class each group reports through, or its name (OLH).
    shape : {"optimizer", "paper"}
        Where the configuration comes from when ``etas`` is None.  ``"optimizer"``
        (default): the numerical optimisation of Sec. IV-C (:func:`ldp.theory.pem.optimize`)
        unless ``eta`` is given.  ``"paper"``: the authors' public code
        (:func:`ldp.theory.pem.paper_config`): group 1 reports ⌊log2 k⌋ + 1 bits, each later
        group η more, g = 1 + ⌈(m - ⌊log2 k⌋ - 1)/η⌉, with ``eta`` or else the largest η the
        query limit allows (6 groups at m = 64, k = 16: Sec. VI-B6's "one sixth of users").
    eta, gamma :
        Uniform η and γ (Sec. IV-A); g = ⌈(m-γ)/η⌉ and the last step takes what is left.
        γ defaults to ⌈log2 k⌉.  Leave ``eta`` None to let the optimizer choose.
    etas, fractions, candidate_sizes :
        Per-step η[i], n[i]/n and |C_i| (Sec. IV-C): override the uniform shape.
    query_limit, assumed, goal :
        The query limit (2^20), and the optimizer's assumed distribution ("zipf") and goal
        ("f1" or "ncr") (Sec. IV-C); used when ``eta`` and ``etas`` are None.
    n_hint :
        The number of users the optimizer plans for (10^6); the run itself uses the data.
    threshold :
        None for top-k; a frequency θ for the threshold version (Sec. VI-B3): the final
        step still keeps |C_g| candidates, and those estimated at >= θ n are output.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        # exact when its frequency oracle's simulate_candidates is (the default OLH's is)
        closed_form_variance=False,
    )

    epsilon: float
    k: int
    m: int
    oracle: type[FrequencyOracle] = OLH
    shape: str = "optimizer"
    eta: int | None = None
    gamma: int | None = None
    etas: tuple[int, ...] | None = None
    fractions: tuple[float, ...] | None = None
    candidate_sizes: tuple[int, ...] | None = None
    query_limit: int = theory.DEFAULT_QUERY_LIMIT
    assumed: str = "zipf"
    goal: Literal["f1", "ncr"] = "f1"
    n_hint: int = 10**6
    threshold: float | None = None
    config: theory.PEMConfig = field(init=False, repr=False)

    def __post_init__(self) -> None:
        epsilon = check_epsilon(self.epsilon)
        object.__setattr__(self, "epsilon", epsilon)
        m = check_m(self.m)
        k = check_int(self.k, "k", minimum=1, maximum=2**m)
        object.__setattr__(self, "oracle", resolve_oracle(self.oracle))
        check_choice(self.shape, "shape", SHAPES)
        budget.check_query_limit(check_int(self.query_limit, "query_limit", minimum=2))
        build_oracle(self.oracle, epsilon, 2, "prefix")  # an unsupported ε fails first
        if self.threshold is not None:
            check_fraction(self.threshold, "threshold")
        if self.gamma is not None:
            check_int(self.gamma, "gamma", minimum=0, maximum=m - 1)
        if self.eta is not None:
            check_int(self.eta, "eta", minimum=1, maximum=m)
        self._check_plan(k, m)
        try:
            object.__setattr__(self, "config", self._configure(k, m))
        except theory.QueryLimitTooLow as error:  # no shape for this k fits the limit
            first = 2 ** (min(m - 1, max(k - 1, 0).bit_length()) + 1)  # 2^(⌈log2 k⌉ + 1)
            if first > self.query_limit:  # the first step alone: k is what is too large
                largest = 2 ** (self.query_limit.bit_length() - 2)
                allowed = f"< {largest}: PEM's first step asks 2^(⌈log2 k⌉+1) queries"
                raise ParameterError("k", k, allowed, message=f"k = {k}: {error}") from None
            raise ParameterError(
                "query_limit",
                self.query_limit,
                f"> {self.query_limit} for k = {k}, m = {m}",
                message=str(error),
            ) from None
        if self.config.queries > self.query_limit:
            raise ParameterError(
                "query_limit",
                self.query_limit,
                f">= {self.config.queries}",
                message=(
                    f"query_limit {self.query_limit} is below the {self.config.queries} oracle "
                    "queries this configuration needs (a smaller eta or candidate size fits)"
                ),
            )
        for ell in self.config.lengths:
            build_oracle(self.oracle, epsilon, 2**ell, "prefix")

    def _check_plan(self, k: int, m: int) -> None:
        """The optimizer's inputs and the explicit shape, each refused under its own name."""
        check_int(self.n_hint, "n_hint", minimum=1)
        check_choice(self.goal, "goal", GOALS)
        check_assumed(self.assumed, k)
        if self.etas is not None:
            object.__setattr__(self, "etas", check_int_sequence(self.etas, "etas", minimum=1))
        if self.candidate_sizes is not None:
            sizes = check_int_sequence(self.candidate_sizes, "candidate_sizes", minimum=1)
            object.__setattr__(self, "candidate_sizes", sizes)
        if self.fractions is not None:
            fractions = self.fractions
            if isinstance(fractions, str | bytes) or not isinstance(
                fractions, Sequence | np.ndarray
            ):
                raise TypeError(
                    "fractions must be a sequence of shares (one per step), got "
                    f"{type(fractions).__name__}"
                )
            shares = tuple(
                check_real(x, "fractions", minimum=0, maximum=1, open_minimum=True)
                for x in fractions
            )
            object.__setattr__(self, "fractions", shares)

    def _configure(self, k: int, m: int) -> theory.PEMConfig:
        if self.shape == "paper":
            if any(x is not None for x in (self.etas, self.gamma)):
                raise ValueError("shape='paper' fixes gamma and the etas; give eta at most")
            shape = theory.paper_config(k, m, self.query_limit, self.eta)
            fractions = self.fractions if self.fractions is not None else shape.fractions
            sizes = self.candidate_sizes or shape.candidate_sizes
            return theory.PEMConfig(m, shape.gamma, shape.etas, tuple(fractions), tuple(sizes))
        if self.etas is None and self.eta is None:
            if any(x is not None for x in (self.fractions, self.candidate_sizes, self.gamma)):
                raise ValueError("give eta or etas together with gamma/fractions/candidate_sizes")
            return theory.optimize(
                k, m, self.n_hint, self.epsilon, self.query_limit, self.assumed, self.goal
            )
        gamma = self.gamma if self.gamma is not None else min(m - 1, math.ceil(math.log2(k)))
        if self.etas is not None:
            etas = tuple(int(e) for e in self.etas)
        else:
            if self.eta > m - gamma:
                raise ParameterError("eta", self.eta, f"<= m - gamma = {m - gamma}")
            etas = theory.PEMConfig.uniform(m, k, self.eta, gamma).etas
        g = len(etas)
        fractions = self.fractions if self.fractions is not None else (1 / g,) * g
        sizes = self.candidate_sizes if self.candidate_sizes is not None else (k,) * g
        return theory.PEMConfig(m, gamma, etas, tuple(fractions), tuple(sizes))

    def step_oracle(self, step: int) -> FrequencyOracle:
        """The oracle group ``step`` reports through: over its 2^{γ+η[1]+...+η[i]} prefixes."""
        return self.oracle(epsilon=self.epsilon, domain_size=2 ** self.config.lengths[step])

    def identification_model(
        self, values: np.ndarray, counts: np.ndarray, refined: bool = True
    ) -> np.ndarray | None:
        """P(v_j survives every step), j = 1..k, v_j the j-th most frequent of ``values``
        (held ``counts`` times): [PEM] Eq. (4)'s Π_i Piden_j[i] with Eq. (5) from the
        frequencies alone (``refined=False``), or the refined model
        (:func:`ldp.theory.pem_refined.refined_identification`), whose competing candidates
        at each step are the data's own prefixes.  Both take OLH's (p*, q*) (Sec. II), so
        None for another oracle."""
        if self.oracle is not OLH:
            return None
        values, counts = np.asarray(values), np.asarray(counts)
        if refined:
            from ldp.theory.pem_refined import refined_identification

            return refined_identification(
                values, counts, self.m, self.epsilon, self.config, top=self.k
            )
        n = int(counts.sum())
        frequencies = np.sort(counts)[::-1][: self.k] / n
        return theory.overall_identification(frequencies, n, self.epsilon, self.config)

    def report_groups(self) -> tuple[ReportGroup, ...]:
        """Group i (weight n[i]/n) sends one report: the step oracle's of v[0:γ+η[1]+...+η[i]]."""
        total, m = float(sum(self.config.fractions)), self.m
        return tuple(
            ReportGroup(
                fraction / total,
                (UserReport(self.step_oracle(i), functools.partial(bits.prefix, m=m, ell=ell)),),
            )
            for i, (fraction, ell) in enumerate(
                zip(self.config.fractions, self.config.lengths, strict=True)
            )
        )

    # --- client ----------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> ClientReports:
        """What each user sends: a random group i and π(v[0:γ+η[1]+...+η[i]]) ([PEM] Sec. IV-A).

        ``values`` are m-bit values in the data set's representation; ``parts[i]`` holds
        the oracle reports of group i's users, in user order.
        """
        rng = check_generator(rng)
        values = np.asarray(values)
        groups = assign_groups(len(values), np.asarray(self.config.fractions), rng)
        parts = tuple(
            self.step_oracle(i).perturb(bits.prefix(values[groups == i], self.m, ell), rng)
            for i, ell in enumerate(self.config.lengths)
        )
        return ClientReports(groups, parts)

    # --- the protocol ------------------------------------------------------------------
    def run(self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"):
        """Identify the heavy hitters of ``dataset`` (a :class:`ldp.datasets.Dataset`).

        ``engine="reports"`` aggregates :meth:`perturb`'s reports of the data set's users;
        ``"sampled"`` draws every step's estimates from their exact distribution given the
        histogram of the group's prefixes (:class:`~ldp.heavy_hitters.base.Population`).
        """
        engine = check_engine(engine)
        rng = check_generator(rng)
        check_dataset(dataset, self.m)
        config = self.config
        if engine == "sampled":
            population = Population.sampled(dataset, self.m, config.fractions, rng)
        else:
            for step, fraction in enumerate(config.fractions):  # refuse before any work
                check_report_size(self.step_oracle(step), dataset.n * fraction)
            population = Population.reported(self.perturb(dataset.values, rng), config.g)
        sizes, n = population.sizes, population.n
        steps, kept = [], None
        for i, (ell, eta, keep) in enumerate(
            zip(config.lengths, config.etas, config.candidate_sizes, strict=True)
        ):
            if kept is None:
                domain = bits.extend(np.zeros(1, dtype=np.uint64), 0, ell)
            else:
                domain = bits.extend(kept, ell - eta, eta)
            prefixes = bits.prefix(population.words, self.m, ell) if engine == "sampled" else None
            estimates = population.estimates(
                self.step_oracle(i), domain, rng, groups=[i], part=i, keys=prefixes
            )
            best = top(estimates, keep)
            kept, kept_estimates = domain[best], estimates[best]
            steps.append({"queries": len(domain), "kept": kept})
        scale = n / max(int(sizes[-1]), 1)
        identified, estimates = kept, kept_estimates * scale
        if self.threshold is not None:
            above = estimates >= self.threshold * n
            identified, estimates = identified[above], estimates[above]
        else:
            identified, estimates = identified[: self.k], estimates[: self.k]
        if self.m > 64:
            identified = bits.words_to_bytes(identified, self.m // 8)
        diagnostics = {
            "groups": [int(s) for s in sizes],
            "prefix_lengths": list(config.lengths),
            "candidates_per_step": [s["queries"] for s in steps],
            "kept_per_step": [len(s["kept"]) for s in steps],
            "kept_prefixes": [s["kept"] for s in steps],
            "oracle_queries": int(sum(s["queries"] for s in steps)),
            "gamma": config.gamma,
            "etas": list(config.etas),
        }
        return HeavyHitterResult(identified, estimates, diagnostics)
