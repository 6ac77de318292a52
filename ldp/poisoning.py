"""Fake users against a frequency oracle: the data-poisoning attacks of [CJG21].

Cao, Jia, Gong, *Data Poisoning Attacks to Local Differential Privacy Protocols* (USENIX
Security 2021).  An attacker controls m fake users among N = n + m (β = m / N) and wants
the server to over-estimate the frequencies of r target values T.  A fake user need not
run the client: it sends any report the protocol accepts.

* ``"RPA"`` (random perturbed-value attack): a report drawn uniformly from the report
  space (the protocol's ``uniform_reports``, :class:`ldp.contract.HasReportSpace`);
* ``"RIA"`` (random item attack): the honest report of a uniformly drawn target;
* ``"MGA"`` (maximal gain attack): the report supporting as many targets as the protocol
  allows (its ``craft_reports``, :class:`ldp.contract.CraftsReports`).  A pure oracle
  without that hook (a plug-in's too) is attacked by search (:func:`searched_reports`):
  every fake user sends the best of :data:`SEARCH_POOL` honest reports of the targets, a
  lower bound on the maximal gain, whose S is measured.

:func:`attack` runs one collection and measures the *frequency gain* Σ_t (f̃_t after −
f̃_t before) of the pure estimator; :func:`expected_gain` is its expectation
(:mod:`ldp.theory.poisoning`).  :func:`attack_sets` and :func:`expected_gain_sets` do the
same for a set protocol that reports padded elements through one oracle (PSFO, SPLIT),
where every fake report counts ℓ times.  A protocol that cannot express an attack gets a
:class:`~ldp.validation.ParameterError` naming ``attack``.

>>> import numpy as np
>>> from ldp.oracles import OUE
>>> from ldp import poisoning
>>> oue = OUE(epsilon=1.0, domain_size=64)
>>> values = np.random.default_rng(0).integers(0, 64, size=20_000)
>>> found = poisoning.attack(oue, values, "MGA", [5, 6, 7], beta=0.05,
...                          rng=np.random.default_rng(1))
>>> expected = poisoning.expected_gain(oue, "MGA", [5, 6, 7], found.beta, found.f_targets)
>>> round(expected, 2), abs(found.gain - expected) < 0.1
(0.47, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldp.contract import CraftsReports, HasReportSpace, ReportsElements, capabilities_of
from ldp.oracles.base import PureOracle
from ldp.reports import bare, count, per_report_fields, take
from ldp.theory import poisoning as theory
from ldp.validation import ParameterError, check_generator, check_int

#: The attacks of [CJG21].
ATTACKS = ("RPA", "RIA", "MGA")
#: Honest reports of the targets that :func:`searched_reports` scores.
SEARCH_POOL = 256


def check_targets(oracle: Any, targets: Any) -> np.ndarray:
    """Distinct target values of the oracle's domain, at least one."""
    array = np.asarray(targets)
    if array.ndim != 1 or array.shape[0] == 0 or array.dtype.kind not in "iu":
        raise ParameterError("targets", targets, "a non-empty list of integer values")
    array = array.astype(np.int64)
    if array.min() < 0 or array.max() >= oracle.domain_size:
        raise ParameterError("targets", targets, f"values in [0, {oracle.domain_size})")
    if np.unique(array).shape[0] != array.shape[0]:
        raise ParameterError("targets", targets, "distinct values")
    return array


def check_attack(oracle: Any, attack: str) -> str:
    """``attack`` if it is one of :data:`ATTACKS` and the oracle can express it."""
    if attack not in ATTACKS:
        raise ParameterError("attack", attack, f"one of {ATTACKS}")
    if attack == "RPA" and not isinstance(oracle, HasReportSpace):
        raise ParameterError(
            "attack",
            attack,
            "an attack the protocol can express: it declares no report space (uniform_reports)",
        )
    if attack == "MGA" and not (isinstance(oracle, CraftsReports) or _searchable(oracle)):
        raise ParameterError(
            "attack",
            attack,
            "an attack the protocol can express: it crafts no reports (craft_reports) and is "
            "not a pure oracle whose reports a search could score",
        )
    return attack


