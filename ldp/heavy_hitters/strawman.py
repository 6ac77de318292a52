"""The strawman of [PEM] Sec. III-B, and the segment machinery it shares with SPM and MCM.

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*
(``shared/papers/pem-heavy-hitters-paper.txt``).  Section III-B splits an m-bit value
into g segments v[(α-1)s : αs] of s bits; each user reports the whole value and one
random segment, the aggregator keeps the frequent patterns C_α of each segment and
tests the Cartesian product C_1 x ... x C_g with the whole-value reports.  SPM
(:mod:`ldp.heavy_hitters.spm`, Sec. III-C) and MCM (:mod:`ldp.heavy_hitters.mcm`,
Sec. III-D) are the two ways the paper says the literature improves on it, so the pieces
they share live here:

* segments: :func:`segment_bounds`, :func:`segment` (bits [start, start+length) of every
  value as a right-aligned integer) and :func:`join_segments` (its inverse);
* the two budgets of Sec. VI-A/VI-B4: ``"split"`` (every user reports every part, the
  privacy budget divided between the parts) and ``"partition"`` (a fraction of the users,
  10% in the paper, reports only the whole value at the full ε);
* the two outputs of Sec. VI-A step 3 / VI-B3: ``"top_k"`` and ``"threshold"``, and the
  threshold test itself (:func:`stage_bar`);
* :class:`Population`: the users of one run as each engine sees them (DESIGN.md §2-3).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ldp import bits
from ldp._validation import check_epsilon, check_generator, check_int
from ldp.heavy_hitters.base import (
    HeavyHitterResult,
    assign_groups,
    check_engine,
    lookup,
    split_counts,
    top,
)
from ldp.oracles import OLH, FrequencyOracle
from ldp.oracles.base import MAX_REPORT_BYTES
from ldp.registry import register

__all__ = [
    "BUDGETS",
    "DEFAULT_QUERY_LIMIT",
    "OUTPUTS",
    "VARIANTS",
    "Population",
    "Strawman",
    "join_segments",
    "segment",
    "segment_bounds",
    "stage_bar",
]

#: [PEM] Sec. IV-C / VI-A: at most 2^20 frequency-oracle queries per run.
DEFAULT_QUERY_LIMIT = 2**20
VARIANTS = ("original", "improved")
BUDGETS = ("split", "partition")
OUTPUTS = ("top_k", "threshold")


# ------------------------------------------------------------------------- validation
def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """``value`` must be one of ``choices`` (a ValueError naming the parameter otherwise)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_fraction(value: object, name: str) -> float:
    """A real number strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not 0 < float(value) < 1:  # also rejects NaN
        raise ValueError(f"{name} must lie in (0, 1), got {value}")
    return float(value)


def check_oracle(oracle: object, name: str = "oracle") -> type[FrequencyOracle]:
    """A frequency-oracle *class* of :mod:`ldp.oracles` (the protocol builds instances)."""
    if not (isinstance(oracle, type) and issubclass(oracle, FrequencyOracle)):
        raise TypeError(
            f"{name} must be a frequency-oracle class from ldp.oracles (e.g. OLH), got {oracle!r}"
        )
    return oracle


def check_common(protocol: Any) -> tuple[float, int, int]:
    """Check and normalise ``epsilon``, ``m``, ``k``, ``query_limit`` of a protocol."""
    epsilon = check_epsilon(protocol.epsilon)
    m = check_int(protocol.m, "m", minimum=1)
    if m > 64 and m % 8:
        raise ValueError(f"m must be a multiple of 8 when m > 64 (bytes values), got {m}")
    k = check_int(protocol.k, "k", minimum=1, maximum=2**m)
    check_int(protocol.query_limit, "query_limit", minimum=1)
    for attr, value in (("epsilon", epsilon), ("m", m), ("k", k)):
        object.__setattr__(protocol, attr, value)
    return epsilon, m, k


def apply_variant(protocol: Any, presets: dict[str, dict[str, Any]]) -> None:
    """Fill every knob left at None from ``presets[protocol.variant]`` ([PEM] Sec. VI-A).

    Knobs given explicitly win, so variants change "one change at a time".  A preset may
    be a plain function of the protocol (e.g. a segment length that depends on m).
    """
    variant = check_choice(protocol.variant, "variant", VARIANTS)
    if protocol.threshold is not None and protocol.output is None:
        object.__setattr__(protocol, "output", "threshold")  # a θ selects the threshold version
    for attr, value in presets[variant].items():
        if getattr(protocol, attr) is None:
            if callable(value) and not isinstance(value, type):
                value = value(protocol)
            object.__setattr__(protocol, attr, value)


def paper_segment_bits(protocol: Any) -> int:
    """16 bits, the two bytes of Fanti et al.'s URL segments ([PEM] Sec. VI-A step 2).

    For m <= 16 that would leave a single segment, so ⌈m/2⌉ (two segments) is used.
    """
    return 16 if protocol.m > 16 else max(1, -(-protocol.m // 2))


def check_output(protocol: Any) -> None:
    """``output`` and ``threshold`` together: a θ implies (and needs) the threshold version."""
    if protocol.threshold is not None:
        check_fraction(protocol.threshold, "threshold")
        object.__setattr__(protocol, "threshold", float(protocol.threshold))
    check_choice(protocol.output, "output", OUTPUTS)
    if protocol.output == "top_k" and protocol.threshold is not None:
        raise ValueError("threshold is only used with output='threshold', got output='top_k'")
    check_fraction(protocol.significance, "significance")
    check_choice(protocol.budget, "budget", BUDGETS)
    check_fraction(protocol.final_fraction, "final_fraction")
    check_fraction(protocol.value_share, "value_share")


# ---------------------------------------------------------------------------- segments
def segment_bounds(m: int, segment_bits: int) -> tuple[tuple[int, int], ...]:
    """The g = ⌈m/s⌉ segments v[(α-1)s : αs] of [PEM] Sec. III-B as (start, length) pairs.

    The last segment is shorter when s does not divide m.
    """
    m = check_int(m, "m", minimum=1)
    s = check_int(segment_bits, "segment_bits", minimum=1, maximum=m)
    return tuple((start, min(s, m - start)) for start in range(0, m, s))


def segment(values: np.ndarray, m: int, start: int, length: int) -> np.ndarray:
    """Bits v[start : start+length] of every m-bit value, as a right-aligned ``np.uint64``.

    Computed from :func:`ldp.bits.prefix`: the prefix of length start+length, masked to
    its last ``length`` bits (1 <= length <= 64).  ``values`` is any representation that
    :func:`ldp.bits.prefix` accepts (uint64, bytes, or word rows).
    """
    length = check_int(length, "length", minimum=1, maximum=64)
    head = bits.prefix(values, m, start + length)
    low = head if head.ndim == 1 else head[:, -1]
    if length == 64:
        return np.ascontiguousarray(low)
    return low & np.uint64((1 << length) - 1)


def join_segments(
    patterns: Sequence[np.ndarray], bounds: Sequence[tuple[int, int]], m: int
) -> np.ndarray:
    """Concatenate one pattern per segment into whole values (c_1 || c_2 || ... || c_g).

    The ``||`` of [PEM] Sec. III-B.  ``patterns[α]`` holds the right-aligned patterns of
    segment α (one per output value); segments need not cover all m bits (missing bits
    are 0).  Returns the :mod:`ldp.bits` word representation: 1-D ``np.uint64`` when
    m <= 64, else an (n, ceil(m/64)) word matrix.
    """
    count = bits.n_words(m)
    pad = 64 * count - m  # zero bits on the left of the first word
    size = len(patterns[0]) if len(patterns) else 0
    out = np.zeros((size, count), dtype=np.uint64)
    for pattern, (start, length) in zip(patterns, bounds, strict=True):
        pattern = np.asarray(pattern, dtype=np.uint64)
        first_bit, end = pad + start, pad + start + length  # from the left, end exclusive
        last_word = (end - 1) // 64
        shift = 64 * (last_word + 1) - end
        out[:, last_word] |= pattern << np.uint64(shift)
        if first_bit // 64 != last_word:  # the segment straddles two words (shift > 0)
            out[:, last_word - 1] |= pattern >> np.uint64(64 - shift)
    return out[:, 0] if m <= 64 else out


def to_dataset_values(words: np.ndarray, m: int) -> np.ndarray:
    """Word representation back to the data set's: uint64 (m <= 64) or bytes ``S{m/8}``."""
    if m <= 64:
        return np.asarray(words, dtype=np.uint64)
    return bits.words_to_bytes(words, m // 8)


def unique_words(words: np.ndarray) -> np.ndarray:
    """Distinct values of a word array (1-D or word rows), in first-occurrence order."""
    if len(words) == 0:
        return words
    rows = np.ascontiguousarray(words)
    keys = rows if rows.ndim == 1 else rows.view(np.dtype((np.void, 8 * rows.shape[1])))[:, 0]
    _, first = np.unique(keys, return_index=True)
    return words[np.sort(first)]


# -------------------------------------------------------------------- threshold test
def stage_bar(
    oracle: FrequencyOracle,
    n_users: int,
    threshold: float | None,
    significance: float,
    tests: int,
    sigma: float | None = None,
) -> float:
    """The estimated count a pattern or value must reach to pass a threshold test.

    * ``threshold`` θ given (a frequency, [PEM] Sec. VI-B3): estimate >= θ n_users, where
      n_users are the users whose reports the estimate comes from.  By the a-priori
      principle ([PEM] Sec. III-C) a value of frequency >= θ has every segment pattern and
      every segment pair at frequency >= θ too, so one θ serves every stage.
    * ``threshold`` None: a significance test, estimate >= z_{1-α/T} σ_0: one-sided at
      level α, Bonferroni-corrected over the T patterns tested in the stage, with σ_0 the
      standard deviation of a zero-count estimate (``oracle.variance(n_users)``, [FO]
      Table 1) unless given.  [PEM] does not say which threshold the original protocols
      use; this is our reading of their "statistically significant" candidate selection
      (RAPPOR-style decoding for SPM, Bassily-Smith's c√(n log(h/β))/ε bound for MCM).
    """
    if threshold is not None:
        return float(threshold) * n_users
    if sigma is None:
        sigma = math.sqrt(oracle.variance(max(int(n_users), 1)))
    return float(stats.norm.isf(significance / max(int(tests), 1)) * sigma)


def release(
    values: np.ndarray, estimates: np.ndarray, k: int, bar: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The final output ([PEM] Sec. VI-A step 3): the top k, or all at/above ``bar``.

    Highest estimate first in both cases.
    """
    order = top(estimates, len(estimates))
    values, estimates = values[order], estimates[order]
    if bar is None:
        return values[:k], estimates[:k]
    keep = estimates >= bar
    return values[keep], estimates[keep]


# ------------------------------------------------------------------------- population
class Population:
    """The users of one run, as the chosen engine sees them (DESIGN.md §2-3).

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

    # --- frequency-oracle rounds ---------------------------------------------------
    def segment_estimates(
        self,
        oracle: FrequencyOracle,
        groups: Sequence[int],
        bound: tuple[int, int],
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Estimated counts of all 2^length patterns of a segment among the given groups.

        Reports engine: the users perturb their segment with ``oracle`` and the aggregator
        estimates every pattern; sampled engine: the patterns' true counts among those
        users, then :meth:`~ldp.oracles.FrequencyOracle.simulate_candidates`.
        """
        start, length = bound
        domain = np.arange(2**length, dtype=np.uint64)
        if self.engine == "sampled":
            keys = segment(self.words, self.m, start, length).astype(np.int64)
            counts = np.bincount(keys, weights=self.weights(groups), minlength=2**length)
            return oracle.simulate_candidates(
                np.rint(counts).astype(np.int64), self.n_users(groups), rng
            )
        users = self.members(groups)
        check_report_size(oracle, len(users))
        values = segment(self.words[users], self.m, start, length)
        return oracle.estimate(oracle.perturb(values, rng), candidates=domain)

    def value_estimates(
        self,
        oracle: FrequencyOracle,
        groups: Sequence[int],
        candidates: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Estimated counts of distinct whole-value candidates among the given groups."""
        if self.engine == "sampled":
            counts = lookup(self.words, self.weights(groups), candidates)
            return oracle.simulate_candidates(counts, self.n_users(groups), rng)
        users = self.members(groups)
        check_report_size(oracle, len(users))
        reports = oracle.perturb(self.words[users], rng)
        if len(candidates) == 0:
            return np.zeros(0)
        return oracle.estimate(reports, candidates=candidates)


def check_report_size(oracle: FrequencyOracle, n_users: int) -> None:
    """Refuse a reports-engine round whose reports cannot be held in memory.

    The oracle knows its report size (:meth:`FrequencyOracle.report_bytes`: d bits a user
    for the unary encodings SUE = basic RAPPOR, OUE and THE, d int32 for SHE): over a 2^64
    domain no deployment can send that, only the sampled engine (which needs p* and q*
    alone) can simulate it.
    """
    total = oracle.report_bytes(n_users)
    if total > MAX_REPORT_BYTES:
        raise ValueError(
            f"the reports engine of {oracle.name} over a domain of {oracle.domain_size} values "
            f"needs {total:.3g} bytes of reports for {n_users} users; use engine='sampled' "
            "(or shorter values)"
        )


def choose_segment_bits(m: int, queries: Any, query_limit: int, minimum_segments: int) -> int:
    """``segment_bits="auto"``: the fewest segments whose queries fit the limit ([PEM] Obs. 1).

    Section VI-A makes "the segment length as long as possible, under the frequency oracle
    query limit", guided by Observation 1 (fewer groups is better).  For g = 2, 3, ...
    segments we take s = ⌈m/g⌉ and return the first s whose run fits ``query_limit``.
    Among the lengths giving that g, the shortest is kept: a longer s at the same g adds
    only zero-frequency patterns to each segment's query set (the N[i] of Eq. (5)).
    """
    for g in range(max(1, minimum_segments), m + 1):
        s = -(-m // g)
        if len(segment_bounds(m, s)) < minimum_segments:
            continue
        if queries(segment_bounds(m, s)) <= query_limit:
            return s
    raise ValueError(
        f"query_limit {query_limit} is below the queries of one run even with 1-bit segments"
    )


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


# --------------------------------------------------------------------------- strawman
@dataclass(frozen=True, kw_only=True)
class BaselineParameters:
    """The parameters SPM, MCM and the strawman share ([PEM] Sec. VI-A's knobs).

    ``variant`` fills every knob left at None from the class's ``PRESETS``; ``budget``
    ("split" or "partition"), ``output`` ("top_k" or "threshold"), ``threshold``,
    ``significance``, ``final_fraction`` and ``value_share`` are documented on each class.
    """

    epsilon: float
    k: int
    m: int
    variant: str = "improved"
    oracle: type[FrequencyOracle] | None = None
    budget: str | None = None
    output: str | None = None
    threshold: float | None = None
    significance: float = 0.05
    final_fraction: float = 0.1
    value_share: float = 0.5
    query_limit: int = DEFAULT_QUERY_LIMIT


@register(order=130)
@dataclass(frozen=True, kw_only=True)
class Strawman(BaselineParameters):
    """The strawman heavy-hitter protocol of [PEM] Sec. III-B.

    A value is cut into g segments of s bits.  Each user picks a segment α at random and
    reports ⟨π(v), α, π(v[(α-1)s : αs])⟩; the aggregator estimates all 2^s patterns of
    each segment (2^s x g queries), keeps the frequent ones C_α, and tests
    C = C_1 x ... x C_g with the whole-value reports π(v).

    Parameters
    ----------
    epsilon, k, m :
        Privacy budget ε > 0, heavy hitters wanted (1 <= k <= 2^m), bits per value.
    variant : {"improved", "original"}
        Sets every knob left at None at once (each one stays overridable):

        * ``"original"`` (Sec. III-B as written): ``oracle=OLH`` ("it is natural to use
          OLH"), ``segment_bits=16`` (the section's example; ⌈m/2⌉ when m <= 16, see
          :func:`paper_segment_bits`),
          ``budget="split"`` (every user reports both parts), ``output="top_k"``.
        * ``"improved"`` (the Sec. VI-A changes that apply): ``oracle=OLH``,
          ``segment_bits="auto"``, ``budget="partition"``, ``output="top_k"``.
    oracle : type
        Frequency-oracle class of :mod:`ldp.oracles`; instances are built as
        ``oracle(epsilon=..., domain_size=2**bits)``.  Any oracle works here.
    segment_bits : int or "auto"
        s.  ``"auto"`` is :func:`choose_segment_bits`: the fewest segments that fit.
    budget : {"split", "partition"}
        ``"split"``: each user spends ``value_share`` x ε on π(v) and the rest on the
        segment.  ``"partition"`` (Sec. VI-B4, Proposition 1): ``final_fraction`` of the
        users report only π(v) at ε, the others only their segment at ε.
    output : {"top_k", "threshold"}
        ``"top_k"``: C_α = the k best patterns of each segment and the k best final values
        (Sec. VI-A step 3).  ``"threshold"``: patterns and values that pass
        :func:`stage_bar` (θ = ``threshold`` as a frequency, or a significance test).
    threshold : float, optional
        θ in (0, 1); giving it selects ``output="threshold"``.
    significance : float
        The Bonferroni-corrected level of the significance test used when ``threshold``
        is None in the threshold version (0.05).
    final_fraction, value_share : float
        The share of users (partition) or of ε (split) for the whole-value test.
    query_limit : int
        Oracle queries allowed in one run (2^20, Sec. IV-C): Σ 2^{s_α} for the segments
        plus the candidates; the Cartesian product is shrunk to fit (:func:`cap_product`).
    """

    segment_bits: int | str | None = None

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "original": {
            "oracle": OLH,
            "segment_bits": paper_segment_bits,
            "budget": "split",
            "output": "top_k",
        },
        "improved": {
            "oracle": OLH,
            "segment_bits": "auto",
            "budget": "partition",
            "output": "top_k",
        },
    }

    def __post_init__(self) -> None:
        _, m, k = check_common(self)
        apply_variant(self, self.PRESETS)
        check_oracle(self.oracle)
        check_output(self)
        if self.segment_bits == "auto":
            s = choose_segment_bits(m, self.queries, self.query_limit, 1)
            object.__setattr__(self, "segment_bits", s)
        elif isinstance(self.segment_bits, str):
            raise ValueError(
                f"segment_bits must be 'auto' or an integer, got {self.segment_bits!r}"
            )
        s = check_int(self.segment_bits, "segment_bits", minimum=1, maximum=min(m, 64))
        if self.queries(segment_bounds(m, s)) > self.query_limit:
            raise ValueError(
                f"query_limit {self.query_limit} is below one run's "
                f"{self.queries(segment_bounds(m, s))} oracle queries with segment_bits={s}"
            )

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
        if self.budget == "partition":
            return {"value": self.epsilon, "segment": self.epsilon}
        value = self.value_share * self.epsilon
        return {"value": value, "segment": self.epsilon - value}

    def run(
        self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"
    ) -> HeavyHitterResult:
        """Identify the heavy hitters of ``dataset``; see :class:`Strawman`.

        ``engine="reports"`` runs the real per-user protocol; ``"sampled"`` draws every
        round's estimates from their exact law given the histogram (DESIGN.md §2).
        """
        rng = check_generator(rng)
        bounds, g = self.bounds, len(self.bounds)
        eps = self.epsilon_per_part
        partition = self.budget == "partition"
        fractions = [1 / g] * g
        if partition:  # group 0 reports only π(v)
            fractions = [self.final_fraction] + [(1 - self.final_fraction) / g] * g
        if engine == "reports":  # refuse infeasible report sizes before any work
            for epsilon, bits_ in ((eps["value"], self.m), (eps["segment"], self.segment_bits)):
                check_report_size(self.oracle(epsilon=epsilon, domain_size=2**bits_), dataset.n)
        population = Population(dataset, self.m, fractions, engine, rng)
        segment_groups = [[alpha + int(partition)] for alpha in range(g)]
        value_groups = [0] if partition else list(range(g))
        threshold = self.output == "threshold"

        kept, scores, queries = [], [], []
        for alpha, bound in enumerate(bounds):
            oracle = self.oracle(epsilon=eps["segment"], domain_size=2 ** bound[1])
            n_alpha = population.n_users(segment_groups[alpha])
            estimates = population.segment_estimates(oracle, segment_groups[alpha], bound, rng)
            queries.append(len(estimates))
            order = top(estimates, len(estimates) if threshold else self.k)
            if threshold:
                bar = stage_bar(oracle, n_alpha, self.threshold, self.significance, len(estimates))
                order = order[estimates[order] >= bar]
            kept.append(order.astype(np.uint64))
            scores.append(estimates[order] / max(n_alpha, 1))
        budget_left = self.query_limit - sum(queries)
        kept = cap_product(kept, scores, budget_left)
        grids = np.meshgrid(*kept, indexing="ij") if all(len(c) for c in kept) else None
        patterns = [grid.ravel() for grid in grids] if grids else [np.zeros(0, np.uint64)] * g
        candidates = join_segments(patterns, bounds, self.m)

        value_oracle = self.oracle(epsilon=eps["value"], domain_size=2**self.m)
        n_value = population.n_users(value_groups)
        estimates = population.value_estimates(value_oracle, value_groups, candidates, rng)
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
            + [f"segment {alpha}" for alpha in range(g)],
            "segments": [length for _, length in bounds],
            "candidates_per_step": queries + [len(candidates)],
            "kept_per_step": [len(c) for c in kept] + [len(identified)],
            "segment_patterns": kept,
            "oracle_queries": int(sum(queries) + len(candidates)),
            "epsilon_per_part": eps,
        }
        return HeavyHitterResult(to_dataset_values(identified, self.m), found * scale, diagnostics)
