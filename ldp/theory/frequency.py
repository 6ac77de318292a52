"""Frequency-oracle closed forms of Wang, Blocki, Li, Jha (USENIX Security 2017).

Citations ``[FO]`` point at that paper (Table 1, its pure framework) and the
authors' talk of it (the multiple-questions slide).

A *pure* protocol has a support set per report and two probabilities p* > q*: a user
holding v reports something supporting v with probability p*, and something supporting
any fixed v' != v with probability q*.  With I_v reports supporting v out of n,

    c(v) = (I_v - n q*) / (p* - q*)                                   [FO] "Method"
    Var[c(v)] = n q*(1-q*)/(p*-q*)^2 + n_v (1-p*-q*)/(p*-q*)

The first variance term alone is the approximation that Table 1 tabulates (n_v << n).
"""

from __future__ import annotations

import math

import numpy as np

from ldp.lazy import lazy_module
from ldp.validation import check_epsilon, check_int

optimize = lazy_module("scipy.optimize")

ArrayLike = float | np.ndarray


def pure_estimate(support: ArrayLike, n: int, p_star: float, q_star: float) -> ArrayLike:
    """Unbiased count c(v) = (I_v - n q*)/(p* - q*) of the pure framework ([FO] "Method")."""
    estimate = np.array(support, dtype=float)  # a fresh array: the two steps run in place
    estimate -= n * q_star
    estimate /= p_star - q_star
    return estimate if estimate.ndim else estimate[()]


def pure_variance(n: int, p_star: float, q_star: float, n_v: ArrayLike = 0) -> ArrayLike:
    """Exact Var[c(v)] of a pure protocol with n users, n_v of whom hold v.

    Var[I_v] = n_v p*(1-p*) + (n-n_v) q*(1-q*) because reports are independent across
    users; dividing by (p*-q*)^2 and using p(1-p) - q(1-q) = (p-q)(1-p-q) gives
    n q*(1-q*)/(p*-q*)^2 + n_v (1-p*-q*)/(p*-q*).  With n_v = 0 this is Table 1's entry.
    """
    gap = p_star - q_star
    return n * q_star * (1 - q_star) / gap**2 + np.asarray(n_v) * (1 - p_star - q_star) / gap


def grr_pq(epsilon: float, d: int) -> tuple[float, float]:
    """GRR (direct encoding): p = e^ε/(e^ε+d-1), q = 1/(e^ε+d-1) ([FO] "Direct Encoding")."""
    e = math.exp(epsilon)
    return e / (e + d - 1), 1 / (e + d - 1)


def sue_pq(epsilon: float) -> tuple[float, float]:
    """SUE (basic RAPPOR): p = e^{ε/2}/(e^{ε/2}+1), q = 1/(e^{ε/2}+1) per bit ([FO] "Unary")."""
    e = math.exp(epsilon / 2)
    return e / (e + 1), 1 / (e + 1)


def oue_pq(epsilon: float) -> tuple[float, float]:
    """OUE: the 1-bit kept with p = 1/2, a 0-bit set with q = 1/(e^ε+1) ([FO] "Optimized UE")."""
    return 0.5, 1 / (math.exp(epsilon) + 1)


def the_pq(epsilon: float, theta: float) -> tuple[float, float]:
    """THE with threshold θ in (0, 1]: Laplace noise of scale 2/ε on each coordinate.

    A coordinate is supported when it exceeds θ: p* = Pr[1 + L > θ] = 1 - ½e^{ε(θ-1)/2} and
    q* = Pr[L > θ] = ½e^{-εθ/2} (USENIX'17 Sec. 4.2; both need 0 <= θ <= 1).
    """
    return 1 - 0.5 * math.exp(epsilon * (theta - 1) / 2), 0.5 * math.exp(-epsilon * theta / 2)


def blh_pq(epsilon: float) -> tuple[float, float]:
    """BLH: hash to one bit, randomised response on it: p* = e^ε/(e^ε+1), q* = 1/2 ([FO] "BLH")."""
    e = math.exp(epsilon)
    return e / (e + 1), 0.5


def olh_default_g(epsilon: float) -> int:
    """OLH's hash range g = ⌈e^ε + 1⌉ (the PEM paper's choice; e^ε + 1 minimises variance).

    e^ε is rounded to 9 decimals first, so that an ε = ln 10 given in floating point
    (e^ε = 10.000000000000002) gives g = 11 as the paper's e^ε = 10 does, not 12.

    >>> olh_default_g(math.log(10)), olh_default_g(math.log(49)), olh_default_g(1.0)
    (11, 50, 4)
    """
    return math.ceil(round(math.exp(epsilon) + 1, 9))


