"""The strawman of [PEM] Sec. III-B.

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*.
Section III-B splits an m-bit value into g segments v[(α-1)s : αs] of s bits; each user
reports the whole value and one random segment, the aggregator keeps the frequent
patterns C_α of each segment and tests the Cartesian product C_1 x ... x C_g with the
whole-value reports.  SPM (Sec. III-C) and MCM (Sec. III-D) are the two ways the paper
says the literature improves on it; what the three share is in
:mod:`ldp.heavy_hitters.baseline`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp import bits
from ldp.contract import Capabilities
from ldp.heavy_hitters.base import (
    ClientReports,
    HeavyHitterResult,
    ReportGroup,
    UserReport,
    assign_groups,
    build_oracle,
    check_dataset,
    check_engine,
    top,
)
from ldp.heavy_hitters.baseline import (
    BaselineParameters,
    Population,
    join_segments,
    paper_segment_bits,
    resolve_segment_bits,
    segment,
    segment_bounds,
    stage_bar,
    variant_presets,
)
from ldp.oracles import OLH
from ldp.registry import register
from ldp.validation import check_generator

__all__ = ["Strawman", "cap_product"]


def cap_product(kept: list[np.ndarray], scores: list[np.ndarray], limit: int) -> list[np.ndarray]:
    """Shrink the patterns of each segment until |C_1| x ... x |C_g| <= limit.

    The strawman's candidate set has k^g values ([PEM] Sec. III-B); under the query limit
    the weakest pattern (lowest estimated frequency) of the largest C_α is dropped first.
    ``kept[α]`` is sorted by ``scores[α]``, highest first.
    """
    kept, scores = list(kept), list(scores)
    while math.prod(len(c) for c in kept) > limit:
        largest = max(range(len(kept)), key=lambda a: (len(kept[a]), -scores[a][-1]))
        kept[largest], scores[largest] = kept[largest][:-1], scores[largest][:-1]
    return kept


@register(order=130)
@dataclass(frozen=True, kw_only=True)
class Strawman(BaselineParameters):
    """The strawman heavy-hitter protocol of [PEM] Sec. III-B.

    A value is cut into g segments of s bits.  Each user picks a segment α at random and
    reports ⟨π(v), α, π(v[(α-1)s : αs])⟩; the aggregator estimates all 2^s patterns of
    each segment (2^s x g queries), keeps the frequent ones C_α (the k best, or those
    passing the threshold test), and tests C = C_1 x ... x C_g with the whole-value
    reports π(v).  Any frequency oracle works here.

    Parameters
    ----------
    segment_bits : int or "auto"
        s.  ``"auto"`` is :func:`~ldp.heavy_hitters.baseline.choose_segment_bits`: the
        fewest segments that fit the query limit (Σ 2^{s_α} for the segments plus the
        candidates; the Cartesian product is shrunk to fit, :func:`cap_product`).
    variant : {"improved", "original", "partitioned"}
        ``"original"`` (Sec. III-B as written): ``oracle=OLH`` ("it is natural to use
        OLH"), ``segment_bits=16`` (the section's example; ⌈m/2⌉ when m <= 16),
        ``budget="split"``, ``output="top_k"``.  ``"improved"``: the Sec. VI-A changes that
        apply, ``segment_bits="auto"``; ``"partitioned"``: and ``budget="partition"``
        (:func:`~ldp.heavy_hitters.baseline.variant_presets`).

    The other parameters (ε, k, m, ``oracle``, ``budget``, ``output``, ``threshold``,
    ``significance``, ``final_fraction``, ``value_share`` = 1/2, ``query_limit``) are those
    of :class:`~ldp.heavy_hitters.baseline.BaselineParameters`.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        # exact when its frequency oracle's simulate_candidates is (the default OLH's is)
        closed_form_variance=False,
    )

    segment_bits: int | str | None = None

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = variant_presets(
        original={"oracle": OLH, "segment_bits": paper_segment_bits, "output": "top_k"},
        improved={"segment_bits": "auto"},
    )

    def __post_init__(self) -> None:
        epsilon, m, _ = self._check_parameters()
        s = resolve_segment_bits(self, 1, min(m, 64))
        eps = self.epsilon_per_part
        build_oracle(self.oracle, eps["value"], 2**m, "whole-value")
        build_oracle(self.oracle, eps["segment"], 2**s, "segment")

    def queries(self, bounds: Sequence[tuple[int, int]]) -> int:
        """Oracle queries of a run: all patterns of every segment, plus at least k values."""
        return sum(2**length for _, length in bounds) + self.k

    @property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """The segments as (start, length) pairs."""
        return segment_bounds(self.m, self.segment_bits)

    @property
    def epsilon_per_part(self) -> dict[str, float]:
        """ε spent by a user on the whole value and on the segment."""
        value = self.value_epsilon()
        return {
            "value": value,
            "segment": self.epsilon if self.partitioned else self.epsilon - value,
        }

    def report_groups(self) -> tuple[ReportGroup, ...]:
        """Segment group α sends π(v[α]), and π(v) under ``budget="split"``; under
        ``"partition"`` group 0 sends only π(v) at ε (the oracles of :meth:`perturb`)."""
        eps, m = self.epsilon_per_part["segment"], self.m
        return self.groups_sending(
            [
                (
                    UserReport(
                        self.oracle(epsilon=eps, domain_size=2**length),
                        functools.partial(segment, m=m, start=start, length=length),
                    ),
                )
                for start, length in self.bounds
            ]
        )

    # --- client ----------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> ClientReports:
        """What each user sends: a random segment α and π(v[α]), and/or π(v) (the budget).

        ``values`` are m-bit values in the data set's representation.  ``parts[α]`` holds
        the reports of segment α by the users of its group.
        """
        rng = check_generator(rng)
        words = bits.to_words(values, self.m)
        bounds, offset = self.bounds, int(self.partitioned)
        groups = assign_groups(len(words), self.group_fractions(len(bounds)), rng)
        parts = []
        for alpha, (start, length) in enumerate(bounds):
            oracle = self.oracle(epsilon=self.epsilon_per_part["segment"], domain_size=2**length)
            users = np.flatnonzero(groups == alpha + offset)
            parts.append(oracle.perturb(segment(words[users], self.m, start, length), rng))
        value = self.value_reports(words, groups, len(bounds), rng)
        return ClientReports(
            groups,
            tuple(parts),
            value,
            senders=tuple((alpha + offset,) for alpha in range(len(bounds))),
            value_senders=tuple(self.value_groups(len(bounds))),
        )

    # --- the protocol ----------------------------------------------------------------
    def run(
        self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"
    ) -> HeavyHitterResult:
        """Identify the heavy hitters of ``dataset``; see :class:`Strawman`.

        ``engine="reports"`` aggregates :meth:`perturb`'s reports of the data set's users;
        ``"sampled"`` draws every round's estimates from their exact law given the histogram.
        """
        engine, rng = check_engine(engine), check_generator(rng)
        check_dataset(dataset, self.m)
        bounds, g = self.bounds, len(self.bounds)
        eps = self.epsilon_per_part
        segment_oracles = [
            self.oracle(epsilon=eps["segment"], domain_size=2**length) for _, length in bounds
        ]
        if engine == "reports":
            self.check_reports_engine(dataset.n, segment_oracles)
            population = Population.reported(
                self.perturb(dataset.values, rng), len(bounds) + int(self.partitioned)
            )
        else:
            population = Population.sampled(dataset, self.m, self.group_fractions(g), rng)
        threshold = self.output == "threshold"

        kept, scores, queries = [], [], []
        for alpha, (bound, oracle) in enumerate(zip(bounds, segment_oracles, strict=True)):
            groups = [alpha + int(self.partitioned)]
            n_alpha = population.n_users(groups)
            domain = np.arange(2 ** bound[1], dtype=np.uint64)
            keys = None if engine == "reports" else segment(population.words, self.m, *bound)
            estimates = population.estimates(
                oracle, domain, rng, groups=groups, part=alpha, keys=keys
            )
            queries.append(len(estimates))
            order = top(estimates, len(estimates) if threshold else self.k)
            if threshold:
                bar = stage_bar(oracle, n_alpha, self.threshold, self.significance, len(estimates))
                order = order[estimates[order] >= bar]
            kept.append(order.astype(np.uint64))
            scores.append(estimates[order] / max(n_alpha, 1))
        kept = cap_product(kept, scores, self.query_limit - sum(queries))
        grids = np.meshgrid(*kept, indexing="ij") if all(len(c) for c in kept) else None
        patterns = [grid.ravel() for grid in grids] if grids else [np.zeros(0, np.uint64)] * g
        candidates = join_segments(patterns, bounds, self.m)
        diagnostics = {
            "group_roles": (["value"] if self.partitioned else [])
            + [f"segment {alpha}" for alpha in range(g)],
            "segments": [length for _, length in bounds],
            "candidates_per_step": queries + [len(candidates)],
            "kept_per_step": [len(c) for c in kept],
            "segment_patterns": kept,
            "oracle_queries": int(sum(queries) + len(candidates)),
        }
        return self.final_test(population, g, candidates, rng, diagnostics)
