"""The ceiling on MCM's F1 set by its per-bit majority votes ([PEM] Sec. III-D).

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*.
In the Multiple Channel Method each user of bit group ℓ reports, on every one of the h
channels, a bit: randomised response (keep with probability 1 - φ, φ = 1/(e^{ε2}+1)) of
v[ℓ] on its own channel H(v), a fair coin on every other.  The aggregator takes the
majority vote per channel and bit, and a top value v_j is a candidate only if *all* m
votes of its channel come out right -- the limitation Sec. III-D itself points out.

Take v_j alone in its channel (no other value hashes there: collisions only make things
worse, see :func:`mcm_f1_ceiling`).  In the vote of bit ℓ on that channel every user of
the data set contributes independently (it picks group ℓ with probability s, the
group's share of users):

* a holder of v_j (c_j = f_j n of them): +1 (a right vote) with probability s(1-φ), -1
  with probability sφ, 0 (another group) otherwise;
* any other user: +1 or -1 with probability s/2 each (a coin on a channel not its own).

The vote is right when the margin M = Σ_u Z_u is positive, and with probability 1/2 when
M = 0 (ties are broken by a fair coin).  E[M] = c_j s (1-2φ) is the signal; every other
user adds a unit of variance s: the signal fraction of v_j in "its" channel is f_j, all
n users vote on it.  :func:`bit_vote_success` computes P(M > 0) + P(M = 0)/2 exactly (the
law of M by FFT of the two classes' characteristic functions).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ldp.validation import check_epsilon, check_int

__all__ = ["bit_vote_success", "mcm_candidate_probability", "mcm_f1_ceiling"]

#: Standard deviations of the margin kept on each side by the FFT (aliasing below 1e-300).
_WIDTH = 40


def _check_share(share: float, name: str) -> float:
    share = float(share)
    if not 0 < share <= 1:
        raise ValueError(f"{name} must lie in (0, 1], got {share}")
    return share


def bit_vote_success(
    epsilon_bits: float, n: int, share: float, holders: int | Sequence[int] | np.ndarray
) -> np.ndarray:
    """P(the majority vote of one bit of a value's channel is right), value alone there.

    Parameters
    ----------
    epsilon_bits : float
        ε2, the budget of the channel bits (flip probability φ = 1/(e^{ε2}+1)).
    n : int
        All users of the data set (every one votes on every channel).
    share : float
        s, the probability that a user is in this bit's group (e.g. (1-ρ)/m under
        partition, 1/m under split).
    holders : int or array of int
        c_j, the users holding the value.

    Returns
    -------
    numpy.ndarray
        P(M > 0) + P(M = 0)/2 for each c_j, with M the vote margin of the module
        docstring, exactly (the law of M by FFT; each user's group choice independent).
    """
    epsilon_bits = check_epsilon(epsilon_bits, "epsilon_bits")
    n = check_int(n, "n", minimum=1)
    s = _check_share(share, "share")
    counts = np.atleast_1d(np.asarray(holders, dtype=np.int64))
    if np.any(counts < 0) or np.any(counts > n):
        raise ValueError(f"holders must lie in [0, n = {n}], got {counts}")
    phi = 1 / (np.exp(epsilon_bits) + 1)
    mean = counts * s * (1 - 2 * phi)
    sd = np.sqrt(counts * (s - (s * (1 - 2 * phi)) ** 2) + (n - counts) * s)
    half = np.minimum(n, (np.abs(mean) + _WIDTH * sd + 10).astype(np.int64))  # |M| beyond: < 1e-300
    sizes = 1 << np.ceil(np.log2(2 * half + 1)).astype(np.int64)
    out = np.empty(counts.shape, dtype=float)
    for size in np.unique(sizes):  # the c_j of one transform length together
        size = int(size)
        theta = 2 * np.pi * np.fft.fftfreq(size)
        # log characteristic functions of one holder's and one other user's contribution
        holder = 1 - s + s * (1 - phi) * np.exp(1j * theta) + s * phi * np.exp(-1j * theta)
        other = 1 - s + s * np.cos(theta)
        with np.errstate(divide="ignore"):
            log_holder, log_other = np.log(holder.astype(complex)), np.log(other.astype(complex))
        positive = np.fft.fftfreq(size, d=1 / size) > 0  # margins x, taken mod size
        chosen = np.flatnonzero(sizes == size)
        rows = max(1, (1 << 22) // size)  # c_j per batch: 64 MiB of complex values
        for first in range(0, chosen.shape[0], rows):
            batch = chosen[first : first + rows]
            c = counts[batch, None]
            # P(M = x) = (1/size) Σ_θ E[e^{iθM}] e^{-iθx}: the forward DFT
            cf = np.exp(c * log_holder + (n - c) * log_other)
            pmf = np.clip(np.fft.fft(cf, axis=1).real / size, 0, None)
            out[batch] = pmf[:, positive].sum(axis=1) + pmf[:, 0] / 2
    return out


def _bit_share(m: int, budget: str, final_fraction: float, value_share: float, epsilon: float):
    """(ε2, s): the bits' budget and one bit group's share of users, per MCM's budget."""
    if budget == "partition":
        return epsilon, (1 - _check_share(final_fraction, "final_fraction")) / m
    if budget == "split":
        return epsilon * (1 - _check_share(value_share, "value_share")), 1 / m
    raise ValueError(f"budget must be 'split' or 'partition', got {budget!r}")


def mcm_candidate_probability(
    epsilon: float,
    n: int,
    m: int,
    frequencies: Sequence[float] | np.ndarray,
    *,
    budget: str = "partition",
    final_fraction: float = 0.1,
    value_share: float = 0.5,
) -> np.ndarray:
    """P(all m votes of v_j's channel are right), v_j alone in its channel, for each f_j.

    The m bit votes are taken as independent: their groups are disjoint, and the
    multinomial split of the users over the m groups correlates two groups' sizes by
    -s/(1-s) (-1/63 at m = 64), which this ignores.  Each factor is
    :func:`bit_vote_success` with c_j = round(f_j n).
    """
    epsilon = check_epsilon(epsilon)
    m = check_int(m, "m", minimum=1)
    n = check_int(n, "n", minimum=1)
    epsilon_bits, share = _bit_share(m, budget, final_fraction, value_share, epsilon)
    f = np.asarray(frequencies, dtype=float)
    if np.any((f < 0) | (f > 1)):
        raise ValueError("frequencies must lie in [0, 1]")
    holders = np.rint(f * n).astype(np.int64)
    return bit_vote_success(epsilon_bits, n, share, holders) ** m


def mcm_f1_ceiling(
    epsilon: float,
    n: int,
    m: int,
    k: int,
    frequencies: Sequence[float] | np.ndarray,
    *,
    budget: str = "partition",
    final_fraction: float = 0.1,
    value_share: float = 0.5,
) -> float:
    """The F1 the Sec. III-D MCM (1-bit votes, top-k output) cannot exceed on average.

    Returns (1/k) Σ_{j<=k} P_j with P_j = :func:`mcm_candidate_probability` of the k largest
    ``frequencies``.  What it bounds: the expected F1 of a top-k MCM run (``output=
    "top_k"``, ``block_bits=1``, ``block_encoding="channels"``), whatever the channel
    count h and the final test.  Why: with |C_g| = k released values,
    F1 = |C_T ∩ C_g|/k <= |C_T ∩ candidates|/k, and v_j is a candidate only if the m
    votes of its channel are right; P_j is that probability when no other value shares
    the channel, the best case -- a value of comparable frequency in the channel takes
    over the bits where the two differ, and lighter ones add a zero-mean shift to the
    margin (random bits), which lowers P(M > 0) when E[M] > 0 (Φ(a + y) + Φ(a - y) <=
    2Φ(a) for a >= 0).  h drops out: on every channel but its own a user sends a coin, so
    all n users vote on every channel.  Approximations: the m votes taken as
    independent (see :func:`mcm_candidate_probability`), and a candidate's estimate
    assumed to be released (a perfect final test), both in the bound's favour or
    negligible.

    ``budget="partition"``: ε2 = ε and s = (1 - ``final_fraction``)/m; ``"split"``:
    ε2 = (1 - ``value_share``) ε and s = 1/m.
    """
    k = check_int(k, "k", minimum=1)
    f = np.sort(np.asarray(frequencies, dtype=float))[::-1]
    if f.shape[0] < k:
        raise ValueError(f"frequencies must give at least k = {k} values, got {f.shape[0]}")
    probabilities = mcm_candidate_probability(
        epsilon,
        n,
        m,
        f[:k],
        budget=budget,
        final_fraction=final_fraction,
        value_share=value_share,
    )
    return float(probabilities.mean())
