"""MCM, the Multiple Channel Method of Bassily and Smith ([PEM] Sec. III-D).

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*;
Bassily and Smith (*Local, Private, Efficient Protocols for Succinct Histograms*,
STOC 2015) is its reference [6].  [PEM]'s description, which it shows equivalent to
theirs, is the one implemented:

* a public hash H maps every value to one of h channels (drawn from the run's rng);
* each user picks a bit position ℓ in [0, m) and reports ⟨π(v), ℓ, b_1, ..., b_h⟩ where
  b_j is a uniformly random bit for j ≠ H(v) and v[ℓ] flipped with probability
  1/(e^{ε2}+1) for j = H(v).  The report is ε2-LDP: whatever v, all channels but one
  carry fair coins and the remaining one is randomised response on one bit;
* per channel and bit the aggregator takes the majority vote, which gives one candidate
  value per channel, then estimates the candidates' frequencies with the π(v) reports.

[PEM] also notes that a user may report "a bigger block (such as 16 bit) at a time":
``block_bits`` = b > 1 does that, with b-bit blocks instead of bits, generalised
randomised response over the 2^b patterns on the user's channel, uniform patterns on
the others (again ε2-LDP), and a plurality vote.  b = 1 is the original.

Sampled engine: for channel c and block ℓ the votes are
K + Multinomial(n_ℓ - ΣK, uniform), with K_x ~ Bin(n_{ℓ,c,x}, p-q) the users of group ℓ
in channel c holding pattern x who keep their pattern (GRR = "keep with probability
p - q, else uniform", since p + (d-1) q = 1).  For b = 1 that is
Bin(n_{ℓ,c,1}, 1-f) + Bin(n_{ℓ,c,0}, f) + Bin(others, 1/2) with f the flip probability.
Exact and O(h 2^b) per block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp import hashing
from ldp._validation import check_generator, check_int
from ldp.heavy_hitters.base import HeavyHitterResult
from ldp.heavy_hitters.strawman import (
    BaselineParameters,
    Population,
    apply_variant,
    check_common,
    check_oracle,
    check_output,
    check_report_size,
    join_segments,
    release,
    segment,
    segment_bounds,
    stage_bar,
    to_dataset_values,
    unique_words,
)
from ldp.oracles import BLH, GRR, OLH
from ldp.registry import register

__all__ = ["MCM", "CHANNEL_RULES"]

#: Named channel counts: the paper's experiments (≈ √n) and its improvement (k^1.5).
CHANNEL_RULES = ("sqrt_n", "k1.5")
#: Reports engine: random report entries drawn per chunk of users.
CHUNK = 1 << 22
#: Largest block for the plurality vote (2^b counters per channel and block).
MAX_BLOCK_BITS = 16


@register(color="#fbafe4", order=120)
@dataclass(frozen=True, kw_only=True)
class MCM(BaselineParameters):
    """The Multiple Channel Method ([PEM] Sec. III-D), original or improved.

    Parameters
    ----------
    epsilon, k, m :
        Privacy budget ε > 0, heavy hitters wanted (1 <= k <= 2^m), bits per value.
    variant : {"improved", "original"}
        Sets every knob left at None at once ([PEM] Sec. VI-A); each stays overridable:

        * ``"original"``: ``oracle=BLH`` (Bassily-Smith's primitive, step 1),
          ``channels="sqrt_n"`` (h = ⌈√n⌉: the n^1.5 of [6] "is infeasible", and [PEM]
          Sec. VII says its experiments "already use around √n channels for MCM", the
          count Bassily et al. later prove sufficient), ``budget="split"`` (ε1 = ε2 =
          ε/2: Sec. VI-B6 says "the final testing step of MCM uses half of the ε"),
          ``output="threshold"``.
        * ``"improved"``: ``oracle=OLH``, ``channels="k1.5"`` (h = ⌈k^1.5⌉, step 2),
          ``budget="partition"`` (10% of the users for the final test, Sec. VI-B4),
          ``output="top_k"`` (step 3).
    oracle : type
        Frequency-oracle class of the final test (any of :mod:`ldp.oracles`).
    channels : int, "sqrt_n" or "k1.5"
        h, the number of channels (the hash range).  The names resolve at run time
        (√n needs the data's n); an integer must lie in [1, min(2^32, query_limit)].
    budget : {"split", "partition"}
        ``"split"``: each user reports π(v) with ε1 = ``value_share`` x ε and its channel
        bits with ε2 = ε - ε1.  ``"partition"``: ``final_fraction`` of the users report
        only π(v) at ε, the others only the channel bits at ε.
    output : {"top_k", "threshold"}
        ``"top_k"``: the k candidates with the highest final estimates.  ``"threshold"``:
        those passing :func:`~ldp.heavy_hitters.strawman.stage_bar` -- estimated
        frequency >= θ when ``threshold`` is given (Sec. VI-B3), else significantly
        above zero at level ``significance`` with a Bonferroni correction over the h
        candidates (the form of Bassily-Smith's test, estimate >= c√(n log(h/β))/ε,
        with the constant made explicit).
    threshold : float, optional
        θ in (0, 1) as a frequency; giving it selects ``output="threshold"``.
    significance : float
        Level of the significance test (0.05).
    final_fraction : float
        Share of users for the final test under partition (0.1).
    value_share : float
        ε1/ε under split (1/2).
    block_bits : int
        Bits per reported block (1, Bassily-Smith; [PEM] suggests e.g. 16).
    query_limit : int
        Oracle queries of a run (2^20): the h candidates of the final test.
    """

    channels: int | str | None = None
    block_bits: int = 1

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "original": {"oracle": BLH, "channels": "sqrt_n", "budget": "split", "output": "threshold"},
        "improved": {"oracle": OLH, "channels": "k1.5", "budget": "partition", "output": "top_k"},
    }

    def __post_init__(self) -> None:
        _, m, k = check_common(self)
        apply_variant(self, self.PRESETS)
        check_oracle(self.oracle)
        check_output(self)
        check_int(self.block_bits, "block_bits", minimum=1, maximum=min(m, MAX_BLOCK_BITS))
        if isinstance(self.channels, str):
            if self.channels not in CHANNEL_RULES:
                raise ValueError(
                    f"channels must be an integer or one of {CHANNEL_RULES}, got {self.channels!r}"
                )
            if self.channels == "k1.5":
                self._check_channels(math.ceil(k**1.5))
        else:
            self._check_channels(self.channels)

    def _check_channels(self, h: object) -> int:
        h = check_int(h, "channels", minimum=1, maximum=hashing.MAX_RANGE)
        if h > self.query_limit:
            raise ValueError(
                f"query_limit {self.query_limit} is below the {h} final-test queries of "
                f"channels={h}"
            )
        return h

    # --- shape ---------------------------------------------------------------------
    def n_channels(self, n: int) -> int:
        """h for a population of n users (resolves "sqrt_n" and "k1.5")."""
        if self.channels == "sqrt_n":
            return self._check_channels(max(1, math.isqrt(max(n - 1, 0)) + 1))
        if self.channels == "k1.5":
            return self._check_channels(math.ceil(self.k**1.5))
        return int(self.channels)

    @property
    def blocks(self) -> tuple[tuple[int, int], ...]:
        """The reported blocks (bit positions when ``block_bits`` is 1) as (start, length)."""
        return segment_bounds(self.m, self.block_bits)

    @property
    def epsilon_per_part(self) -> dict[str, float]:
        """ε1 of the whole-value report and ε2 of the channel bits."""
        if self.budget == "partition":
            return {"value": self.epsilon, "bits": self.epsilon}
        value = self.value_share * self.epsilon
        return {"value": value, "bits": self.epsilon - value}

    # --- the protocol ----------------------------------------------------------------
    def run(
        self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"
    ) -> HeavyHitterResult:
        """Identify the heavy hitters of ``dataset`` (see :class:`MCM`).

        ``engine="reports"`` runs the real per-user protocol (an n_ℓ x h report matrix per
        block group, generated in chunks); ``"sampled"`` draws the votes from their exact
        law given the histogram (module docstring).
        """
        rng = check_generator(rng)
        blocks = self.blocks
        partition = self.budget == "partition"
        offset = int(partition)
        fractions = [1 / len(blocks)] * len(blocks)
        if partition:
            share = (1 - self.final_fraction) / len(blocks)
            fractions = [self.final_fraction] + [share] * len(blocks)
        h = self.n_channels(dataset.n)
        eps = self.epsilon_per_part
        if engine == "reports":  # refuse infeasible report sizes before any work
            check_report_size(self.oracle(epsilon=eps["value"], domain_size=2**self.m), dataset.n)
        population = Population(dataset, self.m, fractions, engine, rng)
        seed = rng.integers(0, 2**64, dtype=np.uint64)  # the public hash H
        words = population.words
        channel = hashing.hash_values(words, np.full(len(words), seed, dtype=np.uint64), h)

        winners = []
        for position, (start, length) in enumerate(blocks):
            group, d = position + offset, 2**length
            grr = GRR(epsilon=eps["bits"], domain_size=d)  # randomised response on the block
            patterns = segment(words, self.m, start, length).astype(np.int64)
            if population.engine == "sampled":
                cells = np.bincount(
                    channel * d + patterns, weights=population.split[group], minlength=h * d
                )
                holders = np.rint(cells).astype(np.int64).reshape(h, d)
                kept = rng.binomial(holders, grr.p_star - grr.q_star)
                uniform = int(population.sizes[group]) - kept.sum(axis=1)
                votes = kept + rng.multinomial(uniform, np.full(d, 1 / d))
            else:
                votes = self._report_votes(
                    grr, channel, patterns, population.members([group]), h, rng
                )
            # majority (plurality) vote, ties broken uniformly at random
            noisy = votes + 0.5 * rng.random(votes.shape)
            winners.append(np.argmax(noisy, axis=1).astype(np.uint64))
        channel_candidates = join_segments(winners, blocks, self.m)
        candidates = unique_words(channel_candidates)

        value_groups = [0] if partition else list(range(len(blocks)))
        value_oracle = self.oracle(epsilon=eps["value"], domain_size=2**self.m)
        n_value = population.n_users(value_groups)
        estimates = population.value_estimates(value_oracle, value_groups, candidates, rng)
        bar = (
            stage_bar(value_oracle, n_value, self.threshold, self.significance, len(candidates))
            if self.output == "threshold"
            else None
        )
        identified, found = release(candidates, estimates, self.k, bar)
        diagnostics = {
            "groups": [int(size) for size in population.sizes],
            "group_roles": (["value"] if partition else [])
            + [f"bits {start}:{start + length}" for start, length in blocks],
            "channels": h,
            "blocks": [length for _, length in blocks],
            "candidates_per_step": [len(candidates)],
            "kept_per_step": [len(identified)],
            "channel_candidates": to_dataset_values(channel_candidates, self.m),
            "vote_cells": int(h * sum(2**length for _, length in blocks)),
            "oracle_queries": len(candidates),
            "epsilon_per_part": eps,
        }
        scale = population.n / max(n_value, 1)
        return HeavyHitterResult(to_dataset_values(identified, self.m), found * scale, diagnostics)

    @staticmethod
    def _report_votes(
        grr: GRR,
        channel: np.ndarray,
        patterns: np.ndarray,
        users: np.ndarray,
        h: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Reports engine: every user of a block group reports on all h channels.

        Entry j of a user's report is a uniform block pattern for j ≠ H(v) and GRR of the
        user's own pattern for j = H(v); the votes are the per-channel pattern counts.
        """
        d = grr.domain_size
        votes = np.zeros(h * d, dtype=np.int64)
        own = grr.perturb(patterns[users], rng)
        rows = max(1, CHUNK // h)
        column_base = np.arange(h, dtype=np.int64) * d
        for begin in range(0, len(users), rows):
            chunk = slice(begin, begin + rows)
            block = rng.integers(0, d, size=(len(users[chunk]), h))
            block[np.arange(block.shape[0]), channel[users[chunk]]] = own[chunk]
            votes += np.bincount((block + column_base).ravel(), minlength=h * d)
        return votes.reshape(h, d)
