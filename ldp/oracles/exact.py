"""Bernoulli draws whose realised probabilities are known exactly: the 53-bit grid.

Why.  ``rng.random(n) < p`` does not draw with probability p: the comparison realises
ceil(p·2^53)/2^53, and a p that rounds to 1.0 in float64 makes the report deterministic
(GRR then reports the true value every time).  ε-LDP is a statement about the
probabilities of the emitted reports, so every oracle here draws its coins as follows.

How.  A probability is realised as T/2^53 for an integer threshold T: draw a uniform
integer U in [0, 2^53) and emit 1 when U < T (:func:`below`).  U is drawn in two parts,
its top 8 bits for every coin and its 45 low bits only for the coins whose top bits
equal T's (one in 256), which alone need them: the same law as drawing all 53 bits
(``rng.integers`` draws each part exactly), at a third of the cost for large arrays.
T is rounded in the *private direction* of the coin (a keep-probability down, a
flip-probability up), so
the realised privacy ratio is at most the ideal one, and the oracle declares the realised
T/2^53 as its p* or q*: every such value is a float64 exactly, so the estimators are
exactly unbiased for the mechanism that really runs and :func:`ldp.privacy.max_privacy_loss`
audits what is really emitted.

Rounding.  The closed forms of the papers give each probability x and its complement
1 - x in float64 within a few units in the last place (ulp).  The smaller of the two is
rounded, after a relative widening by ``MARGIN`` = 2^-50 (8 ulps) in the private
direction, so float error cannot cross the exact value: T/2^53 <= x exactly for a keep
coin, >= x for a flip coin.  The widening moves a probability by at most 2^-50 relatively
(plus one grid step, 2^-53 absolutely).

Limits.  A coin whose smaller side x or 1 - x is below 2^-53 cannot be represented: it
would round to 0 or 1 and make the report reveal the value (or never depend on it).  The
oracles refuse such an ε with :func:`check_representable`, naming the largest (or smallest)
safe value.
"""

from __future__ import annotations

import math

import numpy as np

from ldp.validation import ParameterError

#: Bits of the uniform integers the coins compare against.
GRID_BITS = 53
#: The number of grid points: a realised probability is T / GRID.
GRID = 1 << GRID_BITS
#: The top bits of U drawn for every coin, and the low bits drawn only on a tie (:func:`below`).
HIGH_BITS = 8
LOW_BITS = GRID_BITS - HIGH_BITS
LOW_MASK = (1 << LOW_BITS) - 1
#: Relative widening in the private direction that absorbs float64 error in x.
MARGIN = 2.0**-50
#: The smallest representable side min(x, 1 - x) of a coin: one grid step, widened.
SMALLEST = 1.0 / (GRID * (1 - MARGIN))
#: ln(1/SMALLEST - 1): the largest log-odds ln((1 - x)/x) of a representable coin.
LOG_GRID = math.log(GRID * (1 - MARGIN) - 1)


def threshold(
    probability: float, complement: float, *, round_down: bool, exact: bool = False
) -> int:
    """The integer T in [1, 2^53 - 1] realising ``probability`` as T/2^53.

    Parameters
    ----------
    probability, complement : float
        x and 1 - x, each from its own closed form (the smaller is used, so a probability
        near 1 keeps its relative accuracy through its complement).
    round_down : bool
        True for a keep-probability (T/2^53 <= x), False for a flip-probability
        (T/2^53 >= x): the direction in which the privacy ratio cannot grow.
    exact : bool, default False
        x is exact (a constant such as OUE's 1/2, not a float approximation): no widening.

    Raises
    ------
    ValueError
        If x or 1 - x is below one grid step (T would be 0 or 2^53).
    """
    if not (0.0 < probability < 1.0 and 0.0 < complement < 1.0):
        raise ValueError(f"a coin needs 0 < x < 1, got x = {probability}, 1 - x = {complement}")
    margin = 0.0 if exact else MARGIN
    if probability <= complement:
        scaled = probability * GRID
        t = math.floor(scaled * (1 - margin)) if round_down else math.ceil(scaled * (1 + margin))
    else:  # round the complement the other way: x down <=> 1 - x up
        scaled = complement * GRID
        low = math.ceil(scaled * (1 + margin)) if round_down else math.floor(scaled * (1 - margin))
        t = GRID - low
    if not 0 < t < GRID:
        raise ValueError(
            f"probability {probability:.3g} is within one step 2^-{GRID_BITS} of 0 or 1"
        )
    return t