def olh_pq(epsilon: float, g: int) -> tuple[float, float]:
    """OLH: p* = e^ε/(e^ε+g-1) (GRR over the g hash values), q* = 1/g ([FO] "OLH")."""
    e = math.exp(epsilon)
    return e / (e + g - 1), 1 / g


def she_variance(epsilon: ArrayLike) -> ArrayLike:
    """SHE: Var[c(v)]/n = 2 (2/ε)^2 = 8/ε^2, one Laplace(2/ε) per user ([FO] Table 1)."""
    return 8 / np.asarray(epsilon, dtype=float) ** 2


def discrete_laplace_variance(alpha: ArrayLike, grid: ArrayLike = 1) -> ArrayLike:
    """Var(Z)/s² = 2α/((1-α)² s²) for P(Z = z) ∝ α^|z| on the integers.

    SHE on an integer grid s with α = e^{-ε/(2s)} ([FO] Sec. 4.2 with discrete noise, see
    :mod:`ldp.oracles.discrete_laplace`): with λ = ε/(2s) this is
    8/ε² · (λ/2)²/sinh²(λ/2) = 8/ε² (1 - λ²/12 + O(λ⁴)), Table 1's 8/ε² as s grows.
    """
    alpha = np.asarray(alpha, dtype=float)
    return 2 * alpha / ((1 - alpha) ** 2 * np.asarray(grid, dtype=float) ** 2)


def the_optimal_theta(epsilon: float) -> float:
    """The threshold θ in [1/2, 1] that minimises THE's variance q*(1-q*)/(p*-q*)^2.

    USENIX'17 Sec. 4.2 searches θ in (0.5, 1) numerically; so do we (bounded Brent).
    """
    epsilon = check_epsilon(epsilon)

    def var(theta: float) -> float:
        p, q = the_pq(epsilon, theta)
        return q * (1 - q) / (p - q) ** 2

    result = optimize.minimize_scalar(
        var, bounds=(0.5, 1.0), method="bounded", options={"xatol": 1e-10}
    )
    return float(result.x)


#: The seven oracles of [FO] Table 1, in its order (other registered oracles have no entry).
TABLE1_PROTOCOLS = ("GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH")


def table1_variance(protocol: str, epsilon: ArrayLike, d: int = 2) -> np.ndarray:
    """Var[c(v)]/n as printed in Table 1 of USENIX'17 ([FO] "Comparison").

    ``protocol`` is one of GRR (DE), SUE, OUE, SHE, THE, BLH, OLH.  THE uses θ = 1 as in
    the table (use :func:`pure_variance` with :func:`the_pq` for another θ); OLH uses the
    continuous optimum g = e^ε + 1, which is why it equals OUE.  ``d`` matters only for GRR.
    """
    eps = np.asarray(epsilon, dtype=float)
    e, h = np.exp(eps), np.exp(eps / 2)
    name = protocol.upper()
    if name in ("GRR", "DE"):
        check_int(d, "d", minimum=2)
        return (d - 2 + e) / (e - 1) ** 2
    formulas = {
        "SUE": lambda: h / (h - 1) ** 2,
        "OUE": lambda: 4 * e / (e - 1) ** 2,
        "SHE": lambda: 8 / eps**2,
        "THE": lambda: (2 * h - 1) / (h - 1) ** 2,
        "BLH": lambda: (e + 1) ** 2 / (e - 1) ** 2,
        "OLH": lambda: 4 * e / (e - 1) ** 2,
    }
    if name not in formulas:
        raise ValueError(f"protocol must be one of GRR, {', '.join(formulas)}; got {protocol!r}")
    return formulas[name]()


def multiple_questions_variance(epsilon: ArrayLike, n: int, questions: int = 2) -> dict:
    """Var[c(v)/n] of OLH when each user answers ``questions`` equally important questions.

    [FO] "On answering multiple questions": splitting the budget gives each answer ε/t
    with all n users, 4e^{ε/t}/(n(e^{ε/t}-1)^2); partitioning the users gives each question
    n/t users at full ε, t·4e^ε/(n(e^ε-1)^2) (normalised by the users who answered).
    """
    eps = np.asarray(epsilon, dtype=float)
    e_split = np.exp(eps / questions)
    e = np.exp(eps)
    return {
        "split": 4 * e_split / (n * (e_split - 1) ** 2),
        "partition": questions * 4 * e / (n * (e - 1) ** 2),
    }


