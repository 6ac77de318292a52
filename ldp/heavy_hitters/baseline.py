"""What the baselines SPM, MCM and the strawman share: parameters, variants, segments, engines.

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*.
The strawman (Sec. III-B, :mod:`ldp.heavy_hitters.strawman`), SPM (Sec. III-C,
:mod:`ldp.heavy_hitters.spm`) and MCM (Sec. III-D, :mod:`ldp.heavy_hitters.mcm`) all cut
a value into parts (segments, bit blocks), find frequent patterns of the parts, rebuild
candidate values and test them with whole-value reports π(v).  Shared here:

* the parameters and the three variants (:class:`BaselineParameters`,
  :func:`variant_presets`): *original* (Sec. III as published), *improved* (Sec. VI-A
  steps 1-3, the budget still split), *partitioned* (improved, and Sec. VI-B4's 10% of
  the users for the final test instead of a split budget);
* the two budgets: ``"split"`` (every user reports every part, ε divided between them)
  and ``"partition"`` (a fraction of the users reports only π(v) at the full ε);
* the two outputs of Sec. VI-A step 3 / VI-B3: ``"top_k"`` and ``"threshold"``, and the
  threshold test itself (:func:`stage_bar`);
* segments: :func:`segment_bounds`, :func:`segment` (bits [start, start+length) of every
  value as a right-aligned integer) and :func:`join_segments` (its inverse);
* :class:`~ldp.heavy_hitters.base.Population` (re-exported): the users of one run as each
  engine sees them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp import bits, budget, validation
from ldp.heavy_hitters.base import (
    HeavyHitterResult,
    Population,
    ReportGroup,
    UserReport,
    check_m,
    resolve_oracle,
    top,
)
from ldp.lazy import lazy_module
from ldp.oracles import OLH, FrequencyOracle
from ldp.validation import ParameterError, check_epsilon, check_int

stats = lazy_module("scipy.stats")

__all__ = [
    "BUDGETS",
    "DEFAULT_QUERY_LIMIT",
    "OUTPUTS",
    "VARIANTS",
    "BaselineParameters",
    "Population",
    "choose_segment_bits",
    "join_segments",
    "segment",
    "segment_bounds",
    "stage_bar",
    "variant_presets",
]

#: [PEM] Sec. IV-C / VI-A: at most 2^20 frequency-oracle queries per run.
DEFAULT_QUERY_LIMIT = 2**20
VARIANTS = ("original", "improved", "partitioned")
BUDGETS = ("split", "partition")
OUTPUTS = ("top_k", "threshold")


# ------------------------------------------------------------------------- validation
def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """``value`` must be one of ``choices`` (a :class:`~ldp.validation.ParameterError`)."""
    if not isinstance(value, str):
        raise ParameterError(name, value, f"one of {tuple(choices)}")
    return str(validation.check_choice(value, name, choices))


def check_fraction(value: object, name: str) -> float:
    """A real number strictly between 0 and 1."""
    return validation.check_real(
        value, name, minimum=0, maximum=1, open_minimum=True, open_maximum=True
    )


def variant_presets(original: dict[str, Any], improved: dict[str, Any]) -> dict[str, dict]:
    """The three variants of a baseline, from its own Sec. III choices and Sec. VI-A shape.

    * ``"original"``: the budget split (Sec. III), plus ``original`` (the protocol's own
      primitive, part length and output);
    * ``"improved"`` ([PEM] Sec. VI-A: "we improve MCM and SPM in step 1 and 2, and change
      them from threshold based algorithms to top k based in step 3"): OLH (step 1), the
      protocol's ``improved`` part shape (step 2), top-k output (step 3), and the budget
      **still split** (Sec. VI-B6: MCM's final test "uses half of the ε", SPM's "one
      third");
    * ``"partitioned"`` (Sec. VI-B4: "We further improve existing algorithms ... instead
      of split privacy budget, we allocate 10% of users for the final testing"): improved
      with ``budget="partition"``; only Fig. 8a runs it.
    """
    improved = {"oracle": OLH, "budget": "split", "output": "top_k"} | improved
    return {
        "original": {"budget": "split"} | original,
        "improved": improved,
        "partitioned": improved | {"budget": "partition"},
    }


def paper_segment_bits(protocol: Any) -> int:
    """16 bits, the two bytes of Fanti et al.'s URL segments ([PEM] Sec. VI-A step 2).

    For m <= 16 that would leave a single segment, so ⌈m/2⌉ (two segments) is used.
    """
    return 16 if protocol.m > 16 else max(1, -(-protocol.m // 2))


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
    values = np.asarray(values)
    count = bits.n_words(m) if m > 64 else 0
    if values.ndim == 2 and values.dtype == np.uint64 and values.shape[1] == count:
        if 0 <= start and start + length <= m:
            return _word_segment(values, m, start, length)
    head = bits.prefix(values, m, start + length)
    low = head if head.ndim == 1 else head[:, -1]
    if length == 64:
        return np.ascontiguousarray(low)
    return low & np.uint64((1 << length) - 1)


def _word_segment(words: np.ndarray, m: int, start: int, length: int) -> np.ndarray:
    """:func:`segment` of an (n, ceil(m/64)) word matrix, read from the one or two words
    that hold the bits (the inverse of :func:`join_segments`)."""
    end = 64 * words.shape[1] - m + start + length  # from the left of the words, exclusive
    last = (end - 1) // 64
    shift = 64 * (last + 1) - end
    low = words[:, last] >> np.uint64(shift)
    if shift and end - length < 64 * last:  # the segment starts in the word before
        low |= words[:, last - 1] << np.uint64(64 - shift)
    if length == 64:
        return low
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
    raise ParameterError(
        "query_limit",
        query_limit,
        "at least the queries of one run with 1-bit segments",
        message=(
            f"query_limit {query_limit} is below the queries of one run even with 1-bit segments"
        ),
    )


def resolve_segment_bits(protocol: Any, minimum_segments: int, maximum: int) -> int:
    """Check a protocol's ``segment_bits`` (an integer or "auto") against its query limit.

    ``"auto"`` is :func:`choose_segment_bits` with the protocol's ``queries``; the result is
    stored on the (frozen) protocol and returned.
    """
    if protocol.segment_bits == "auto":
        s = choose_segment_bits(
            protocol.m, protocol.queries, protocol.query_limit, minimum_segments
        )
        object.__setattr__(protocol, "segment_bits", s)
    elif isinstance(protocol.segment_bits, str):
        raise ParameterError("segment_bits", protocol.segment_bits, "'auto' or an integer")
    s = check_int(protocol.segment_bits, "segment_bits", minimum=1, maximum=maximum)
    needed = protocol.queries(segment_bounds(protocol.m, s))
    if needed > protocol.query_limit:
        raise ParameterError(
            "query_limit",
            protocol.query_limit,
            f">= {needed}",
            message=(
                f"query_limit {protocol.query_limit} is below the {needed} oracle queries of "
                f"one run with segment_bits={s} and k={protocol.k}"
            ),
        )
    return s


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


def check_report_size(oracle: FrequencyOracle, n_users: float) -> None:
    """Refuse a reports-engine round whose reports cannot be held in memory.

    The oracle knows its report size (:meth:`FrequencyOracle.report_bytes`: d bits a user
    for the unary encodings SUE = basic RAPPOR, OUE and THE, d int32 for SHE): over a 2^64
    domain no deployment can send that, only the sampled engine (which needs p* and q*
    alone) can simulate it.  The limit is the memory budget in force (:mod:`ldp.budget`);
    the refusal is a :class:`~ldp.validation.ParameterError` blaming ``engine``.
    """
    budget.check_memory(
        "engine",
        "reports",
        "'sampled' here (or shorter values)",
        oracle.report_bytes(int(n_users)),
        f"the reports of {n_users:.0f} users of {oracle.name} over a domain of "
        f"{oracle.domain_size} values",
    )


# ------------------------------------------------------------------------- parameters
def whole_value(words: np.ndarray) -> np.ndarray:
    """The key of the whole-value report π(v): the value itself (its words)."""
    return words


@dataclass(frozen=True, kw_only=True)
class BaselineParameters:
    """The parameters SPM, MCM and the strawman share ([PEM] Sec. VI-A's knobs).

    Parameters
    ----------
    epsilon, k, m :
        Privacy budget ε > 0, heavy hitters wanted (1 <= k <= 2^m), bits per value (m <= 64,
        or a multiple of 8 for byte strings: :func:`~ldp.heavy_hitters.base.check_m`).
    variant : {"improved", "original", "partitioned"}
        Sets every knob left at None at once (:func:`variant_presets`); each knob stays
        overridable, so e.g. ``variant="improved", budget="partition"`` changes one thing.
    oracle : type or str
        Frequency-oracle class of :mod:`ldp.oracles`, or its name ("OLH"); instances are
        built as ``oracle(epsilon=..., domain_size=...)``.
    budget : {"split", "partition"}
        ``"split"``: each user reports π(v) with ε1 = ``value_share`` x ε and its part(s)
        with the rest.  ``"partition"`` ([PEM] Sec. VI-B4, Proposition 1):
        ``final_fraction`` of the users report only π(v) at ε, the others only their
        part(s) at ε.
    output : {"top_k", "threshold"}
        ``"top_k"``: the k best final values (Sec. VI-A step 3).  ``"threshold"``: every
        stage keeps what passes :func:`stage_bar` (θ = ``threshold`` as a frequency, or a
        significance test).
    threshold : float, optional
        θ in (0, 1) as a frequency (Sec. VI-B3); giving it selects ``output="threshold"``.
    significance : float
        Level of the Bonferroni-corrected significance test used when ``threshold`` is
        None in the threshold version (0.05).
    final_fraction : float
        Share of users for the final test under ``budget="partition"`` (0.1, Sec. VI-B4).
    value_share : float
        ε1/ε, the share of ε for π(v) under ``budget="split"``.
    query_limit : int
        Frequency-oracle queries allowed in one run (2^20, Sec. IV-C / VI-A).
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

    #: The class's variants (:func:`variant_presets`).
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    def _check_parameters(self) -> tuple[float, int, int]:
        """Check ε, m, k, the query limit, the variant and the knobs it sets (in that order)."""
        epsilon = check_epsilon(self.epsilon)
        m = check_m(self.m)
        k = check_int(self.k, "k", minimum=1, maximum=2**m)
        budget.check_query_limit(check_int(self.query_limit, "query_limit", minimum=1))
        for attr, value in (("epsilon", epsilon), ("m", m), ("k", k)):
            object.__setattr__(self, attr, value)
        variant = check_choice(self.variant, "variant", VARIANTS)
        if self.threshold is not None and self.output is None:
            object.__setattr__(self, "output", "threshold")  # a θ selects the threshold version
        for attr, value in self.PRESETS[variant].items():
            if getattr(self, attr) is None:
                if callable(value) and not isinstance(value, type):
                    value = value(self)  # a preset may depend on the protocol (e.g. on m)
                object.__setattr__(self, attr, value)
        object.__setattr__(self, "oracle", resolve_oracle(self.oracle))
        if self.threshold is not None:
            object.__setattr__(self, "threshold", check_fraction(self.threshold, "threshold"))
        check_choice(self.output, "output", OUTPUTS)
        if self.output == "top_k" and self.threshold is not None:
            raise ParameterError(
                "threshold",
                self.threshold,
                "None with output='top_k'",
                message="threshold is only used with output='threshold', got output='top_k'",
            )
        check_fraction(self.significance, "significance")
        check_choice(self.budget, "budget", BUDGETS)
        check_fraction(self.final_fraction, "final_fraction")
        check_fraction(self.value_share, "value_share")
        return epsilon, m, k

    # --- who reports what ----------------------------------------------------------
    @property
    def partitioned(self) -> bool:
        """Whether group 0 is the final test's own group (``budget="partition"``)."""
        return self.budget == "partition"

    def group_fractions(self, parts: int) -> list[float]:
        """Each group's share of users: ``parts`` part groups, after the value group if any."""
        if self.partitioned:
            return [self.final_fraction] + [(1 - self.final_fraction) / parts] * parts
        return [1 / parts] * parts

    def value_groups(self, parts: int) -> list[int]:
        """The groups whose users report π(v): group 0 under partition, all under split."""
        return [0] if self.partitioned else list(range(parts))

    def value_epsilon(self) -> float:
        """ε1, the budget of π(v): all of ε under partition, ``value_share`` x ε under split."""
        return self.epsilon if self.partitioned else self.value_share * self.epsilon

    def value_report(self) -> UserReport:
        """π(v) as one user sends it: the whole value through the oracle at ε1."""
        return UserReport(
            self.oracle(epsilon=self.value_epsilon(), domain_size=2**self.m), whole_value
        )

    def groups_sending(self, parts: Sequence[tuple[UserReport, ...]]) -> tuple[ReportGroup, ...]:
        """The ``report_groups()`` of a protocol whose part group j sends ``parts[j]``.

        Under ``budget="split"`` every group also sends π(v); under ``"partition"`` group 0
        (weight ``final_fraction``) sends only π(v), at ε.  Weights: :meth:`group_fractions`.
        """
        fractions, value = self.group_fractions(len(parts)), self.value_report()
        if self.partitioned:
            part_groups = zip(fractions[1:], parts, strict=True)
            return (ReportGroup(fractions[0], (value,)),) + tuple(
                ReportGroup(weight, sent) for weight, sent in part_groups
            )
        return tuple(
            ReportGroup(weight, (*sent, value))
            for weight, sent in zip(fractions, parts, strict=True)
        )

    def value_reports(
        self, words: np.ndarray, groups: np.ndarray, parts: int, rng: np.random.Generator
    ) -> Any:
        """Client side of π(v): the value groups' users report their whole value."""
        users = np.flatnonzero(np.isin(groups, self.value_groups(parts)))
        oracle = self.oracle(epsilon=self.value_epsilon(), domain_size=2**self.m)
        return oracle.perturb(words[users], rng)

    def check_reports_engine(self, n: int, oracles: Sequence[FrequencyOracle]) -> None:
        """Reports engine: refuse, before any work, reports that cannot be held in memory."""
        value = self.oracle(epsilon=self.value_epsilon(), domain_size=2**self.m)
        for oracle in (value, *oracles):
            check_report_size(oracle, n)

    # --- the final test --------------------------------------------------------------
    def final_test(
        self,
        population: Population,
        parts: int,
        candidates: np.ndarray,
        rng: np.random.Generator,
        diagnostics: dict[str, Any],
    ) -> HeavyHitterResult:
        """Estimate the candidates with the π(v) reports and release the heavy hitters.

        The released estimates are scaled from the value groups' users to all n users.
        """
        groups = self.value_groups(parts)
        oracle = self.oracle(epsilon=self.value_epsilon(), domain_size=2**self.m)
        n_value = population.n_users(groups)
        estimates = population.estimates(oracle, candidates, rng, groups=groups)
        bar = None
        if self.output == "threshold":
            bar = stage_bar(oracle, n_value, self.threshold, self.significance, len(candidates))
        identified, found = release(candidates, estimates, self.k, bar)
        diagnostics = {
            "groups": [int(size) for size in population.sizes],
            **diagnostics,
            "epsilon_per_part": self.epsilon_per_part,
        }
        diagnostics["kept_per_step"] = [*diagnostics.get("kept_per_step", []), len(identified)]
        scale = population.n / max(n_value, 1)
        return HeavyHitterResult(to_dataset_values(identified, self.m), found * scale, diagnostics)
