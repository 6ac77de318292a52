"""SFP, Apple's sequence fragment puzzle: heavy hitters nobody listed in advance.

``[Apple]`` is the Differential Privacy Team, Apple, *Learning with Privacy at Scale*
(2017), "Private Sequence Fragment Puzzle"; ``[Notes]`` the lecture notes on distributed
DP, Sec. 5.3; ``[PEM]`` Wang, Li, Jha, *Locally Differentially Private Heavy Hitter
Identification* (the Section VI protocols SFP is compared with).

Apple discovers new words: a device holding word w picks a position l, and privatises
the puzzle piece h(w) ‖ w[l : l+2] (a short hash of the whole word with the fragment at l)
into a fragment sketch, and w itself into a second, whole-word sketch.  The server finds
the frequent (hash, fragment) pairs at every position, assembles words from fragments that
share a hash, and keeps the words the whole-word sketch confirms.  The hash is what makes
the puzzle solvable: fragments are combined only within one hash value, so a frequent word
meets about one fragment per position instead of the k^g Cartesian product of [PEM]'s
strawman (Sec. III-B), which has no hash.

Here, over the m-bit values of [PEM] Sec. VI (as PEM, SPM and MCM see them):

* a public hash H: {0,1}^m -> {0,1}^b (``hash_bits`` b = 8, 256 hash values), drawn from
  the run's rng (:mod:`ldp.hashing`);
* the value is cut into g fragments of s bits (``segment_bits``; the last may be shorter);
* a fragment user picks a position α uniformly and reports the (b + s_α)-bit key
  H(v) ‖ v[α] through the frequency oracle (domain 2^{b+s_α});
* a value user reports v through the oracle (domain 2^m);
* the aggregator estimates every key of every position (Σ_α 2^{b+s_α} queries), keeps the
  ``fragment_keep`` best per position, and for each hash value r forms the product of the
  fragments kept with hash r at every position; a candidate whose own hash is not r cannot
  be a heavy hitter and is dropped (the server knows H); the candidates are estimated with
  the value reports and the k best (or those above a threshold) are released.

Budget.  ``budget="split"`` is Apple's: every user sends both reports, ε·``value_share``
on the value and the rest on the fragment (the ``"original"`` variant, ε/2 each, with
Apple's count-mean sketch as the oracle).  ``budget="partition"`` gives ``final_fraction``
(10%) of the users the whole value at full ε and the others one fragment at full ε: the
variance of a pure oracle's estimate grows like 1/ε², so halving ε costs a factor ~4 in
variance while halving the users costs 2 ([PEM] Sec. VI-B4, Proposition 1); this is the
``"partitioned"`` variant, the same "further" change [PEM] applies to SPM and MCM in
Fig. 8a.  ``"improved"`` is OLH with the budget split, as SPM and MCM are drawn in the
Section VI figures (Sec. VI-A, VI-B6).  Either way each user's reports are ε-LDP in all
(sequential composition for split; one report per user for partition).

Sampled engine.  Each round's estimates are drawn by the oracle's
``simulate_candidates`` from the true counts of its keys among the round's users, as for
PEM, SPM and MCM: exact for every oracle whose sampled engine is exact (all keys of a
position are queried, so no user holds a key outside the candidates; for the count-mean
sketches the final round passes the other values' counts too).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp import bits, hashing
from ldp.contract import Capabilities
from ldp.heavy_hitters.base import (
    HeavyHitterResult,
    assign_groups,
    check_engine,
    lookup,
    row_keys,
    split_counts,
    top,
)
from ldp.heavy_hitters.baseline import (
    BaselineParameters,
    check_report_size,
    choose_segment_bits,
    join_segments,
    release,
    segment,
    segment_bounds,
    stage_bar,
    to_dataset_values,
    variant_presets,
)
from ldp.oracles.count_mean_sketch import CMS
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_int

__all__ = ["SFP"]

#: The largest short hash: keys H(v) ‖ v[α] must fit the oracles' 64-bit values.
MAX_HASH_BITS = 24


class Users:
    """The users of one SFP run, as the chosen engine sees them.

    Parameters
    ----------
    dataset :
        A :class:`ldp.datasets.Dataset` (``values``, ``m``, ``n``, ``histogram()``).
    m : int
        The protocol's bits per value (checked against the data set).
    fractions : array_like
        The probability of each group; every user picks one independently.
    engine : {"sampled", "reports"}
        ``"reports"`` materialises every user and assigns groups with
        :func:`~ldp.heavy_hitters.base.assign_groups`; ``"sampled"`` keeps the histogram of
        distinct values and splits each value's count over the groups with a multinomial
        (:func:`~ldp.heavy_hitters.base.split_counts`), the same law.
    rng : numpy.random.Generator
    """

    def __init__(
        self,
        dataset: Any,
        m: int,
        fractions: Sequence[float],
        engine: str,
        rng: np.random.Generator,
    ) -> None:
        self.engine = check_engine(engine)
        rng = check_generator(rng)
        if dataset.m != m:
            raise ValueError(f"dataset has m = {dataset.m} bits, the protocol m = {m}")
        self.m = m
        fractions = np.asarray(fractions, dtype=float)
        if self.engine == "sampled":
            distinct, counts = dataset.histogram()
            self.words = bits.to_words(distinct, m)
            self.split = split_counts(counts, fractions, rng)
            self.sizes = self.split.sum(axis=1)
        else:
            self.words = bits.to_words(dataset.values, m)
            self.groups = assign_groups(dataset.n, fractions, rng)
            self.sizes = np.bincount(self.groups, minlength=len(fractions))
        self.n = int(self.sizes.sum())

    # --- who is where --------------------------------------------------------------
    def n_users(self, groups: Sequence[int]) -> int:
        """The number of users in the given groups."""
        return int(self.sizes[list(groups)].sum())

    def weights(self, groups: Sequence[int]) -> np.ndarray:
        """Sampled engine: how many users of the given groups hold each distinct value."""
        return self.split[list(groups)].sum(axis=0)

    def members(self, groups: Sequence[int]) -> np.ndarray:
        """Reports engine: the indices of the users in the given groups."""
        return np.flatnonzero(np.isin(self.groups, list(groups)))


@register(label="SFP", color="#e7298a", order=125)
@dataclass(frozen=True, kw_only=True)
class SFP(BaselineParameters):
    """Apple's sequence fragment puzzle over m-bit values.

    Parameters
    ----------
    epsilon, k, m :
        Privacy budget ε > 0, heavy hitters wanted (1 <= k <= 2^m), bits per value.
    variant : {"improved", "original", "partitioned"}
        Sets every knob left at None (each stays overridable):

        * ``"original"`` ([Apple] as described): ``oracle=CMS`` (the count-mean sketch),
          ``budget="split"`` (ε/2 on the fragment, ε/2 on the whole value),
          ``output="top_k"``, ``segment_bits="auto"``.
        * ``"improved"``: ``oracle=OLH``, ``budget="split"``, ``output="top_k"``,
          ``segment_bits="auto"``: the [PEM] Sec. VI-A conventions SPM and MCM are
          compared under in Figs. 5-7 and 9.
        * ``"partitioned"``: improved with ``budget="partition"`` (10% of the users report
          the whole value), as Fig. 8a's baselines.
    hash_bits : int
        b, the bits of the short hash (8: 256 hash values).
    segment_bits : int or "auto"
        s, the fragment length; ``"auto"`` is the fewest fragments whose queries
        Σ_α 2^{b+s_α} + k fit ``query_limit``.
    fragment_keep : int, optional
        (hash, fragment) keys kept per position (default 2k).
    oracle, budget, output, threshold, significance, final_fraction, value_share,
    query_limit :
        As for :class:`~ldp.heavy_hitters.strawman.Strawman`.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        # exact when its frequency oracle's simulate_candidates is (the default OLH's is)
        closed_form_variance=False,
    )

    segment_bits: int | str | None = None
    hash_bits: int = 8
    fragment_keep: int | None = None

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = variant_presets(
        original={"oracle": CMS, "segment_bits": "auto", "output": "top_k"},
        improved={"segment_bits": "auto"},
    )

    def __post_init__(self) -> None:
        _, m, k = self._check_parameters()
        check_int(self.hash_bits, "hash_bits", minimum=1, maximum=MAX_HASH_BITS)
        if self.fragment_keep is None:
            object.__setattr__(self, "fragment_keep", 2 * k)
        check_int(self.fragment_keep, "fragment_keep", minimum=1)
        largest = min(m, 64 - self.hash_bits)
        if self.segment_bits == "auto":
            s = choose_segment_bits(m, self.queries, self.query_limit, 1)
            object.__setattr__(self, "segment_bits", min(s, largest))
        elif isinstance(self.segment_bits, str):
            raise ParameterError("segment_bits", self.segment_bits, "'auto' or an integer")
        s = check_int(self.segment_bits, "segment_bits", minimum=1, maximum=largest)
        if self.queries(segment_bounds(m, s)) > self.query_limit:
            needed = self.queries(segment_bounds(m, s))
            raise ParameterError(
                "query_limit",
                self.query_limit,
                f">= {needed}",
                message=(
                    f"query_limit {self.query_limit} is below one run's {needed} oracle "
                    f"queries with segment_bits={s}"
                ),
            )

    def queries(self, bounds) -> int:
        """Oracle queries of a run: every (hash, fragment) key of every position, plus k."""
        return sum(2 ** (self.hash_bits + length) for _, length in bounds) + self.k

    @property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """The fragments as (start, length) pairs."""
        return segment_bounds(self.m, self.segment_bits)

    @property
    def epsilon_per_part(self) -> dict[str, float]:
        """ε a user spends on the whole value and on the fragment."""
        if self.budget == "partition":
            return {"value": self.epsilon, "fragment": self.epsilon}
        value = self.value_share * self.epsilon
        return {"value": value, "fragment": self.epsilon - value}

    # --- pieces ------------------------------------------------------------------------
    def short_hash(self, words: np.ndarray, seed: np.uint64) -> np.ndarray:
        """H(v) in [0, 2^b) for every value (word representation), one public function."""
        seeds = np.full(len(words), seed, dtype=np.uint64)
        return hashing.hash_values(words, seeds, 2**self.hash_bits).astype(np.uint64)

    def puzzle_keys(self, words: np.ndarray, hashes: np.ndarray, bound) -> np.ndarray:
        """H(v) ‖ v[α]: the hash above the fragment's s_α bits (uint64)."""
        start, length = bound
        return (hashes << np.uint64(length)) | segment(words, self.m, start, length)

    def assemble(self, kept: list[np.ndarray], seed: np.uint64) -> np.ndarray:
        """Candidates: per hash r, the product of the fragments kept with hash r.

        ``kept[α]`` are keys H ‖ fragment.  Candidates whose own hash differs from r are
        dropped.  Returns word-represented values (possibly empty).
        """
        bounds = self.bounds
        by_hash = []
        for keys, (_, length) in zip(kept, bounds, strict=True):
            keys = np.asarray(keys, dtype=np.uint64)
            by_hash.append((keys >> np.uint64(length), keys & np.uint64((1 << length) - 1)))
        shared = set(by_hash[0][0].tolist())
        for hashes, _ in by_hash[1:]:
            shared &= set(hashes.tolist())
        pieces: list[list[np.ndarray]] = [[] for _ in bounds]
        for r in sorted(shared):
            parts = [fragments[hashes == r] for hashes, fragments in by_hash]
            grids = np.meshgrid(*parts, indexing="ij")
            for alpha, grid in enumerate(grids):
                pieces[alpha].append(grid.ravel())
        if not shared:
            return join_segments([np.zeros(0, np.uint64)] * len(bounds), bounds, self.m)
        candidates = join_segments([np.concatenate(p) for p in pieces], bounds, self.m)
        owners = [
            np.full(len(p), r, dtype=np.uint64)
            for r, p in zip(sorted(shared), pieces[0], strict=True)
        ]
        hashes = np.concatenate(owners)
        return candidates[self.short_hash(candidates, seed) == hashes]

    # --- the protocol ------------------------------------------------------------------
    def run(
        self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"
    ) -> HeavyHitterResult:
        """Identify the heavy hitters of ``dataset``; see :class:`SFP`.

        ``engine="reports"`` runs the real per-user protocol; ``"sampled"`` draws every
        round's estimates from their exact law given the histogram.
        """
        rng = check_generator(rng)
        bounds, g = self.bounds, len(self.bounds)
        eps = self.epsilon_per_part
        partition = self.budget == "partition"
        fractions = [1 / g] * g
        if partition:  # group 0 reports only the value
            fractions = [self.final_fraction] + [(1 - self.final_fraction) / g] * g
        if engine == "reports":
            check_report_size(self.oracle(epsilon=eps["value"], domain_size=2**self.m), dataset.n)
        seed = rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)  # the public H
        population = Users(dataset, self.m, fractions, engine, rng)
        hashes = self.short_hash(population.words, seed)
        fragment_groups = [[alpha + int(partition)] for alpha in range(g)]
        value_groups = [0] if partition else list(range(g))
        threshold = self.output == "threshold"

        kept, queries = [], []
        for alpha, bound in enumerate(bounds):
            oracle = self.oracle(
                epsilon=eps["fragment"], domain_size=2 ** (self.hash_bits + bound[1])
            )
            groups = fragment_groups[alpha]
            estimates = self._fragment_estimates(population, oracle, groups, hashes, bound, rng)
            queries.append(len(estimates))
            order = top(estimates, len(estimates) if threshold else self.fragment_keep)
            if threshold:
                n_alpha = population.n_users(groups)
                bar = stage_bar(oracle, n_alpha, self.threshold, self.significance, len(estimates))
                order = order[estimates[order] >= bar]
            kept.append(order.astype(np.uint64))
        candidates = self.assemble(kept, seed)
        limit = self.query_limit - sum(queries)
        candidates = candidates[:limit]

        value_oracle = self.oracle(epsilon=eps["value"], domain_size=2**self.m)
        n_value = population.n_users(value_groups)
        estimates = self._value_estimates(population, value_oracle, value_groups, candidates, rng)
        bar = (
            stage_bar(value_oracle, n_value, self.threshold, self.significance, len(candidates))
            if threshold
            else None
        )
        identified, found = release(candidates, estimates, self.k, bar)
        scale = population.n / max(n_value, 1)
        diagnostics = {
            "groups": [int(size) for size in population.sizes],
            "group_roles": (["value"] if partition else [])
            + [f"fragment {alpha}" for alpha in range(g)],
            "segments": [length for _, length in bounds],
            "hash_bits": self.hash_bits,
            "candidates_per_step": queries + [len(candidates)],
            "kept_per_step": [len(c) for c in kept] + [len(identified)],
            "oracle_queries": int(sum(queries) + len(candidates)),
            "epsilon_per_part": eps,
        }
        return HeavyHitterResult(to_dataset_values(identified, self.m), found * scale, diagnostics)

    def _fragment_estimates(self, population, oracle, groups, hashes, bound, rng) -> np.ndarray:
        """Estimated counts of all 2^{b+s_α} keys H ‖ v[α] among the given groups."""
        size = 2 ** (self.hash_bits + bound[1])
        keys = self.puzzle_keys(population.words, hashes, bound)
        if population.engine == "sampled":
            weights = population.weights(groups)
            counts = np.bincount(keys.astype(np.int64), weights=weights, minlength=size)
            return oracle.simulate_candidates(
                np.rint(counts).astype(np.int64), population.n_users(groups), rng
            )
        users = population.members(groups)
        check_report_size(oracle, len(users))
        domain = np.arange(size, dtype=np.uint64)
        return oracle.estimate(oracle.perturb(keys[users], rng), candidates=domain)

    def _value_estimates(self, population, oracle, groups, candidates, rng) -> np.ndarray:
        """The candidates' estimated counts from the value reports.

        An oracle whose exact law also depends on how the other users' values repeat (a
        count-mean sketch: they collide together) says so by taking ``other_counts`` in
        ``simulate_candidates``; its sampled engine then gets their counts.
        """
        if population.engine == "sampled" and _takes_other_counts(oracle):
            weights = population.weights(groups)
            counts = lookup(population.words, weights, candidates)
            others = weights.astype(np.int64)
            found = np.isin(row_keys(population.words), row_keys(candidates))
            others = others[~found & (others > 0)]
            return oracle.simulate_candidates(
                counts, population.n_users(groups), rng, other_counts=others
            )
        if len(candidates) == 0 and population.engine == "sampled":
            return np.zeros(0)
        if population.engine == "sampled":
            counts = lookup(population.words, population.weights(groups), candidates)
            return oracle.simulate_candidates(counts, population.n_users(groups), rng)
        users = population.members(groups)
        check_report_size(oracle, len(users))
        reports = oracle.perturb(population.words[users], rng)
        if len(candidates) == 0:
            return np.zeros(0)
        return oracle.estimate(reports, candidates=candidates)


def _takes_other_counts(oracle: Any) -> bool:
    """Whether ``oracle.simulate_candidates`` takes the other users' counts (``other_counts``)."""
    return "other_counts" in inspect.signature(oracle.simulate_candidates).parameters
