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

[PEM] also notes that a user may report "a bigger block (such as 16 bit) at a time".
``block_bits`` = b > 1 does that, in one of two encodings of the block (``block_encoding``):

* ``"channels"`` (the Sec. III-D report, generalised): generalised randomised response
  over the 2^b patterns on the user's channel, uniform patterns on the others (again
  ε2-LDP), and a plurality vote per channel.  b = 1 is the original.  Each pattern keeps
  probability e^ε2/(e^ε2 + 2^b - 1), so the vote drowns for b >= 8 at usual ε.
* ``"oracle"`` (our reading of "bigger blocks" together with Sec. VI-A step 1, which puts
  OLH in place of BLH; *not* the paper's stated protocol): the user reports the pair
  (H(v), v[block]) -- one value of a domain of h 2^b -- through the configured frequency
  oracle at ε2, and the aggregator estimates all h 2^b pairs of every block (h 2^b
  queries a block, under the query limit) and keeps the best pattern of each channel.

Sampled engine.  ``"channels"``: for channel c and block ℓ the votes are
K + Multinomial(n_ℓ - ΣK, uniform), with K_x ~ Bin(n_{ℓ,c,x}, p-q) the users of group ℓ
in channel c holding pattern x who keep their pattern (GRR = "keep with probability
p - q, else uniform", since p + (d-1) q = 1).  For b = 1 that is
Bin(n_{ℓ,c,1}, 1-f) + Bin(n_{ℓ,c,0}, f) + Bin(others, 1/2) with f the flip probability.
``"oracle"``: the oracle's own exact sampled engine on the true counts of the h 2^b
(channel, pattern) pairs among group ℓ.  Both exact, O(h 2^b) per block.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp import bits, budget, hashing
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
    plurality,
)
from ldp.heavy_hitters.baseline import (
    BaselineParameters,
    Population,
    check_choice,
    join_segments,
    segment,
    segment_bounds,
    to_dataset_values,
    unique_words,
    variant_presets,
)
from ldp.oracles import BLH, GRR, FrequencyOracle
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_int

__all__ = ["BLOCK_ENCODINGS", "CHANNEL_RULES", "MCM", "ChannelReport"]

#: Named channel counts: the paper's experiments (≈ √n) and its improvement (k^1.5).
CHANNEL_RULES = ("sqrt_n", "k1.5")
#: How a block reaches the aggregator (module docstring).
BLOCK_ENCODINGS = ("channels", "oracle")
#: Reports engine: cells of channel reports counted at once, 16 bytes each while counted
#: (their int64 keys and the keys plus the channels' offsets).
CHUNK = 1 << 19
CHUNK_CELL_BYTES = 16
#: Reports engine: bytes a user costs beside its channel report while the reports are made
#: (its words, channel, group, block pattern, value report and their temporaries; 103
#: measured with tracemalloc at n = 10^6, h = 64).
REPORT_USER_BYTES = 112
#: Largest block (2^b counters or queries per channel and block).
MAX_BLOCK_BITS = 16


@dataclass(frozen=True)
class ChannelReport:
    """One user's block report under ``block_encoding="channels"``, as an oracle of its key.

    The key of a user is c 2^b + x, with c = H(v) its channel and x = v[block] its pattern
    (a domain of h 2^b keys).  The report is a row of h patterns: uniform on every channel
    but c, and GRR(x) at ε2 on channel c (p, q: GRR's realised probabilities), so

        Pr[r | (c, x)] = 2^{-b(h-1)} (p if r_c = x else q),

    ε2-LDP in the key, hence in v.  Used by :meth:`MCM.perturb` (the client) and by the
    adversary (:func:`ldp.adversary.heavy_hitter_success`, through
    :meth:`MCM.report_groups`): :meth:`log_likelihoods` and :meth:`adversary_success`.
    """

    epsilon: float
    channels: int
    bits: int

    @property
    def domain_size(self) -> int:
        """h 2^b keys."""
        return self.channels * 2**self.bits

    @property
    def own(self) -> GRR:
        """The randomised response on the user's own channel."""
        return GRR(epsilon=self.epsilon, domain_size=2**self.bits)

    def report_bytes(self, n_users: int) -> int:
        """Bytes of n reports: h patterns of one (b <= 8) or two bytes each."""
        return n_users * self.channels * (1 if self.bits <= 8 else 2)

    def perturb(self, keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(n, h) patterns: uniform everywhere, the own channel's through GRR (uint8/16)."""
        channel, pattern = np.divmod(np.asarray(keys, dtype=np.int64), 2**self.bits)
        dtype = np.uint8 if self.bits <= 8 else np.uint16
        matrix = rng.integers(0, 2**self.bits, size=(channel.shape[0], self.channels), dtype=dtype)
        matrix[np.arange(channel.shape[0]), channel] = self.own.perturb(pattern, rng)
        return matrix

    def log_likelihoods(self, reports: np.ndarray) -> np.ndarray:
        """ln Pr[r_i | key] up to a constant per report: ln p where r_c = x, ln q elsewhere
        ((n, h 2^b), key c 2^b + x)."""
        reports = np.asarray(reports, dtype=np.int64)
        hit = reports[:, :, None] == np.arange(2**self.bits)[None, None, :]
        own = self.own
        return np.where(hit, math.log(own.p_star), math.log(own.q_star)).reshape(
            reports.shape[0], -1
        )

    def adversary_success(self, prior: np.ndarray) -> float:
        """Σ_r max_key π_key Pr[r | key], exact, in O(h 2^b log(h 2^b)).

        Writing Pr[r | (c, x)] = 2^{-bh} L with L = 2^b p if r_c = x else 2^b q, the sum is
        E[max_c M_c(R_c)] over uniform independent patterns R_c, where
        M_c(z) = max(2^b p π_{c,z}, 2^b q max_x π_{c,x}) (0 for a channel nobody holds).
        The channels are independent, so P(max <= t) = Π_c G_c(t), G_c(t) the share of the
        2^b patterns z with M_c(z) <= t; the expectation is summed over the sorted levels.
        """
        d, own = 2**self.bits, self.own
        rho = np.asarray(prior, dtype=float).reshape(self.channels, d)
        top = rho.max(axis=1)
        held = top > 0
        levels = np.maximum(d * own.p_star * rho[held], d * own.q_star * top[held, None]).ravel()
        channel = np.repeat(np.arange(int(held.sum())), d)
        order = np.argsort(levels, kind="stable")
        levels, channel = levels[order], channel[order]
        by_channel = np.argsort(channel, kind="stable")  # within a channel: increasing level
        rank = np.empty(levels.shape[0], dtype=np.int64)
        rank[by_channel] = np.arange(levels.shape[0]) - np.repeat(
            np.arange(0, levels.shape[0], d), d
        )  # how many of the channel's levels come before this one
        # log G_c grows from log(rank/d) to log((rank+1)/d); the first level of a channel
        # takes G_c off zero, and F = Π_c G_c stays 0 until every channel has one
        change = np.log(rank + 1.0) - np.log(np.maximum(rank, 1))
        change[rank == 0] = -math.log(d)
        started = np.cumsum(rank == 0)
        cdf = np.where(started == channel.max() + 1, np.exp(np.cumsum(change)), 0.0)
        return float(np.dot(levels, np.diff(cdf, prepend=0.0)))


@register(color="#fbafe4", order=120)
@dataclass(frozen=True, kw_only=True)
class MCM(BaselineParameters):
    """The Multiple Channel Method ([PEM] Sec. III-D): original, improved or partitioned.

    Parameters
    ----------
    variant : {"improved", "original", "partitioned"}
        Sets every knob left at None at once
        (:func:`~ldp.heavy_hitters.baseline.variant_presets`); each stays overridable:

        * ``"original"``: ``oracle=BLH`` (Bassily-Smith's primitive, step 1),
          ``channels="sqrt_n"`` (h = ⌈√n⌉: the n^1.5 of [6] "is infeasible", and [PEM]
          Sec. VII says its experiments "already use around √n channels for MCM", the
          count Bassily et al. later prove sufficient), ``budget="split"`` (ε1 = ε2 =
          ε/2), ``output="threshold"``.
        * ``"improved"`` (Sec. VI-A, Figs. 5, 6, 7, 9): ``oracle=OLH`` (step 1),
          ``channels="k1.5"`` (h = ⌈k^1.5⌉, step 2), ``output="top_k"`` (step 3),
          ``budget="split"``: "the final testing step of MCM uses half of the ε"
          (Sec. VI-B6).
        * ``"partitioned"`` (Sec. VI-B4, Fig. 8a): improved with ``budget="partition"``
          (10% of the users for the final test, the others report only their bits at ε).
    channels : int, "sqrt_n" or "k1.5"
        h, the number of channels (the hash range).  The names resolve at run time
        (√n needs the data's n); an integer must lie in [1, min(2^31, query_limit)].
    block_bits : int
        b, bits per reported block (1, Bassily-Smith; [PEM] suggests e.g. 16).
    block_encoding : {"channels", "oracle"}
        ``"channels"`` (default): the Sec. III-D report on all h channels.  ``"oracle"``:
        the pair (channel, block) through ``oracle`` -- a labelled reading of the paper
        (module docstring), with h 2^b queries per block counted in ``query_limit``.
    output : {"top_k", "threshold"}
        ``"threshold"``: the candidates passing
        :func:`~ldp.heavy_hitters.baseline.stage_bar` -- estimated frequency >= θ when
        ``threshold`` is given (Sec. VI-B3), else significantly above zero at level
        ``significance`` with a Bonferroni correction over the h candidates (the form of
        Bassily-Smith's test, estimate >= c√(n log(h/β))/ε, with the constant made
        explicit).
    query_limit : int
        Oracle queries of a run (2^20): the h candidates of the final test, plus h 2^b per
        block under ``block_encoding="oracle"``.

    The other parameters (ε, k, m, ``oracle``, ``budget``, ``threshold``,
    ``significance``, ``final_fraction``, ``value_share`` = 1/2) are those of
    :class:`~ldp.heavy_hitters.baseline.BaselineParameters`; ε2 (the bits) is ε minus
    the value's share under split, ε under partition.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        # exact when its frequency oracle's simulate_candidates is (the default OLH's is)
        public_randomness=("public",),  # ClientReports.public: channels and H's seed
        public_per_call=True,  # one channel hash H per perturb call
        closed_form_variance=False,
    )

    channels: int | str | None = None
    block_bits: int = 1
    block_encoding: str = "channels"

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = variant_presets(
        original={"oracle": BLH, "channels": "sqrt_n", "output": "threshold"},
        improved={"channels": "k1.5"},
    )

    def __post_init__(self) -> None:
        _, m, k = self._check_parameters()
        check_int(self.block_bits, "block_bits", minimum=1, maximum=min(m, MAX_BLOCK_BITS))
        check_choice(self.block_encoding, "block_encoding", BLOCK_ENCODINGS)
        if isinstance(self.channels, str):
            if self.channels not in CHANNEL_RULES:
                raise ParameterError(
                    "channels", self.channels, f"an integer or one of {CHANNEL_RULES}"
                )
            h = math.ceil(k**1.5) if self.channels == "k1.5" else 1
        else:
            h = self.channels
        h = self._check_channels(h)
        eps = self.epsilon_per_part
        build_oracle(self.oracle, eps["value"], 2**m, "whole-value")
        for _, length in self.blocks:
            build_oracle(*self._block_oracle_spec(length, h), "block")

    def _block_oracle_spec(self, length: int, h: int) -> tuple[type[FrequencyOracle], float, int]:
        """(class, ε2, domain) of the oracle a user's block goes through."""
        if self.block_encoding == "oracle":
            return self.oracle, self.epsilon_per_part["bits"], h * 2**length
        return GRR, self.epsilon_per_part["bits"], 2**length

    def block_oracle(self, length: int, h: int) -> FrequencyOracle:
        """The oracle of a block of ``length`` bits with h channels (GRR on the own channel
        under ``"channels"``, the configured oracle on (channel, block) under ``"oracle"``)."""
        cls, epsilon, domain = self._block_oracle_spec(length, h)
        return cls(epsilon=epsilon, domain_size=domain)

    def queries(self, h: int) -> int:
        """Oracle queries of a run with h channels: the final test, and the blocks' pairs."""
        if self.block_encoding == "oracle":
            return h + sum(h * 2**length for _, length in self.blocks)
        return h

    def _check_channels(self, h: object) -> int:
        h = check_int(h, "channels", minimum=1, maximum=hashing.MAX_RANGE)
        if self.queries(h) > self.query_limit:
            raise ParameterError(
                "query_limit",
                self.query_limit,
                f">= {self.queries(h)}",
                message=(
                    f"query_limit {self.query_limit} is below the {self.queries(h)} oracle "
                    f"queries of channels={h} with block_bits={self.block_bits}, "
                    f"block_encoding={self.block_encoding!r}"
                ),
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
        """ε1 of the whole-value report and ε2 of the channel bits (or blocks)."""
        value = self.value_epsilon()
        return {"value": value, "bits": self.epsilon if self.partitioned else self.epsilon - value}

    # --- client ----------------------------------------------------------------------
    def perturb(
        self,
        values: np.ndarray,
        rng: np.random.Generator,
        *,
        channels: int | None = None,
        hash_seed: int | None = None,
    ) -> ClientReports:
        """What each user sends: a random block ℓ with its channel report, and/or π(v).

        Parameters
        ----------
        values : numpy.ndarray
            m-bit values in the data set's representation, one per user.
        rng : numpy.random.Generator
        channels, hash_seed : int, optional
            The run's public h and seed of the channel hash H; by default h for
            ``len(values)`` users and a seed drawn from ``rng``.

        Returns
        -------
        ClientReports
            ``parts[ℓ]``: for the users of block ℓ, an (n_ℓ, h) matrix of block patterns
            (``"channels"``: uniform except on the user's channel) or the oracle's reports
            of (H(v), v[block]) (``"oracle"``).  ``public`` holds h and the hash seed.
        """
        rng = check_generator(rng)
        words = bits.to_words(values, self.m)
        n = len(words)
        h = self.n_channels(n) if channels is None else self._check_channels(channels)
        if hash_seed is None:
            hash_seed = int(rng.integers(0, 2**64, dtype=np.uint64))
        channel = self.channel_of(words, h, hash_seed)
        blocks, offset = self.blocks, int(self.partitioned)
        groups = assign_groups(n, self.group_fractions(len(blocks)), rng)
        parts = []
        for position, (start, length) in enumerate(blocks):
            users = np.flatnonzero(groups == position + offset)
            patterns = segment(words[users], self.m, start, length).astype(np.int64)
            oracle = self.block_oracle(length, h)
            if self.block_encoding == "oracle":
                parts.append(oracle.perturb(channel[users] * 2**length + patterns, rng))
                continue
            report = ChannelReport(oracle.epsilon, h, length)
            parts.append(report.perturb(channel[users] * 2**length + patterns, rng))
        value = self.value_reports(words, groups, len(blocks), rng)
        return ClientReports(
            groups,
            tuple(parts),
            value,
            public={"channels": h, "hash_seed": hash_seed},
            senders=tuple((position + offset,) for position in range(len(blocks))),
            value_senders=tuple(self.value_groups(len(blocks))),
        )

    def report_groups(self, *, n_users: int, rng: np.random.Generator) -> tuple[ReportGroup, ...]:
        """Block group ℓ sends the report of its key H(v) 2^b + v[ℓ] (a
        :class:`ChannelReport`, or through ``oracle`` under ``block_encoding="oracle"``),
        and π(v) under ``budget="split"``; under ``"partition"`` group 0 sends only π(v).

        The channel hash H is public and drawn per run: h is that of ``n_users`` users and
        H's seed is drawn from ``rng`` (as :meth:`run` draws it), so the groups are those of
        one run, whose H the adversary knows.
        """
        rng = check_generator(rng)
        h = self.n_channels(check_int(n_users, "n_users", minimum=1))
        hash_seed = int(rng.integers(0, 2**64, dtype=np.uint64))
        sent = []
        for start, length in self.blocks:
            oracle = self.block_oracle(length, h)
            if self.block_encoding == "channels":
                oracle = ChannelReport(oracle.epsilon, h, length)
            key = functools.partial(
                self._block_key, h=h, hash_seed=hash_seed, start=start, length=length
            )
            sent.append((UserReport(oracle, key),))
        return self.groups_sending(sent)

    def _block_key(
        self, words: np.ndarray, *, h: int, hash_seed: int, start: int, length: int
    ) -> np.ndarray:
        """H(v) 2^b + v[start : start + length]: what a block's user reports."""
        patterns = segment(words, self.m, start, length).astype(np.int64)
        return self.channel_of(words, h, hash_seed) * 2**length + patterns

    @staticmethod
    def channel_of(words: np.ndarray, h: int, hash_seed: int) -> np.ndarray:
        """H(v), the public channel of each value (the seeded hash family of :mod:`ldp.hashing`)."""
        seeds = np.full(len(words), np.uint64(hash_seed), dtype=np.uint64)
        return hashing.hash_values(words, seeds, h).astype(np.int64)

    # --- the protocol ----------------------------------------------------------------
    def run(
        self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"
    ) -> HeavyHitterResult:
        """Identify the heavy hitters of ``dataset`` (see :class:`MCM`).

        ``engine="reports"`` aggregates :meth:`perturb`'s reports of the data set's users;
        ``"sampled"`` draws the votes (or block estimates) from their exact law given the
        histogram (module docstring).
        """
        engine, rng = check_engine(engine), check_generator(rng)
        check_dataset(dataset, self.m)
        blocks, offset = self.blocks, int(self.partitioned)
        h = self.n_channels(dataset.n)
        hash_seed = int(rng.integers(0, 2**64, dtype=np.uint64))  # the public hash H
        if engine == "reports":
            oracles = [self.block_oracle(length, h) for _, length in blocks]
            self.check_reports_engine(dataset.n, oracles if self.block_encoding == "oracle" else [])
            matrix_bytes = dataset.n * h * (1 if self.block_bits <= 8 else 2)
            counting = CHUNK_CELL_BYTES * min(CHUNK, dataset.n * h)
            counting += REPORT_USER_BYTES * dataset.n
            if self.block_encoding == "channels":
                budget.check_memory(
                    "engine",
                    "reports",
                    "'sampled' here",
                    matrix_bytes + counting,
                    f"the channel reports of {dataset.n} users on {h} channels, the "
                    "users' other arrays while they are made, and the chunk counted at once",
                )
            reports = self.perturb(dataset.values, rng, channels=h, hash_seed=hash_seed)
            population = Population.reported(reports, len(blocks) + offset)
        else:
            fractions = self.group_fractions(len(blocks))
            population = Population.sampled(dataset, self.m, fractions, rng)
        channel = None  # H(v) of the sampled engine's distinct values, shared by every block
        if population.engine == "sampled":
            channel = self.channel_of(population.words, h, hash_seed)
        winners = [  # plurality vote per channel: one candidate pattern per channel and block
            plurality(
                self.block_scores(population, position, h, hash_seed, rng, channel), rng
            ).astype(np.uint64)
            for position in range(len(blocks))
        ]
        channel_candidates = join_segments(winners, blocks, self.m)
        candidates = unique_words(channel_candidates)
        diagnostics = {
            "group_roles": (["value"] if self.partitioned else [])
            + [f"bits {start}:{start + length}" for start, length in blocks],
            "channels": h,
            "blocks": [length for _, length in blocks],
            "block_encoding": self.block_encoding,
            "candidates_per_step": [len(candidates)],
            "kept_per_step": [],
            "channel_candidates": to_dataset_values(channel_candidates, self.m),
            "vote_cells": int(h * sum(2**length for _, length in blocks)),
            "oracle_queries": self.queries(h) - h + len(candidates),
        }
        return self.final_test(population, len(blocks), candidates, rng, diagnostics)

    def block_scores(
        self,
        population: Population,
        position: int,
        h: int,
        hash_seed: int,
        rng: np.random.Generator,
        channel: np.ndarray | None = None,
    ) -> np.ndarray:
        """One block's (h, 2^b) votes (``"channels"``) or estimates (``"oracle"``).

        Row c, column x: the support of pattern x in channel c.  Reports engine: counted or
        estimated from the users' reports (which carry H); sampled engine: drawn from the
        exact law given who holds what (module docstring), with H named by ``hash_seed``
        (``channel``: H of ``population.words`` if already computed, the same for every
        block).
        """
        start, length = self.blocks[position]
        d, oracle = 2**length, self.block_oracle(length, h)
        if population.engine == "reports":
            reports = population.reports.parts[position]
            if self.block_encoding == "oracle":
                candidates = np.arange(h * d, dtype=np.int64)
                return oracle.estimate(reports, candidates=candidates).reshape(h, d)
            votes = np.zeros(h * d, dtype=np.int64)
            column_base = np.arange(h, dtype=np.int64) * d
            rows = max(1, CHUNK // h)
            for begin in range(0, reports.shape[0], rows):
                block = reports[begin : begin + rows].astype(np.int64) + column_base
                votes += np.bincount(block.ravel(), minlength=h * d)
            return votes.reshape(h, d)
        group = position + int(self.partitioned)
        n_group = int(population.sizes[group])
        if channel is None:
            channel = self.channel_of(population.words, h, hash_seed)
        keys = channel * d
        keys += segment(population.words, self.m, start, length).astype(np.int64)
        if self.block_encoding == "oracle":
            candidates = np.arange(h * d, dtype=np.int64)
            return population.estimates(oracle, candidates, rng, groups=[group], keys=keys).reshape(
                h, d
            )
        cells = np.bincount(keys, weights=population.split[group], minlength=h * d)
        holders = np.rint(cells).astype(np.int64)
        kept = rng.binomial(holders.reshape(h, d), oracle.p_star - oracle.q_star)
        uniform = n_group - kept.sum(axis=1)  # every other entry is a uniform pattern
        return kept + rng.multinomial(uniform, np.full(d, 1 / d))
