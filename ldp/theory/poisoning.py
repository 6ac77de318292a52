"""The expected frequency gain of fake users against a pure frequency oracle.

Cao, Jia, Gong, *Data Poisoning Attacks to Local Differential Privacy Protocols* (USENIX
Security 2021), Sec. 4: m fake users join n genuine ones (β = m / (n + m)) and send
crafted reports to raise the estimated frequencies of r target values T.  The *frequency
gain* is Σ_{t ∈ T} (E[f̃_t] after the attack − E[f̃_t] before), f̃ the pure estimator
(ĉ(v) − N q*) / (N (p* − q*)) over the N reports received.

For any pure oracle the gain depends on the fake reports through one number, S, the
expected count of targets one fake report supports: with the genuine reports' expected
support N(1 − β)(q* + (p* − q*) f_t) and the fake ones' N β P(a fake report supports t),

    G = β [ (S − r q*) / (p* − q*) − f_T ],   S = Σ_t P(a fake report supports t),

f_T = Σ_t f_t the targets' true frequency.  The paper's three attacks are three values of
S (derived here from the estimator; they give the paper's closed forms for kRR, OUE and
OLH):

* random perturbed-value attack (RPA), a report drawn uniformly from the report space:
  S = r s₀, s₀ the chance that a uniform report supports a given value (1/d for GRR, 1/2
  for unary encodings, 1/g for local hashing); OLH's gain is then -β f_T;
* random item attack (RIA), the honest report of a uniformly drawn target:
  S = p* + (r − 1) q*, so G = β (1 − f_T) for every pure oracle;
* maximal gain attack (MGA), the report supporting as many targets as the protocol
  allows: S = 1 for GRR (G = β(1 − f_T) + β (d − r)/(e^ε − 1)), S = r for OUE and for OLH
  when a seed hashes every target to one cell.
"""

from __future__ import annotations

from ldp.validation import ParameterError, check_int


def frequency_gain(
    p_star: float, q_star: float, beta: float, supported: float, targets: int, f_targets: float
) -> float:
    """G = β [(S − r q*) / (p* − q*) − f_T] (module docstring), S = ``supported``."""
    if not 0.0 <= beta < 1.0:
        raise ParameterError("beta", beta, "[0, 1)")
    r = check_int(targets, "targets", minimum=1)
    return beta * ((supported - r * q_star) / (p_star - q_star) - f_targets)


def random_item_gain(beta: float, f_targets: float) -> float:
    """G = β (1 − f_T) of the random item attack, for any unbiased oracle: the fake users
    report targets honestly, so the targets' expected estimated count grows by exactly m
    (for a pure oracle it is :func:`frequency_gain` at S = :func:`random_item_support`)."""
    if not 0.0 <= beta < 1.0:
        raise ParameterError("beta", beta, "[0, 1)")
    return beta * (1.0 - f_targets)


def random_item_support(p_star: float, q_star: float, targets: int) -> float:
    """S of the random item attack: one target supported with p*, the others with q*."""
    return p_star + (check_int(targets, "targets", minimum=1) - 1) * q_star