def olh_variance(epsilon: ArrayLike, g: ArrayLike) -> ArrayLike:
    """Var[c(v)]/n of local hashing with hash range g >= 2 (real g allowed): the pure
    framework's q*(1-q*)/(p*-q*)^2 with p* = e^ε/(e^ε+g-1), q* = 1/g ([FO] "OLH").

    Since p* - q* = (e^ε-1)(g-1)/(g(e^ε+g-1)) and q*(1-q*) = (g-1)/g^2, this is
    (e^ε+g-1)^2 / ((e^ε-1)^2 (g-1)): with x = g-1, (e^ε+x)^2/x, least at x = e^ε, i.e. at
    :func:`olh_optimal_g`, where it is Table 1's 4e^ε/(e^ε-1)^2.  BLH is g = 2.
    """
    e = np.exp(np.asarray(epsilon, dtype=float))
    g = np.asarray(g, dtype=float)
    return (e + g - 1) ** 2 / ((e - 1) ** 2 * (g - 1))


def olh_optimal_g(epsilon: ArrayLike) -> ArrayLike:
    """The hash range that minimises :func:`olh_variance`: g = e^ε + 1 ([FO] "OLH": the
    slides' "variance is optimized when g = e^ε + 1")."""
    return np.exp(np.asarray(epsilon, dtype=float)) + 1


def warner_pq(truth: float = 0.5) -> tuple[float, float]:
    """Warner's randomized response (1965) on a yes/no question: answer truthfully with
    probability ``truth``, else answer yes or no at random.

    A "yes" holder says yes with p = truth + (1-truth)/2, a "no" holder with
    q = (1-truth)/2; with ``truth`` = 1/2 that is the slides' 75% and 25% ([FO] slides
    "The Warner Model (1965)"), GRR over d = 2 with e^ε = p/q = 3.
    """
    if not 0 < truth < 1:
        raise ValueError(f"truth must lie in (0, 1), got {truth}")
    return truth + (1 - truth) / 2, (1 - truth) / 2


def table1_report_bits(protocol: str, epsilon: float, d: int) -> float:
    """Bits of one report of a Table 1 oracle as this library sends it: the terms behind
    the table's communication row ([FO] Table 1, "Communication Cost").

    DE (GRR): ⌈log2 d⌉, O(log d).  SUE, OUE, THE: one bit per value, d; SHE: one real
    (64 bits) per value, 64 d; all O(d).  BLH and OLH: the hash function's 64-bit seed and
    the perturbed cell, 64 + ⌈log2 g⌉ (g = 2, and ⌈e^ε + 1⌉): no term in d.  The table's
    O(log n) is the seed: a family of 2^64 hash functions serves any n up to 2^64 users.
    """
    check_int(d, "d", minimum=2)
    name = protocol.upper()
    if name in ("GRR", "DE"):
        return float(math.ceil(math.log2(d)))
    if name in ("SUE", "OUE", "THE"):
        return float(d)
    if name == "SHE":
        return 64.0 * d
    if name == "BLH":
        return 64.0 + 1
    if name == "OLH":
        return 64.0 + math.ceil(math.log2(olh_default_g(epsilon)))
    raise ValueError(f"protocol must be one of {', '.join(TABLE1_PROTOCOLS)}; got {protocol!r}")


def central_multiple_questions_variance(epsilon: ArrayLike, n: int, questions: int = 2) -> dict:
    """Var of a count's noise over n (or over the n/t who answered) in the *centralised*
    setting, the Laplace mechanism on each question's histogram (sensitivity 1).

    [FO] slides "On answering multiple questions": splitting ε (sequential composition)
    gives each of t histograms noise Lap(t/ε) over all n users, 2t²/(ε² n²); partitioning
    the users (parallel composition) gives each n/t users and noise Lap(1/ε), 2/ε² over
    (n/t)², i.e. 2t²/(ε² n²): the same, the slides' "equivalent results".
    """
    eps = np.asarray(epsilon, dtype=float)
    return {
        "split": 2 * (questions / eps) ** 2 / n**2,
        "partition": 2 * (1 / eps) ** 2 / (n / questions) ** 2,
    }