def _searchable(oracle: Any) -> bool:
    """A pure oracle (support counts score a report) whose reports carry their own public
    randomness (a fake user's honest reports would otherwise bring a pool of their own)."""
    return isinstance(oracle, PureOracle) and not capabilities_of(oracle).public_per_call


def searched_reports(oracle: Any, targets: Any, n: int, rng: np.random.Generator) -> Any:
    """The maximal gain attack of a pure oracle that crafts no reports: ``n`` copies of the
    report, among :data:`SEARCH_POOL` honest reports of uniformly drawn targets, that
    supports the most targets (its ``support_counts``).

    Every report sent is one the client can send, so the attack needs nothing but the
    contract; its gain is a lower bound on the maximal one (a hook crafting reports the
    client never sends, such as one with every target's bit set, may do better)."""
    targets = check_targets(oracle, targets)
    if not _searchable(oracle):
        raise ParameterError("oracle", type(oracle).__name__, "a pure oracle, pool per report")
    n = check_int(n, "n", minimum=0)
    pool = bare(oracle.perturb(rng.choice(targets, size=SEARCH_POOL), rng))
    layout = per_report_fields(pool, SEARCH_POOL)
    supports = [
        int(oracle.support_counts(take(pool, [i], layout), targets).sum())
        for i in range(SEARCH_POOL)
    ]
    return take(pool, np.full(n, int(np.argmax(supports))), layout)


def fake_count(n_genuine: int, beta: float) -> int:
    """m = round(β n / (1 − β)): the fake users that make a share β of n + m."""
    if not 0.0 <= beta < 1.0:
        raise ParameterError("beta", beta, "[0, 1)")
    return round(beta * check_int(n_genuine, "n_genuine", minimum=1) / (1 - beta))


def shared_fields(reports: Any) -> dict[str, Any]:
    """The fields a batch's reports share (a hash pool drawn once per call), by name."""
    reports = bare(reports)
    if not isinstance(reports, tuple) or not hasattr(type(reports), "_fields"):
        return {}
    layout = per_report_fields(reports, count(reports))
    return {
        name: part
        for name, part, own in zip(type(reports)._fields, reports, layout, strict=True)
        if not own
    }


def fake_reports(
    oracle: Any, attack: str, targets: Any, n: int, rng: np.random.Generator, **public: Any
) -> Any:
    """The reports of ``n`` fake users mounting ``attack`` on ``targets`` (module doc).

    For a protocol whose public randomness is drawn per call (``public_per_call``: a hash
    pool, a sketch's hash family), ``public`` passes the collection's (:func:`shared_fields`
    of its genuine reports) to the hooks, since it is public and a fake user reports under
    it; without it the reports carry a pool of their own, which :func:`join` refuses to add
    to another call's.  The random item attack on such a protocol is drawn by
    :func:`attack` in one call with the genuine users."""
    targets = check_targets(oracle, targets)
    check_attack(oracle, attack)
    n = check_int(n, "n", minimum=0)
    rng = check_generator(rng)
    if attack == "RIA":
        return bare(oracle.perturb(rng.choice(targets, size=n), rng))
    if attack == "RPA":
        return bare(oracle.uniform_reports(n, rng, **public))
    if not isinstance(oracle, CraftsReports):
        return searched_reports(oracle, targets, n, rng)
    return bare(oracle.craft_reports(targets, n, rng, **public))


