"""Closed forms of the papers, importable without building a protocol.

* :mod:`ldp.theory.frequency`: Wang, Blocki, Li, Jha, *Locally Differentially Private
  Protocols for Frequency Estimation* (USENIX Security 2017): the pure framework,
  Table 1, THE's optimal threshold and the "answering multiple questions" comparison.
"""

from ldp.theory.frequency import (
    blh_pq,
    discrete_laplace_variance,
    grr_pq,
    multiple_questions_variance,
    olh_default_g,
    olh_pq,
    oue_pq,
    pure_estimate,
    pure_variance,
    she_variance,
    sue_pq,
    table1_variance,
    the_optimal_theta,
    the_pq,
)

__all__ = [
    "blh_pq",
    "discrete_laplace_variance",
    "grr_pq",
    "multiple_questions_variance",
    "olh_default_g",
    "olh_pq",
    "oue_pq",
    "pure_estimate",
    "pure_variance",
    "she_variance",
    "sue_pq",
    "table1_variance",
    "the_optimal_theta",
    "the_pq",
]
