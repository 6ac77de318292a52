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
* :mod:`ldp.theory.sfp`: Apple's sequence fragment puzzle (2017): a mean-field model of
  the values its two rounds identify (F1, NCR), in the form of [PEM] Eq. (4).
* :mod:`ldp.theory.numeric`: Wang et al., *Collecting and Analyzing Multidimensional Data
  with Local Differential Privacy* (ICDE 2019), Sec. III: Var[t*|t] of Duchi et al.'s
  mechanism, PM, HM and Laplace for mean estimation in [-1, 1].
* :mod:`ldp.theory.shuffle`: privacy amplification by shuffling, the central (ε, δ) of n
  shuffled ε0-LDP reports by Erlingsson et al. (SODA 2019), Feldman, McMillan, Talwar
  (FOCS 2021), Balle, Bell, Gascón, Nissim (CRYPTO 2019) and Wang et al. (VLDB 2024).
"""

from ldp.theory.frequency import (
    TABLE1_PROTOCOLS,
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
from ldp.theory.mcm import mcm_f1_ceiling
from ldp.theory.shuffle import (
    BoundNotApplicable,
    blanket_bennett_delta,
    blanket_bennett_epsilon,
    blanket_grr_epsilon,
    blanket_hoeffding_delta,
    blanket_hoeffding_epsilon,
    efmrtt_epsilon,
    fmt_closed_form_epsilon,
    fmt_numerical_delta,
    fmt_numerical_epsilon,
    shuffle_epsilon,
    variation_ratio_beta,
    variation_ratio_delta,
    variation_ratio_epsilon,
)

__all__ = [
    "BoundNotApplicable",
    "blanket_bennett_delta",
    "blanket_bennett_epsilon",
    "blanket_grr_epsilon",
    "blanket_hoeffding_delta",
    "blanket_hoeffding_epsilon",
    "blh_pq",
    "discrete_laplace_variance",
    "efmrtt_epsilon",
    "fmt_closed_form_epsilon",
    "fmt_numerical_delta",
    "fmt_numerical_epsilon",
    "grr_pq",
    "mcm_f1_ceiling",
    "multiple_questions_variance",
    "olh_default_g",
    "olh_pq",
    "oue_pq",
    "pure_estimate",
    "pure_variance",
    "she_variance",
    "shuffle_epsilon",
    "sue_pq",
    "TABLE1_PROTOCOLS",
    "table1_variance",
    "the_optimal_theta",
    "the_pq",
    "variation_ratio_beta",
    "variation_ratio_delta",
    "variation_ratio_epsilon",
]
