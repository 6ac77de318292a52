"""A bounded-memory reports engine: perturb users a chunk at a time, keep only a sum.

The reports engine (``oracle.estimate(oracle.perturb(values, rng))``) holds every user's
report at once: 16 bytes a user for local hashing, d/8 for the unary encodings, so 10^8
users of OLH already take 1.6 GB of reports plus the perturbation's temporaries.  For an
oracle whose estimate is a function of n and of a statistic that is a *sum over reports*
(the pure framework's support counts I_v, [FO] "Method"), the reports never need to be
held together: :func:`stream_estimate` perturbs one chunk of users, adds the chunk's
statistic (``oracle.aggregate``) to a running total, drops the chunk, and finishes with
``oracle.estimate_aggregate``.  Memory is one chunk's reports plus the statistic, whatever n.

An oracle opts in by declaring ``Capabilities(additive=True)`` (:mod:`ldp.contract`).
Oracles whose reports share public randomness drawn once per ``perturb`` call (a hash
pool, a sketch's hash family: ``public_per_call``) are not additive in this sense: chunks
would each draw their own.

Randomness: the chunks are perturbed in order with the one ``rng`` given, so the result
is *exactly* ``oracle.estimate`` of the concatenated reports of ``oracle.perturb(chunk,
rng)`` over the same chunks (tested bit for bit); a different chunk size consumes the
generator differently, so it gives another draw of the same law (tested statistically).

>>> import numpy as np
>>> from ldp.oracles import OLH
>>> from ldp.streaming import stream_histogram
>>> counts = np.array([600, 300, 100])
>>> estimates = stream_histogram(OLH(epsilon=2.0, domain_size=3), counts,
...                              np.random.default_rng(0), chunk_users=256)
>>> estimates.shape
(3,)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ldp.contract import capabilities_of
from ldp.validation import ParameterError, check_counts, check_generator, check_int, check_total

#: Users perturbed at once by default: 2^20 (16 MiB of OLH reports, 128 MiB of unary
#: reports at d = 1024), small against the memory budget and large enough that the
#: per-call overhead of ``perturb`` and ``aggregate`` vanishes.
CHUNK_USERS = 1 << 20


def check_additive(oracle: Any) -> None:
    """Refuse an oracle that does not declare an additive statistic (``additive=True``)."""
    if not capabilities_of(oracle).additive:
        raise ParameterError(
            "oracle",
            getattr(oracle, "name", type(oracle).__name__) or type(oracle).__name__,
            "an oracle declaring Capabilities(additive=True)",
            detail="its estimate is not declared a function of n and a sum over reports "
            "(e.g. public randomness shared by a whole perturb call), so reports cannot be "
            "aggregated chunk by chunk",
        )


def users_in_chunks(counts: np.ndarray, chunk_users: int = CHUNK_USERS) -> Iterator[np.ndarray]:
    """The users of a histogram, ``chunk_users`` at a time: value v repeated ``counts[v]``
    times, in value order (the order of ``np.repeat(np.arange(d), counts)``), int64.

    Only one chunk exists at a time: user i holds the value v with
    ``cumsum(counts)[v-1] <= i < cumsum(counts)[v]`` (a binary search per user).
    """
    counts = check_counts(counts, None, name="counts")
    n = check_total(counts)
    chunk_users = check_int(chunk_users, "chunk_users", minimum=1)
    edges = np.cumsum(counts, dtype=np.int64)
    for start in range(0, n, chunk_users):
        users = np.arange(start, min(n, start + chunk_users), dtype=np.int64)
        yield np.searchsorted(edges, users, side="right").astype(np.int64)


def stream_estimate(
    oracle: Any,
    chunks: Iterable[np.ndarray],
    rng: np.random.Generator,
    candidates: np.ndarray | None = None,
) -> np.ndarray:
    """The reports engine's estimate, aggregating each chunk of users' reports as it comes.

    Parameters
    ----------
    oracle :
        A frequency oracle declaring ``Capabilities(additive=True)``.
    chunks : iterable of numpy.ndarray
        The users' values, one array per chunk (e.g. :func:`users_in_chunks`, or chunks
        read from a file); each is perturbed with ``oracle.perturb(chunk, rng)``.
    rng : numpy.random.Generator
        Used by every chunk in turn.
    candidates : numpy.ndarray, optional
        The values to estimate (default: the whole domain).

    Returns
    -------
    numpy.ndarray
        ``oracle.estimate_aggregate(Σ_chunks oracle.aggregate(reports, candidates), n)``:
        exactly ``oracle.estimate`` of all the chunks' reports together.
    """
    check_additive(oracle)
    rng = check_generator(rng)
    chosen = oracle.candidates(candidates)
    total = np.zeros(chosen.shape[0], dtype=np.int64)
    n_users = 0
    for values in chunks:
        reports = oracle.perturb(values, rng)
        total += oracle.aggregate(reports, chosen)
        n_users += oracle.n_reports(reports)
        del reports  # one chunk's reports at a time
    return oracle.estimate_aggregate(total, n_users)


def stream_histogram(
    oracle: Any,
    counts: np.ndarray,
    rng: np.random.Generator,
    candidates: np.ndarray | None = None,
    chunk_users: int = CHUNK_USERS,
) -> np.ndarray:
    """:func:`stream_estimate` over the users of a histogram (``counts[v]`` users hold v),
    ``chunk_users`` at a time: memory O(chunk_users + |candidates|), whatever n."""
    check_additive(oracle)
    counts = check_counts(counts, oracle.domain_size, name="counts")
    return stream_estimate(oracle, users_in_chunks(counts, chunk_users), rng, candidates)
