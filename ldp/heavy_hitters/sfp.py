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

Engines.  :meth:`SFP.perturb` is the client (what every user sends, with the public H), and
``run(engine="reports")`` decodes those reports.  In the sampled engine each round's
estimates are drawn by the oracle's ``simulate_candidates`` from the histogram of the keys
(or values) the round's users report, as for PEM, SPM and MCM
(:class:`~ldp.heavy_hitters.base.Population`): exact whenever the oracle's sampled engine
is.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp import bits, hashing
from ldp.contract import Capabilities
from ldp.heavy_hitters.base import (
    ClientReports,
    HeavyHitterResult,
    Population,
    ReportGroup,
    UserReport,
    assign_groups,
    check_dataset,
    check_engine,
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

#: Candidates of the fragments' product built at a time (bounds assembly's memory).
ASSEMBLY_CHUNK = 2**16

#: The largest short hash: keys H(v) ‖ v[α] must fit the oracles' 64-bit values.
MAX_HASH_BITS = 24


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
        public_randomness=("public",),  # ClientReports.public: H's seed
        public_per_call=True,  # one short hash H per perturb call
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
        value = self.value_epsilon()
        return {
            "value": value,
            "fragment": self.epsilon if self.partitioned else self.epsilon - value,
        }

    # --- pieces ------------------------------------------------------------------------
    def short_hash(self, words: np.ndarray, seed: np.uint64) -> np.ndarray:
        """H(v) in [0, 2^b) for every value (word representation), one public function."""
        seeds = np.full(len(words), seed, dtype=np.uint64)
        return hashing.hash_values(words, seeds, 2**self.hash_bits).astype(np.uint64)

    def puzzle_keys(self, words: np.ndarray, hashes: np.ndarray, bound) -> np.ndarray:
        """H(v) ‖ v[α]: the hash above the fragment's s_α bits (uint64)."""
        start, length = bound
        return (hashes << np.uint64(length)) | segment(words, self.m, start, length)

    def assemble(
        self, kept: list[np.ndarray], seed: np.uint64, limit: int | None = None
    ) -> np.ndarray:
        """Candidates: per hash r, the product of the fragments kept with hash r.

        ``kept[α]`` are keys H ‖ fragment.  Candidates whose own hash differs from r are
        dropped.  Returns word-represented values (possibly empty): the first ``limit`` of
        them (all if None), in the order of the hashes r and, within one r, of the product
        (first fragment slowest).  The product is walked in chunks and stops once ``limit``
        candidates are found, so its memory never exceeds a chunk's.
        """
        bounds = self.bounds
        by_hash = []
        for keys, (_, length) in zip(kept, bounds, strict=True):
            keys = np.asarray(keys, dtype=np.uint64)
            by_hash.append((keys >> np.uint64(length), keys & np.uint64((1 << length) - 1)))
        shared = set(by_hash[0][0].tolist())
        for hashes, _ in by_hash[1:]:
            shared &= set(hashes.tolist())
        wanted = math.inf if limit is None else max(int(limit), 0)
        found: list[np.ndarray] = []
        total = 0
        for r in sorted(shared):
            parts = [fragments[hashes == r] for hashes, fragments in by_hash]
            shape = tuple(len(part) for part in parts)
            size = math.prod(shape)
            for start in range(0, size, ASSEMBLY_CHUNK):
                if total >= wanted:
                    break
                flat = np.arange(start, min(start + ASSEMBLY_CHUNK, size), dtype=np.int64)
                index = np.unravel_index(flat, shape)
                chunk = join_segments(
                    [part[i] for part, i in zip(parts, index, strict=True)], bounds, self.m
                )
                chunk = chunk[self.short_hash(chunk, seed) == np.uint64(r)]
                found.append(chunk)
                total += len(chunk)
        if not found:
            return join_segments([np.zeros(0, np.uint64)] * len(bounds), bounds, self.m)
        candidates = np.concatenate(found)
        return candidates if limit is None else candidates[: int(wanted)]

    def fragment_oracle(self, alpha: int):
        """The oracle of position α's keys H(v) ‖ v[α]: domain 2^{b + s_α}."""
        length = self.bounds[alpha][1]
        return self.oracle(
            epsilon=self.epsilon_per_part["fragment"], domain_size=2 ** (self.hash_bits + length)
        )

    def value_oracle(self):
        """The oracle of the whole-value reports: domain 2^m."""
        return self.oracle(epsilon=self.epsilon_per_part["value"], domain_size=2**self.m)

    def report_groups(
        self, *, n_users: int | None = None, rng: np.random.Generator
    ) -> tuple[ReportGroup, ...]:
        """Fragment group α sends its puzzle key H(v) ‖ v[α] through the fragment oracle,
        and π(v) under ``budget="split"``; under ``"partition"`` group 0 sends only π(v).

        The short hash H is public and drawn per run; its seed is drawn from ``rng`` as
        :meth:`run` draws it, so the groups are those of one run, whose H the adversary
        knows (``n_users`` does not change them).
        """
        seed = check_generator(rng).integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)
        sent = []
        for alpha, bound in enumerate(self.bounds):
            key = functools.partial(self._puzzle_key, seed=seed, bound=bound)
            sent.append((UserReport(self.fragment_oracle(alpha), key),))
        return self.groups_sending(sent)

    def _puzzle_key(self, words: np.ndarray, *, seed: np.uint64, bound) -> np.ndarray:
        """H(v) ‖ v[α] of every value (what a fragment user reports)."""
        return self.puzzle_keys(words, self.short_hash(words, seed), bound)

    # --- the client --------------------------------------------------------------------
    def perturb(
        self, values: np.ndarray, rng: np.random.Generator, hash_seed: int | None = None
    ) -> ClientReports:
        """What every user sends ([Apple] client, over m-bit values).

        Each user picks a group: a position α (its puzzle piece H(v) ‖ v[α] goes through
        the fragment oracle, ``parts[α]``) or, with ``budget="partition"``, group 0, whose
        users send only π(v) at full ε.  With ``budget="split"`` every user also sends
        π(v) (``value``, in user order).  ``hash_seed`` names the public short hash H
        (drawn from ``rng`` when None) and is returned in ``public``.
        """
        rng = check_generator(rng)
        if hash_seed is None:
            hash_seed = rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)
        seed = np.uint64(hash_seed)
        words = bits.to_words(np.asarray(values), self.m)
        partition = self.budget == "partition"
        groups = assign_groups(
            words.shape[0], np.asarray(self.group_fractions(len(self.bounds))), rng
        )
        hashes = self.short_hash(words, seed)
        parts = tuple(
            self.fragment_oracle(alpha).perturb(
                self.puzzle_keys(words, hashes, bound)[groups == alpha + int(partition)], rng
            )
            for alpha, bound in enumerate(self.bounds)
        )
        senders = groups == 0 if partition else np.ones(groups.shape[0], dtype=bool)
        value = self.value_oracle().perturb(words[senders], rng)
        return ClientReports(
            groups,
            parts,
            value,
            {"hash_seed": seed},
            senders=tuple((alpha + int(partition),) for alpha in range(len(self.bounds))),
            value_senders=tuple(self.value_groups(len(self.bounds))),
        )

    # --- the protocol ------------------------------------------------------------------
    def run(
        self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"
    ) -> HeavyHitterResult:
        """Identify the heavy hitters of ``dataset``; see :class:`SFP`.

        ``engine="reports"`` decodes :meth:`perturb`'s reports of the data set's users;
        ``"sampled"`` draws every round's estimates from their exact law given the
        histogram of what each group reports (:class:`~ldp.heavy_hitters.base.Population`).
        """
        engine, rng = check_engine(engine), check_generator(rng)
        check_dataset(dataset, self.m)
        bounds, g = self.bounds, len(self.bounds)
        eps = self.epsilon_per_part
        partition = self.budget == "partition"
        fractions = self.group_fractions(len(self.bounds))
        seed = rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)  # the public H
        if engine == "reports":
            share = [1.0] if not partition else [fractions[0]]
            check_report_size(self.value_oracle(), dataset.n * share[0])
            for alpha in range(g):
                check_report_size(self.fragment_oracle(alpha), dataset.n * fractions[-1])
            reports = self.perturb(dataset.values, rng, hash_seed=seed)
            population = Population.reported(reports, len(fractions))
        else:
            population = Population.sampled(dataset, self.m, fractions, rng)
            hashes = self.short_hash(population.words, seed)
        value_groups = [0] if partition else list(range(g))
        threshold = self.output == "threshold"

        kept, queries = [], []
        for alpha, bound in enumerate(bounds):
            oracle = self.fragment_oracle(alpha)
            groups = [alpha + int(partition)]
            domain = np.arange(2 ** (self.hash_bits + bound[1]), dtype=np.uint64)
            keys = None
            if engine == "sampled":
                keys = self.puzzle_keys(population.words, hashes, bound)
            estimates = population.estimates(
                oracle, domain, rng, groups=groups, part=alpha, keys=keys
            )
            queries.append(len(estimates))
            order = top(estimates, len(estimates) if threshold else self.fragment_keep)
            if threshold:
                n_alpha = population.n_users(groups)
                bar = stage_bar(oracle, n_alpha, self.threshold, self.significance, len(estimates))
                order = order[estimates[order] >= bar]
            kept.append(order.astype(np.uint64))
        candidates = self.assemble(kept, seed, limit=self.query_limit - sum(queries))

        value_oracle = self.value_oracle()
        n_value = population.n_users(value_groups)
        estimates = population.estimates(value_oracle, candidates, rng, groups=value_groups)
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
