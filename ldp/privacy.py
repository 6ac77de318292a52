"""Audit ε-LDP from a protocol's own likelihood: the largest privacy loss over input pairs.

Citations ``[FO]`` are to Wang, Blocki, Li, Jha, *Locally Differentially Private Protocols
for Frequency Estimation* (USENIX Security 2017), as given in
``shared/papers/frequency-oracles-slides.txt``.  A protocol P is ε-LDP when for every pair
of inputs v, v' and every report y ([FO] "The Warner Model", "Direct Encoding"),

    Pr[P(v) = y] <= e^ε Pr[P(v') = y],

so its *privacy loss* is sup_{v != v'} sup_y log Pr[y | v] / Pr[y | v'], and the protocol
is ε-LDP exactly when that loss is <= ε.  This module computes the loss from the
likelihood methods the oracles expose, so that a new protocol can be audited the same way
(and so that the tests tie ``perturb`` to the same likelihood with goodness-of-fit tests).
Four report models cover the protocols of [FO] Table 1:

``"categorical"`` (GRR)
    ``report_probabilities(v)`` is the vector Pr[y | v] over every report y.  The loss of
    (v, v') is max_y log Pr[y | v]/Pr[y | v']; for GRR it is log(p/q) = ε.
``"bits"`` (SUE, OUE)
    ``report_probabilities(v)`` is Pr[bit i = 1 | v] for each bit, the bits independent.
    The ratio of two product distributions is a product of per-bit ratios, each maximised
    separately, so the loss is Σ_i max(log p_i(v)/p_i(v'), log (1-p_i(v))/(1-p_i(v'))):
    p(1-q)/((1-p)q) = e^ε for both unary encodings ([FO] "Unary Encoding", "Optimized UE").
``"hashed"`` (BLH, OLH)
    ``report_probabilities(v, seeds)`` is Pr[y | v, seed] (rows: seeds, columns: y).  The
    seed is drawn independently of v, so Pr[seed] cancels from the ratio and the loss is
    the maximum over the enumerated seeds and y; it is log(p/q) = ε for every seed whose hash
    separates v and v' ([FO] "Binary Local Hash", "Optimized Local Hash").  Over a finite
    set of seeds this is a lower bound of the supremum over all 2^64 seeds, and equal to it
    as soon as one enumerated seed separates the pair (for OLH the bound p/q holds for every
    hash function, so no seed can do worse).
``"density"`` (SHE, THE)
    ``log_density(points, v)`` is log f(x | v) of a continuous report.  The loss is the
    maximum of log f(x|v) - log f(x|v') over the given points.  By default the points are
    the vectors with coordinates in {0, 1} and at most two ones: for Laplace noise around a
    one-hot encoding the log-ratio is piecewise linear in (x_v, x_v') with kinks only at 0
    and 1 and constant beyond them (the other coordinates cancel), so its supremum is
    attained at one of these points and the default is exact.  For another continuous
    mechanism, pass the points.  :func:`laplace_histogram_sup` gives the analytic supremum
    to compare with.

A protocol outside :mod:`ldp.oracles` declares its model with a class attribute
``report_model`` (one of the four names above) or through the ``model`` argument.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ldp._validation import check_int, check_values
from ldp.oracles import BLH, GRR, OLH, OUE, SHE, SUE, THE

Model = Literal["categorical", "bits", "hashed", "density"]
MODELS: tuple[str, ...] = ("categorical", "bits", "hashed", "density")

#: Inputs compared by default (all of the domain) only up to this domain size.
MAX_AUDIT_DOMAIN = 256

#: The hash seeds enumerated by default: 0..127 (small, structured seeds) and 128 seeds
#: spread over the whole 64-bit range, fixed once and for all.
DEFAULT_SEEDS = np.concatenate(
    [
        np.arange(128, dtype=np.uint64),
        np.random.SeedSequence(2017).generate_state(128, dtype=np.uint64),
    ]
)


def report_model(oracle: Any) -> Model:
    """The report model of an oracle: its ``report_model`` attribute, else from its class.

    Parameters
    ----------
    oracle : FrequencyOracle
        A protocol of :mod:`ldp.oracles`, or any object exposing the likelihood method of
        one of the four models and a ``report_model`` attribute naming it.

    Returns
    -------
    str
        One of ``"categorical"``, ``"bits"``, ``"hashed"``, ``"density"``.
    """
    declared = getattr(oracle, "report_model", None)
    if declared is not None:
        if declared not in MODELS:
            raise ValueError(f"report_model must be one of {MODELS}, got {declared!r}")
        return declared
    for classes, model in (
        ((GRR,), "categorical"),
        ((SUE, OUE), "bits"),
        ((BLH, OLH), "hashed"),
        ((SHE, THE), "density"),
    ):
        if isinstance(oracle, classes):
            return model  # type: ignore[return-value]
    raise TypeError(
        f"cannot tell the report model of {type(oracle).__name__}: give it a report_model "
        f"attribute or pass model= (one of {MODELS})"
    )


def _pairwise_log_ratio(log_likelihood: np.ndarray) -> np.ndarray:
    """M[a, b] = max_r (L[a, r] - L[b, r]) over the reports r that input a can produce.

    ``log_likelihood`` has one row per input and one column per report (log-probability
    or log-density, -inf where the report is impossible).  A report impossible under a
    contributes nothing; one possible under a but impossible under b makes M[a, b] = +inf.
    """
    rows = log_likelihood.shape[0]
    loss = np.zeros((rows, rows))
    for a in range(rows):
        possible = np.isfinite(log_likelihood[a])
        if not possible.any():
            raise ValueError(f"input {a} has no possible report among those enumerated")
        la = log_likelihood[a, possible]
        with np.errstate(invalid="ignore"):
            ratio = la[None, :] - log_likelihood[:, possible]  # +inf where b cannot
        loss[a] = ratio.max(axis=1)
    np.fill_diagonal(loss, 0.0)
    return loss


def _log(probabilities: np.ndarray) -> np.ndarray:
    probabilities = np.asarray(probabilities, dtype=float)
    if np.any(probabilities < 0) or np.any(probabilities > 1) or np.any(np.isnan(probabilities)):
        raise ValueError("report probabilities must lie in [0, 1]")
    with np.errstate(divide="ignore"):
        return np.log(probabilities)


def default_points(domain_size: int) -> np.ndarray:
    """The points {0} ∪ {e_u} ∪ {e_u + e_w}: where a Laplace histogram's log-ratio peaks.

    Parameters
    ----------
    domain_size : int
        The number d of coordinates.

    Returns
    -------
    numpy.ndarray
        Shape (1 + d + d(d-1)/2, d), float64.
    """
    d = check_int(domain_size, "domain_size", minimum=1)
    upper, lower = np.triu_indices(d, k=1)
    pairs = np.zeros((upper.shape[0], d))
    pairs[np.arange(upper.shape[0]), upper] = 1.0
    pairs[np.arange(upper.shape[0]), lower] = 1.0
    return np.vstack([np.zeros((1, d)), np.eye(d), pairs])


def privacy_loss_matrix(
    oracle: Any,
    *,
    values: np.ndarray | None = None,
    seeds: np.ndarray | None = None,
    points: np.ndarray | None = None,
    model: Model | None = None,
) -> np.ndarray:
    """The privacy loss of every ordered pair of inputs: M[a, b] = sup_y log Pr[y|a]/Pr[y|b].

    Parameters
    ----------
    oracle : FrequencyOracle
        The protocol to audit (see the module docstring for the four report models).
    values : array_like of int, optional
        The inputs to compare (distinct, in the domain; as rows of uint64 words above
        2^64 values); all of the domain by default (at most ``MAX_AUDIT_DOMAIN`` values).
    seeds : array_like of uint64, optional
        ``"hashed"`` model only: the hash seeds to enumerate (default ``DEFAULT_SEEDS``).
    points : array_like of float, shape (P, d), optional
        ``"density"`` model only: where to evaluate the log-density ratio (default
        :func:`default_points`, exact for Laplace noise around a one-hot encoding).
    model : {"categorical", "bits", "hashed", "density"}, optional
        The report model; inferred from the oracle by default (:func:`report_model`).

    Returns
    -------
    numpy.ndarray
        Shape (k, k) for k inputs, zero on the diagonal; ``+inf`` where some report is
        possible under ``values[a]`` and impossible under ``values[b]``.
    """
    model = report_model(oracle) if model is None else model
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    domain_size = int(oracle.domain_size)
    if values is None:
        if domain_size > MAX_AUDIT_DOMAIN:
            raise ValueError(
                f"domain_size {domain_size} is too large to compare every pair of inputs "
                f"(at most {MAX_AUDIT_DOMAIN}); pass values"
            )
        values = np.arange(domain_size)
    checked = check_values(values, domain_size)
    if checked.shape[0] < 2 or np.unique(checked, axis=0).shape[0] != checked.shape[0]:
        raise ValueError("values must hold at least two distinct inputs")
    # one input at a time: an int, or a row of words above 2^64 values
    values = [row if checked.ndim == 2 else int(row) for row in checked]
    if seeds is not None and model != "hashed":
        raise ValueError(f"seeds apply to the 'hashed' model only, not {model!r}")
    if points is not None and model != "density":
        raise ValueError(f"points apply to the 'density' model only, not {model!r}")

    if model == "categorical":
        table = np.stack([_log(oracle.report_probabilities(v)) for v in values])
        return _pairwise_log_ratio(table)
    if model == "bits":
        # product distribution: sum over bits of each bit's own worst-case log-ratio
        ones = np.stack([np.asarray(oracle.report_probabilities(v), dtype=float) for v in values])
        loss = np.zeros((len(values), len(values)))
        log_one, log_zero = _log(ones), _log(1.0 - ones)
        for bit in range(ones.shape[1]):
            table = np.column_stack([log_zero[:, bit], log_one[:, bit]])
            loss += _pairwise_log_ratio(table)
        return loss
    if model == "hashed":
        seeds = DEFAULT_SEEDS if seeds is None else np.asarray(seeds, dtype=np.uint64).ravel()
        if seeds.size == 0:
            raise ValueError("seeds must not be empty")
        # one column per report (seed, y); Pr[seed] is the same under every input and cancels
        table = np.stack([_log(oracle.report_probabilities(v, seeds)).ravel() for v in values])
        return _pairwise_log_ratio(table)
    # density
    points = default_points(domain_size) if points is None else np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[0] == 0:
        raise ValueError(f"points must have shape (P, {domain_size}), got {points.shape}")
    table = np.stack([np.asarray(oracle.log_density(points, v), dtype=float) for v in values])
    return _pairwise_log_ratio(table)


def max_privacy_loss(
    oracle: Any,
    *,
    values: np.ndarray | None = None,
    seeds: np.ndarray | None = None,
    points: np.ndarray | None = None,
    model: Model | None = None,
) -> float:
    """The largest log Pr[report | v] / Pr[report | v'] over pairs of distinct inputs.

    The protocol is ε-LDP exactly when this is <= ε ([FO] "The Warner Model"); see the
    module docstring for how each report model is enumerated, and
    :func:`privacy_loss_matrix` for the parameters.

    Returns
    -------
    float
        The privacy loss in nats (``inf`` if some report rules an input out).

    Examples
    --------
    >>> from ldp.oracles import OUE
    >>> round(max_privacy_loss(OUE(epsilon=1.0, domain_size=4)), 12)
    1.0
    """
    matrix = privacy_loss_matrix(oracle, values=values, seeds=seeds, points=points, model=model)
    return float(matrix.max())


def laplace_histogram_sup(oracle: Any, *, probe: float = 1.0) -> float:
    """The analytic supremum of the privacy loss of a Laplace histogram encoding (SHE, THE).

    Histogram encoding adds independent Laplace(b) noise to each coordinate of the one-hot
    vector e_v, so log f(x | v) - log f(x | v') = (|x - e_v'|_1 - |x - e_v|_1) / b, whose
    supremum is |e_v - e_v'|_1 / b = 2/b by the triangle inequality ([FO] "Comparison", THE
    and SHE; b = 2/ε gives ε).  The scale b is read off the oracle's own ``log_density``
    (moving one coordinate of the mode by ``probe`` lowers the log-density by probe/b), so
    this is an independent check of the likelihood, not a restatement of ε.

    Parameters
    ----------
    oracle : SHE or THE
        An oracle with ``log_density(points, value)`` and ``domain_size``.
    probe : float, default 1.0
        The step used to read off the Laplace scale.

    Returns
    -------
    float
        2/b.
    """
    d = int(oracle.domain_size)
    mode = np.zeros((2, d))
    mode[:, 0] = 1.0
    mode[1, -1] += probe  # move a coordinate that is not the value's own
    log_f = np.asarray(oracle.log_density(mode, 0), dtype=float)
    inverse_scale = (log_f[0] - log_f[1]) / probe
    if not inverse_scale > 0:
        raise ValueError("log_density does not decrease away from the mode: not a Laplace model")
    return 2.0 * inverse_scale
