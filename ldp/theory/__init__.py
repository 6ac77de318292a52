"""Closed forms of the papers, importable without building a protocol.

* :mod:`ldp.theory.frequency`: Wang, Blocki, Li, Jha, *Locally Differentially Private
  Protocols for Frequency Estimation* (USENIX Security 2017): the pure framework,
  Table 1, THE's optimal threshold and the "answering multiple questions" comparison.
* :mod:`ldp.theory.pem`: Wang, Li, Jha, *Locally Differentially Private Heavy Hitter
  Identification*: PEM's identification probability (Eq. (5)), utility (Eq. (4)), the
  Sec. IV-C optimizer, the authors' group rule, and a refined model of the competition
  between prefixes.
* :mod:`ldp.theory.mcm`: the same paper's MCM (Sec. III-D): the ceiling its per-bit
  majority votes put on F1.
"""

from ldp.theory.frequency import (
    blh_pq,
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
from ldp.theory.mcm import mcm_f1_ceiling

__all__ = [
    "blh_pq",
    "grr_pq",
    "mcm_f1_ceiling",
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