def join(first: Any, second: Any) -> Any:
    """Two batches of one protocol's reports as one (per-report fields concatenated).

    A field shared by a batch's reports (a hash pool or family drawn once per call) must be
    the same in both: reports drawn under another pool name other hash functions, and
    counting them under this one would be silently wrong (ValueError)."""
    first, second = bare(first), bare(second)
    if not isinstance(first, tuple):
        return np.concatenate([np.asarray(first), np.asarray(second)])
    layout = per_report_fields(first, count(first))
    names = getattr(type(first), "_fields", [str(i) for i in range(len(first))])
    for name, a, b, own in zip(names, first, second, layout, strict=True):
        if not own and not np.array_equal(np.asarray(a), np.asarray(b)):
            raise ValueError(
                f"the two batches were drawn under different public {name!r}: draw them in "
                "one call (or pass the first batch's to the second's)"
            )
    parts = [
        np.concatenate([a, b]) if own else a
        for a, b, own in zip(first, second, layout, strict=True)
    ]
    return type(first)._make(parts)


def _random_items_in_one_call(
    oracle: Any, values: np.ndarray, targets: np.ndarray, m: int, rng: np.random.Generator
) -> tuple[Any, Any, Any]:
    """Genuine reports, fake ones and both, for RIA on a protocol whose public randomness
    is drawn once per call (``public_per_call``): one call for all n + m users, so the fake
    users' honest reports of targets share the collection's pool, as a real attacker's
    do (the pool is public)."""
    n = values.shape[0]
    fakes = rng.choice(targets, size=m)
    both = bare(oracle.perturb(np.concatenate([values, fakes.astype(values.dtype)]), rng))
    layout = per_report_fields(both, n + m)
    return take(both, np.arange(n), layout), take(both, np.arange(n, n + m), layout), both


@dataclass(frozen=True)
class AttackResult:
    """One poisoned collection: the targets' estimated frequencies before and after."""

    before: np.ndarray  #: f̃_t from the n genuine reports
    after: np.ndarray  #: f̃_t from the n + m reports
    n_genuine: int
    n_fake: int
    f_targets: float  #: f_T, the targets' true frequency among the genuine users
    #: the mean count of targets a fake report supports (S measured; NaN for an oracle
    #: that is not pure, or without fake users)
    supported: float

    @property
    def beta(self) -> float:
        """m / (n + m): the realised share of fake users."""
        return self.n_fake / (self.n_genuine + self.n_fake)

    @property
    def gain(self) -> float:
        """Σ_t (f̃_t after − f̃_t before): the frequency gain of this collection."""
        return float(np.sum(self.after - self.before))


def attack(
    oracle: Any, values: Any, attack: str, targets: Any, beta: float, rng: np.random.Generator
) -> AttackResult:
    """n genuine users holding ``values`` report honestly; m = :func:`fake_count` fake
    users mount ``attack``; the server estimates the targets' frequencies from the genuine
    reports alone and from all of them."""
    targets = check_targets(oracle, targets)
    check_attack(oracle, attack)
    rng = check_generator(rng)
    values = np.asarray(values)
    n = values.shape[0]
    m = fake_count(n, beta)
    per_call = capabilities_of(oracle).public_per_call
    if attack == "RIA" and per_call:
        genuine, fake, both = _random_items_in_one_call(oracle, values, targets, m, rng)
    else:
        genuine = bare(oracle.perturb(values, rng))
        public = shared_fields(genuine) if per_call else {}
        fake = fake_reports(oracle, attack, targets, m, rng, **public)
        both = join(genuine, fake)
    before = oracle.estimate(genuine, candidates=targets) / n
    after = oracle.estimate(both, candidates=targets) / (n + m)
    pure = isinstance(oracle, PureOracle)  # S: a pure oracle's support counts
    supported = float(oracle.support_counts(fake, targets).sum() / m) if m and pure else math.nan
    f_targets = float(np.isin(values, targets).sum() / n)
    return AttackResult(before, after, n, m, f_targets, supported)