def realised(t: int) -> float:
    """T/2^53 as a float64 (exact: T < 2^53)."""
    return t / GRID


def below(
    rng: np.random.Generator, thresholds: int | np.ndarray, size: int | tuple[int, ...]
) -> np.ndarray:
    """U < T for independent uniform integers U in [0, 2^53): coins, each 1 with
    probability exactly T/2^53, as a bool array of shape ``size``.

    ``thresholds`` is one T or an int64 array of them broadcastable to ``size`` (a coin's
    own T).  U = H·2^45 + L with H its top 8 bits and L its 45 low bits, independent and
    uniform: U < T exactly when H < T_H, or H = T_H and L < T_L, so L is drawn only for
    the coins where H = T_H.
    """
    t = np.asarray(thresholds, dtype=np.int64)
    high = rng.integers(0, 1 << HIGH_BITS, size=size, dtype=np.uint8)
    if t.ndim == 0:  # T_H up to 2^8 (T = 2^53: always 1), compared with the uint8 H as it is
        t_high: int | np.ndarray = int(t) >> LOW_BITS
    else:  # two bytes a coin, not eight
        t_high = np.right_shift(t, LOW_BITS, out=np.empty(t.shape, np.uint16), casting="unsafe")
    coins = high < t_high
    tied = np.flatnonzero(high == t_high)
    if tied.size:
        t_low = np.broadcast_to(t, coins.shape).flat[tied] & LOW_MASK
        coins.flat[tied] = rng.integers(0, 1 << LOW_BITS, size=tied.size) < t_low
    return coins


def bernoulli(rng: np.random.Generator, t: int, size: int | tuple[int, ...]) -> np.ndarray:
    """Independent coins, each 1 with probability exactly T/2^53 (a bool array)."""
    return below(rng, t, size)


def check_representable(
    name: str, epsilon: float, smallest: float, *, largest_safe: float, smallest_safe: float = 0.0
) -> None:
    """Refuse an ε at which some coin of the oracle is below one grid step of 0 or 1.

    Parameters
    ----------
    name : str
        The oracle, for the message.
    epsilon : float
        The privacy budget asked for.
    smallest : float
        min over the oracle's coins of min(x, 1 - x), from the closed forms.
    largest_safe, smallest_safe : float
        The ε range in which every coin is representable (closed forms, given by the oracle).
    """
    if smallest >= SMALLEST:
        return
    if epsilon > largest_safe:
        raise ParameterError(
            "epsilon",
            epsilon,
            f"<= {largest_safe:.6g} for {name}",
            message=(
                f"epsilon = {epsilon} is too large for {name}: a report probability of "
                f"{smallest:.3g} is below 2^-{GRID_BITS}, the resolution of its exact sampler, "
                f"and would round to 0 or 1 (a report revealing the value); the largest safe "
                f"epsilon is {largest_safe:.6g}"
            ),
        )
    raise ParameterError(
        "epsilon",
        epsilon,
        f">= {smallest_safe:.6g} for {name}",
        message=(
            f"epsilon = {epsilon} is too small for {name}: a report probability of "
            f"{smallest:.3g} is below 2^-{GRID_BITS}, the resolution of its exact sampler; "
            f"the smallest safe epsilon is {smallest_safe:.6g}"
        ),
    )
