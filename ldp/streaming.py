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


#: splitmix64's increment (the golden ratio in 64 bits) and its two multipliers.
GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of uint64 words (wrapping arithmetic), a bijection.

    The sampled engines that draw users one by one take the u-th user's word as
    splitmix64(seed + u GAMMA) for a seed drawn from the caller's generator: counter-based,
    so a chunked numpy loop and a compiled loop over the same users give the same draws.
    """
    x = np.array(x, dtype=np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= _MIX1
        x ^= x >> np.uint64(27)
        x *= _MIX2
        x ^= x >> np.uint64(31)
    return x


def split_evenly(counts: np.ndarray, pieces: int) -> np.ndarray:
    """Boundaries (pieces + 1 of them, int64) of consecutive ranges of ``counts`` holding
    about total/pieces each: the ranges of values that a compiled loop's threads draw."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    inner = np.searchsorted(np.cumsum(counts), np.arange(1, pieces) * total / pieces, side="right")
    return np.concatenate([[0], inner, [counts.shape[0]]]).astype(np.int64)


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


def repeat_in_chunks(
    items: np.ndarray, times: np.ndarray, size: int | None = None
) -> Iterator[np.ndarray]:
    """``np.repeat(items, times, axis=0)`` in consecutive pieces of at most ``size`` rows
    (default :data:`CHUNK_USERS`), never built whole: a piece is ``np.repeat`` of the
    items it spans, the first and last of them cut to the rows inside it (two binary
    searches a piece).  One piece when the repeat has at most ``size`` rows (then it is
    exactly ``np.repeat``).

    The sampled engines that draw the kept users of every value one by one take their
    users through this, so their memory stays bounded at any n."""
    items, times = np.asarray(items), np.asarray(times, dtype=np.int64)
    size = check_int(CHUNK_USERS if size is None else size, "size", minimum=1)
    edges = np.cumsum(times, dtype=np.int64)
    total = int(edges[-1]) if edges.shape[0] else 0
    if total <= size:
        yield np.repeat(items, times, axis=0)
        return
    for start in range(0, total, size):
        stop = min(total, start + size)
        first = int(np.searchsorted(edges, start, side="right"))
        last = int(np.searchsorted(edges, stop - 1, side="right"))
        piece = times[first : last + 1].copy()
        piece[0] = edges[first] - start
        piece[-1] = stop - (start if first == last else edges[last - 1])
        yield np.repeat(items[first : last + 1], piece, axis=0)


def users_in_chunks(counts: np.ndarray, chunk_users: int = CHUNK_USERS) -> Iterator[np.ndarray]:
    """The users of a histogram, ``chunk_users`` at a time: value v repeated ``counts[v]``
    times, in value order (the order of ``np.repeat(np.arange(d), counts)``), int64."""
    counts = check_counts(counts, None, name="counts")
    check_total(counts)
    chunk_users = check_int(chunk_users, "chunk_users", minimum=1)
    yield from repeat_in_chunks(np.arange(counts.shape[0], dtype=np.int64), counts, chunk_users)


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
    total: np.ndarray | int = 0  # the statistic's shape is the oracle's (one row a candidate)
    n_users = 0
    for values in chunks:
        reports = oracle.perturb(values, rng)
        total = total + oracle.aggregate(reports, chosen)
        n_users += oracle.n_reports(reports)
        del reports  # one chunk's reports at a time
    if isinstance(total, int):  # no chunks at all
        total = np.zeros(chosen.shape[0], dtype=np.int64)
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
