"""The protocol contract: what every oracle and heavy hitter offers, and what it declares.

A protocol's *methods* are described by two typing ``Protocol`` classes,
:class:`FrequencyOracleLike` and :class:`HeavyHitterLike`; a class that has the methods
satisfies them, whatever it subclasses.  Its *capabilities* (which engines it has, whether
its sampled engine is exact, its report model for the likelihood audit, which parts of a
report are public randomness, whether a closed-form variance exists) are declared once, as
a class attribute ``capabilities`` holding a :class:`Capabilities`, and read by the
harness, the auditor (:mod:`ldp.audit`), the figures and the conformance suite
(:mod:`ldp.testing`), never guessed from class names.  Optional hooks are read the same
way: the likelihood of ``report_model``, the auditor's ``audit_*`` methods, and the
adversary's ``adversary_success(prior)`` (exact) or ``log_likelihoods(reports)``
(empirical), from which :func:`ldp.adversary.adversary_method` derives how a protocol's
adversary is computed; a heavy hitter's ``report_groups()`` (what one user sends, see
:class:`ldp.heavy_hitters.base.ReportGroup`) is read by
:func:`ldp.adversary.heavy_hitter_success`.

>>> from ldp.contract import Capabilities, capabilities_of
>>> class Toy:
...     capabilities = Capabilities(report_model="categorical")
>>> capabilities_of(Toy).report_model, capabilities_of(Toy).engines
('categorical', ('reports', 'sampled'))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

#: Report models with a known likelihood (:func:`ldp.privacy.max_privacy_loss`).
REPORT_MODELS = ("categorical", "bits", "hashed", "product")
ENGINES = ("reports", "sampled")

Engine = Literal["reports", "sampled"]
Exactness = Literal["exact", "approximate"]


@dataclass(frozen=True)
class Capabilities:
    """What a protocol declares about itself.

    Attributes
    ----------
    engines : tuple of str
        The engines it runs: ``"reports"`` (real per-user reports, the client path) and
        ``"sampled"`` (the aggregate drawn from its law without reports).
    sampled : {"exact", "approximate"}
        Whether the sampled engine draws from the *exact* law of the reports engine's
        output (for the population actually simulated), or an approximation; an
        approximation is named in its method's docstring and measured in a test.
    report_model : str or None
        One of :data:`REPORT_MODELS` when the protocol exposes the likelihood of its
        reports (``report_probabilities``), so :func:`ldp.privacy.max_privacy_loss` can
        compute its privacy loss exactly; None when it does not.
    public_randomness : tuple of str
        The fields of a report that are public randomness drawn independently of the
        user's value (OLH's hash seeds, a sketch's hash index): the auditor conditions on
        them or redraws them, and never reads them as part of the private output.
    public_per_call : bool
        True when one ``perturb`` call draws public randomness shared by all its reports
        (a hash pool, a hash family), so the reports of one call are not independent; the
        auditor then draws each sample from a fresh call.
    closed_form_variance : bool
        Whether ``variance(n_users, true_count)`` is an exact closed form (the figures draw
        it as the analytical curve, the conformance suite tests it).  With
        ``public_per_call`` it is exact when no two other users share a value (the
        collision term vanishes).
    randomized_response : bool
        True when a report is d-ary randomized response over the whole domain (the user's
        value with probability p, else a uniform other value; GRR): the shuffle model's
        randomized-response bounds (:func:`ldp.theory.shuffle.shuffle_epsilon` with
        ``domain_size``) apply to it; generic bounds apply to every ε-LDP protocol.
    additive : bool
        True when the estimate is a function of n and a statistic that is a *sum over
        reports* (``aggregate(reports, candidates)``, finished by
        ``estimate_aggregate(statistic, n_users)``), with no public randomness shared
        across ``perturb`` calls: reports can then be aggregated chunk by chunk and never
        all held (:mod:`ldp.streaming`).
    adversary_support_only : bool
        True when ``adversary_success(prior)`` depends on the prior's positive weights
        only (values of weight 0 just extend a tail that sums to the same), so it may be
        given the prior restricted to its support whatever the domain
        (:func:`ldp.adversary.mapped_success`: the heavy hitters' 2^64-value prefixes).
    """

    engines: tuple[str, ...] = ENGINES
    sampled: Exactness = "exact"
    report_model: str | None = None
    public_randomness: tuple[str, ...] = ()
    public_per_call: bool = False
    closed_form_variance: bool = True
    randomized_response: bool = False
    additive: bool = False
    adversary_support_only: bool = False

    def __post_init__(self) -> None:
        unknown = [e for e in self.engines if e not in ENGINES]
        if unknown or not self.engines:
            raise ValueError(f"engines must be a non-empty subset of {ENGINES}, got {self.engines}")
        if self.sampled not in ("exact", "approximate"):
            raise ValueError(f"sampled must be 'exact' or 'approximate', got {self.sampled!r}")
        if self.additive and self.public_per_call:
            raise ValueError("an additive protocol cannot share public randomness per call")
        if self.report_model is not None and self.report_model not in REPORT_MODELS:
            raise ValueError(
                f"report_model must be one of {REPORT_MODELS} or None, got {self.report_model!r}"
            )


#: What a protocol that declares nothing is assumed to have: both engines, exact, no
#: likelihood, no public randomness, no closed form.
UNDECLARED = Capabilities(closed_form_variance=False)


def capabilities_of(protocol: Any) -> Capabilities:
    """The capabilities a protocol (class or instance) declares; :data:`UNDECLARED` if none."""
    declared = getattr(protocol, "capabilities", None)
    if declared is None:
        return UNDECLARED
    if not isinstance(declared, Capabilities):
        raise TypeError(
            f"{getattr(protocol, '__name__', type(protocol).__name__)}.capabilities must be a "
            f"ldp.contract.Capabilities, got {type(declared).__name__}"
        )
    return declared


@runtime_checkable
class FrequencyOracleLike(Protocol):
    """The methods of a frequency oracle (:class:`ldp.oracles.FrequencyOracle`)."""

    epsilon: float
    domain_size: int

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        """Each user's ε-LDP report of their value (the client side)."""

    def estimate(self, reports: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """Unbiased estimated counts of every value, or of ``candidates`` only."""

    def simulate(
        self,
        true_counts: np.ndarray,
        rng: np.random.Generator,
        candidates: np.ndarray | None = None,
    ) -> np.ndarray:
        """The sampled engine: estimates drawn from their law given the true counts."""

    def n_reports(self, reports: Any) -> int:
        """How many users sent these reports."""


@runtime_checkable
class HeavyHitterLike(Protocol):
    """The methods of a heavy-hitter protocol over m-bit values (see :mod:`ldp.heavy_hitters`)."""

    epsilon: float
    k: int
    m: int

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        """What every user sends (the client side)."""

    def run(self, dataset: Any, rng: np.random.Generator, engine: str = "sampled") -> Any:
        """Identify the top-k values of ``dataset`` with either engine."""


# --- optional hooks ----------------------------------------------------------------------
# A protocol offers these by defining the method; the code that reads one asks
# ``isinstance(protocol, HasX)`` (``issubclass`` for a class), never a method name.


@runtime_checkable
class HasExactAdversary(Protocol):
    """The Bayesian adversary's exact success from one report (:mod:`ldp.adversary`)."""

    def adversary_success(self, prior: np.ndarray) -> float | None:
        """S(π), or None to decline a prior too costly for the closed form."""


@runtime_checkable
class HasReportSupport(Protocol):
    """The set a protocol's reports live in (:mod:`ldp.audit.support` derives it from the
    report model for the standard report types; define this to declare another)."""

    def in_support(self, reports: Any) -> np.ndarray:
        """Per report: whether it lies in the protocol's declared support."""


@runtime_checkable
class HasPrivacyRatio(Protocol):
    """The largest ratio of a report's likelihoods under two inputs, over every report and
    pair of inputs, as realised in floating point: the declared loss of a protocol whose
    inputs are whole sets (:mod:`ldp.sets`), which ``python -m ldp.audit`` prints."""

    def privacy_ratio(self) -> float:
        """max over reports y and inputs S, S' of Pr[y | S] / Pr[y | S'] (at most e^ε)."""


@runtime_checkable
class HasLogLikelihoods(Protocol):
    """Per-report likelihoods, for the empirical adversary (:mod:`ldp.adversary`)."""

    def log_likelihoods(self, reports: Any) -> np.ndarray:
        """ln Pr[report_i | v] for every report and value, up to a constant per report."""


@runtime_checkable
class HasReportCount(Protocol):
    """How many distinct reports a categorical protocol has, without listing them."""

    def report_count(self) -> int:
        """The length of ``report_probabilities(v)``."""


@runtime_checkable
class HasRounds(Protocol):
    """Several collections of the same users, with memoization (longitudinal protocols)."""

    def perturb_rounds(self, values: np.ndarray, rng: np.random.Generator) -> list:
        """τ rounds of reports; ``values[i, t]`` is user i's value at round t."""


@runtime_checkable
class HasRoundsAdversary(Protocol):
    """The adversary's exact success from the first t rounds of one user's reports."""

    def rounds_adversary_success(self, prior: np.ndarray, t: int) -> float | None:
        """S_t(π), or None to decline."""


@runtime_checkable
class HasSequenceLikelihoods(Protocol):
    """Likelihoods of joined sequences of rounds, for the empirical rounds adversary."""

    def sequence_log_likelihoods(self, sequences: np.ndarray) -> np.ndarray:
        """ln Pr[sequence_i | v] for every joined sequence and value."""


@runtime_checkable
class HasReportGroups(Protocol):
    """A heavy hitter's groups of users, each reporting through one oracle."""

    def report_groups(self, *args: Any, **kwargs: Any) -> Any:
        """The (oracle, key map, share of users) of each group."""


@runtime_checkable
class HasIdentificationModel(Protocol):
    """A heavy hitter's model of how likely it finds each true heavy hitter."""

    def identification_model(
        self, values: np.ndarray, counts: np.ndarray, refined: bool = True
    ) -> np.ndarray | None:
        """P(the j-th most frequent value is identified), j = 1..k, on data of these
        distinct values and counts; None to decline (no model for this configuration)."""


@runtime_checkable
class HasReportSpace(Protocol):
    """A pure oracle's report space, for the random perturbed-value attack
    (:mod:`ldp.poisoning`).  A protocol drawing its public randomness per call
    (``public_per_call``) also takes the collection's shared report fields as keywords
    (``pool=...``) in both hooks here and in :class:`CraftsReports`: they are public, and
    a fake user reports under them."""

    def uniform_reports(self, n: int, rng: np.random.Generator) -> Any:
        """n reports drawn uniformly from every report the client can send."""

    def uniform_support(self) -> float:
        """The chance that a uniform report supports a given value."""


@runtime_checkable
class CraftsReports(Protocol):
    """The maximal gain attack's fake reports (:mod:`ldp.poisoning`)."""

    def craft_reports(self, targets: np.ndarray, n: int, rng: np.random.Generator) -> Any:
        """n valid reports that together support the ``targets`` as much as possible."""

    def crafted_support(self, targets: np.ndarray) -> float | None:
        """S: the expected count of targets one crafted report supports; None if not
        known exactly (the attack's gain then rests on the measured support)."""


@runtime_checkable
class HasPublicDraws(Protocol):
    """Representative public randomness for the exact privacy loss (:mod:`ldp.privacy`)."""

    def public_draws(self) -> np.ndarray:
        """The public draws whose worst case bounds the privacy loss."""


@runtime_checkable
class Decodes(Protocol):
    """A decoder of candidate strings from reports (RAPPOR's regression)."""

    def decode(self, *args: Any, **kwargs: Any) -> Any:
        """The candidates' estimates and which are detected."""


@runtime_checkable
class ReportsElements(Protocol):
    """A set protocol whose users report elements of their padded sets through one inner
    frequency oracle (:class:`ldp.sets.PSFO`, ``SPLIT``), so that its estimate of an item's
    frequency is ℓ times the inner oracle's frequency of that element among the reported
    ones: :func:`ldp.poisoning.attack_sets` attacks it through the inner oracle."""

    ell: int
    inner: Any

    def reported_elements(self, sets: Any, rng: np.random.Generator) -> np.ndarray:
        """(n, reports per user): the element each report carries, drawn as ``perturb``
        draws them."""


@runtime_checkable
class SetOracleLike(Protocol):
    """A set protocol with per-item estimates (:class:`ldp.sets.PSFO`): reports, the count
    its estimator is unbiased for, and the closed-form variance (``ldp.testing.set_checks``
    tests them)."""

    def perturb(self, sets: Any, rng: np.random.Generator) -> Any:
        """Each user's ε-LDP report of their set."""

    def estimate(self, reports: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """Estimated counts of every item, or of ``candidates``."""

    def simulate(
        self, sets: Any, rng: np.random.Generator, candidates: np.ndarray | None = None
    ) -> np.ndarray:
        """The sampled engine: the estimates drawn without reports."""

    def expected_counts(self, sets: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """E[estimate] for these sets."""

    def variances(self, sets: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """Var[estimate] for these sets, exact."""
