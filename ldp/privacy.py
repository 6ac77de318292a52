"""Audit ε-LDP from a protocol's own likelihood: the largest privacy loss over input pairs.

Citations ``[FO]`` are to Wang, Blocki, Li, Jha, *Locally Differentially Private Protocols
for Frequency Estimation* (USENIX Security 2017).  A protocol P is ε-LDP when for every pair
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
``"bits"`` (SUE, OUE, THE)
    ``report_probabilities(v)`` is Pr[bit i = 1 | v] for each bit, the bits independent.
    The ratio of two product distributions is a product of per-bit ratios, each maximised
    separately, so the loss is Σ_i max(log p_i(v)/p_i(v'), log (1-p_i(v))/(1-p_i(v'))):
    p(1-q)/((1-p)q) = e^ε for both unary encodings ([FO] "Unary Encoding", "Optimized UE"),
    less for THE's client-side thresholded bits (post-processing of an ε-LDP histogram).
``"hashed"`` (BLH, OLH)
    ``report_probabilities(v, seeds)`` is Pr[y | v, seed] (rows: seeds, columns: y).  The
    seed is drawn independently of v, so Pr[seed] cancels from the ratio and the loss is
    the maximum over the enumerated seeds and y; it is log(p/q) = ε for every seed whose hash
    separates v and v' ([FO] "Binary Local Hash", "Optimized Local Hash").  Over a finite
    set of seeds this is a lower bound of the supremum over all 2^64 seeds, and equal to it
    as soon as one enumerated seed separates the pair (for OLH the bound p/q holds for every
    hash function, so no seed can do worse).
``"product"`` (SHE)
    ``report_probabilities(v)`` is a (d, K) array: row j is the pmf of coordinate j of the
    report over K values, the coordinates independent.  As for bits, the loss of a product
    is the sum over coordinates of each coordinate's worst log-ratio; SHE's integer
    reports make it exact: ln(max own/other) + ln(max other/own) of its two tables.

These checks read the *declared* probabilities; they are exact for the oracles here
because every oracle declares the probabilities its ``perturb`` realises (integer
thresholds on a 53-bit grid, integer noise tables: see ``docs/privacy.md``).  Continuous
(float) densities are deliberately not a model: a float mechanism's bytes do not follow
its density (Mironov, CCS 2012), so only :mod:`ldp.audit`, which runs ``perturb``, can
judge one.

Public randomness.  A protocol whose report carries public randomness drawn independently
of the value (a hash seed, a sketch's row, a cohort; ``Capabilities.public_randomness``)
is ε-LDP exactly when it is given every public draw, the draw cancelling from the ratio.
The ``"hashed"`` model enumerates seeds (a report's seed, or a sketch row's seed: then
the categorical (row, coefficient, sign) of the Hadamard sketch); the ``"bits"`` model,
for such a protocol, takes one product of bits per public draw and the largest loss over
draws: ``report_probabilities(v, draws)`` with the protocol's own ``public_draws()``
(every cohort of RAPPOR) or the seeds (the rows of the count-mean sketch).

A protocol declares its model in its capabilities (:mod:`ldp.contract`); the ``model``
argument overrides it.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ldp.contract import REPORT_MODELS, HasPublicDraws, capabilities_of
from ldp.validation import check_values

Model = Literal["categorical", "bits", "hashed", "product"]
MODELS: tuple[str, ...] = REPORT_MODELS

#: Inputs compared by default (all of the domain) only up to this domain size.
MAX_AUDIT_DOMAIN = 256
#: The "product" model holds inputs x coordinates x values probabilities: at most this many.
MAX_PRODUCT_TABLE = 2**25

#: The hash seeds enumerated by default: 0..127 (small, structured seeds) and 128 seeds
#: spread over the whole 64-bit range, fixed once and for all.
DEFAULT_SEEDS = np.concatenate(
    [
        np.arange(128, dtype=np.uint64),
        np.random.SeedSequence(2017).generate_state(128, dtype=np.uint64),
    ]
)


def report_model(oracle: Any) -> Model:
    """The report model a protocol declares in its ``capabilities`` (:mod:`ldp.contract`).

    Parameters
    ----------
    oracle : FrequencyOracle
        A protocol of :mod:`ldp.oracles`, or any object exposing the likelihood method of
        one of the four models and declaring it.

    Returns
    -------
    str
        One of ``"categorical"``, ``"bits"``, ``"hashed"``, ``"product"``.
    """
    declared = capabilities_of(oracle).report_model
    if declared is not None:
        if declared not in MODELS:
            raise ValueError(f"report_model must be one of {MODELS}, got {declared!r}")
        return declared
    raise TypeError(
        f"cannot tell the report model of {type(oracle).__name__}: declare "
        f"capabilities = Capabilities(report_model=...) or pass model= (one of {MODELS})"
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


def privacy_loss_matrix(
    oracle: Any,
    *,
    values: np.ndarray | None = None,
    seeds: np.ndarray | None = None,
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
    model : {"categorical", "bits", "hashed", "product"}, optional
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
    if seeds is not None and model != "hashed" and not capabilities_of(oracle).public_randomness:
        raise ValueError(f"seeds apply to the 'hashed' model only, not {model!r}")

    if model == "categorical":
        table = np.stack([_log(oracle.report_probabilities(v)) for v in values])
        return _pairwise_log_ratio(table)
    if model == "bits":
        # Pr[bit = 1] per bit: a product of two-valued coordinates; with public randomness
        # (a cohort, a sketch row), one product per public draw, the draw cancelling
        draws = _public_draws(oracle, seeds)
        if draws is None:
            ones = np.stack(
                [np.asarray(oracle.report_probabilities(v), dtype=float) for v in values]
            )
            return _product_loss(np.stack([1.0 - ones, ones], axis=-1))
        ones = np.stack(
            [np.asarray(oracle.report_probabilities(v, draws), dtype=float) for v in values]
        )  # (inputs, draws, bits)
        return _bits_loss_per_draw(ones)
    if model == "hashed":
        seeds = DEFAULT_SEEDS if seeds is None else np.asarray(seeds, dtype=np.uint64).ravel()
        if seeds.size == 0:
            raise ValueError("seeds must not be empty")
        # one column per report (seed, y); Pr[seed] is the same under every input and cancels
        table = np.stack([_log(oracle.report_probabilities(v, seeds)).ravel() for v in values])
        return _pairwise_log_ratio(table)
    # product: (inputs, coordinates, values per coordinate)
    first = np.asarray(oracle.report_probabilities(values[0]), dtype=float)
    if first.ndim != 2:
        raise ValueError(f"product report_probabilities must be (d, K), got {first.shape}")
    if len(values) * first.size > MAX_PRODUCT_TABLE:
        raise ValueError(
            f"{len(values)} inputs x {first.shape} coordinate pmfs exceed {MAX_PRODUCT_TABLE} "
            "numbers; pass fewer values"
        )
    rest = [np.asarray(oracle.report_probabilities(v), dtype=float) for v in values[1:]]
    return _product_loss(np.stack([first, *rest]))


def _public_draws(oracle: Any, seeds: np.ndarray | None) -> np.ndarray | None:
    """The public randomness a "bits" protocol's likelihood is conditioned on, if any.

    None when the protocol declares no public randomness; else ``oracle.public_draws()``
    when it enumerates its own (RAPPOR's cohorts), else the hash seeds (``seeds`` or
    ``DEFAULT_SEEDS``: a sketch's rows are hash functions named by seeds).
    """
    if not capabilities_of(oracle).public_randomness:
        return None
    if isinstance(oracle, HasPublicDraws) and seeds is None:
        return np.asarray(oracle.public_draws())
    return DEFAULT_SEEDS if seeds is None else np.asarray(seeds, dtype=np.uint64).ravel()


def _bits_loss_per_draw(ones: np.ndarray) -> np.ndarray:
    """max over draws r of Σ_i max_x ln P_a(bit i = x | r)/P_b(bit i = x | r), for all a, b.

    ``ones[a, r, i]`` = P(bit i = 1 | input a, public draw r).  A bit value impossible
    under a contributes nothing; possible under a and impossible under b, +inf.
    """
    inputs, draws, width = ones.shape
    if np.any(ones < 0) or np.any(ones > 1) or np.any(np.isnan(ones)):
        raise ValueError("report probabilities must lie in [0, 1]")
    with np.errstate(divide="ignore"):
        logs = np.stack([np.log1p(-ones), np.log(ones)])  # (2, inputs, draws, bits)
    loss = np.zeros((inputs, inputs))
    step = max(1, (1 << 22) // max(1, inputs * width))
    for a in range(inputs):
        for start in range(0, draws, step):
            mine = logs[:, a, start : start + step][:, None]  # (2, 1, r, bits)
            theirs = logs[:, :, start : start + step]  # (2, inputs, r, bits)
            with np.errstate(invalid="ignore"):
                ratio = np.where(np.isfinite(mine), mine - theirs, -np.inf)
            per_draw = ratio.max(axis=0).sum(axis=-1)  # (inputs, r)
            loss[a] = np.maximum(loss[a], per_draw.max(axis=1))
    np.fill_diagonal(loss, 0.0)
    return loss


def _product_loss(probabilities: np.ndarray) -> np.ndarray:
    """Σ_j M_j[a, b] over coordinates j, M_j the pairwise loss of coordinate j alone.

    ``probabilities[a, j]`` is the pmf of coordinate j under input a.  The ratio of two
    product distributions is the product of the coordinates' ratios, each maximised on its
    own.  Inputs with identical pmfs at j (most of them: SHE and the unary encodings differ
    only at the inputs' own coordinates) are grouped first.
    """
    inputs, coordinates = probabilities.shape[:2]
    loss = np.zeros((inputs, inputs))
    # a coordinate whose pmf is the same under every input adds nothing (one comparison
    # for all of them: np.unique over rows is slow, and most coordinates are such)
    alike = (probabilities == probabilities[:1]).reshape(inputs, coordinates, -1).all(axis=(0, 2))
    for j in np.flatnonzero(~alike):
        distinct, which = np.unique(probabilities[:, j], axis=0, return_inverse=True)
        if distinct.shape[0] > 1:
            loss += _pairwise_log_ratio(_log(distinct))[np.ix_(which.ravel(), which.ravel())]
    return loss


def max_privacy_loss(
    oracle: Any,
    *,
    values: np.ndarray | None = None,
    seeds: np.ndarray | None = None,
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
    matrix = privacy_loss_matrix(oracle, values=values, seeds=seeds, model=model)
    return float(matrix.max())