def expected_gain(
    oracle: Any,
    attack: str,
    targets: Any,
    beta: float,
    f_targets: float,
    supported: float | None = None,
) -> float:
    """E[gain] of ``attack`` ([CJG21] Sec. 4, :func:`ldp.theory.poisoning.frequency_gain`)
    at share β of fake users; ``supported`` (S) is needed only where the protocol does not
    know it exactly (an MGA whose ``crafted_support`` is None)."""
    targets = check_targets(oracle, targets)
    check_attack(oracle, attack)
    r = targets.shape[0]
    if attack == "RIA":  # honest reports of targets: any unbiased oracle, pure or not
        return theory.random_item_gain(beta, f_targets)
    p, q = oracle.p_star, oracle.q_star
    if attack == "RPA":
        supported = r * oracle.uniform_support()
    else:
        known = oracle.crafted_support(targets) if isinstance(oracle, CraftsReports) else None
        if known is None and supported is None:
            raise ParameterError(
                "supported", None, "the measured S: this attack's is not known exactly"
            )
        supported = known if known is not None else supported
    return theory.frequency_gain(p, q, beta, supported, r, f_targets)


def _set_protocol(protocol: Any) -> Any:
    if not isinstance(protocol, ReportsElements):
        raise ParameterError(
            "protocol",
            type(protocol).__name__,
            "a set protocol that reports elements (ldp.contract.ReportsElements)",
        )
    if capabilities_of(protocol.inner).public_per_call:
        raise ParameterError(
            "protocol", type(protocol).__name__, "an inner oracle with a pool per report"
        )
    return protocol


def attack_sets(
    protocol: Any, sets: Any, attack: str, targets: Any, beta: float, rng: np.random.Generator
) -> AttackResult:
    """Fake users against a set protocol whose users report elements of their padded sets
    through one inner oracle (:class:`ldp.contract.ReportsElements`: PSFO, SPLIT).

    Its estimate of an item's frequency is ℓ times the inner oracle's frequency of that
    element among the reported ones (PSFO multiplies by ℓ; a SPLIT user sends ℓ
    elements), so the attack is the inner oracle's: the n genuine users report their
    elements, and each of the m = :func:`fake_count` fake users sends as many reports as a
    genuine one, each crafted as ``attack`` crafts an inner report (RIA: the inner
    oracle's honest report of a random target; RPA and MGA as in :func:`attack`).  The
    frequencies before and after are the protocol's (ℓ times the inner oracle's);
    ``f_targets`` is the targets' padded frequency (:meth:`expected_counts` over n) and
    ``supported`` the targets a fake *report* supports."""
    protocol = _set_protocol(protocol)
    inner = protocol.inner
    targets = check_targets(inner, targets)
    if targets.max(initial=0) >= protocol.domain_size:
        raise ParameterError("targets", targets, f"items of [0, {protocol.domain_size})")
    check_attack(inner, attack)
    rng = check_generator(rng)
    elements = protocol.reported_elements(sets, rng)
    n, per_user = elements.shape
    m = fake_count(n, beta)
    genuine = bare(inner.perturb(elements.ravel(), rng))
    fake = fake_reports(inner, attack, targets, m * per_user, rng)
    both = join(genuine, fake)
    scale = protocol.ell / per_user  # the protocol's frequency per inner count and user
    before = scale * inner.estimate(genuine, candidates=targets) / n
    after = scale * inner.estimate(both, candidates=targets) / (n + m)
    pure = isinstance(inner, PureOracle)
    supported = (
        float(inner.support_counts(fake, targets).sum() / (m * per_user))
        if m and pure
        else math.nan
    )
    f_targets = float(protocol.expected_counts(sets, targets).sum() / n)
    return AttackResult(before, after, n, m, f_targets, supported)


def expected_gain_sets(
    protocol: Any,
    attack: str,
    targets: Any,
    beta: float,
    f_targets: float,
    supported: float | None = None,
) -> float:
    """E[gain] of :func:`attack_sets`: ℓ times the inner oracle's :func:`expected_gain` at
    the targets' frequency among the reported elements, f_T/ℓ (f_T their padded
    frequency): a fake user's reports count ℓ times, so padding to ℓ multiplies what fake
    users gain by about ℓ (RIA: β(ℓ − f_T) against β(1 − f_T) for a frequency oracle)."""
    protocol = _set_protocol(protocol)
    ell = protocol.ell
    inner_gain = expected_gain(protocol.inner, attack, targets, beta, f_targets / ell, supported)
    return ell * inner_gain
