"""ldp.theory.mcm: the per-bit vote law, and the F1 ceiling against simulated MCM runs.

* :func:`bit_vote_success` is checked exactly against a brute-force enumeration of a
  tiny population, and against the normal approximation of the margin at paper scale.
* The ceiling is the issue's number (≈ 0.43 at ε = 1.2, partitioned, exponential data).
* Simulations: the mean F1 of R runs may exceed the ceiling only by sampling noise:
  mean <= ceiling + z_{1-α} SE with SE the standard error of the mean (one-sided,
  α = 1e-4).  Where the idealisation holds (few values, many channels) the ceiling is
  also reached: mean >= ceiling - 0.01 (the collision allowance, stated in the test)
  - z_{1-α} SE.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest
from scipy import stats

from ldp import metrics
from ldp.datasets import load
from ldp.heavy_hitters import MCM
from ldp.theory.mcm import bit_vote_success, mcm_candidate_probability, mcm_f1_ceiling
from tests.heavy_hitters.synthetic import ranked_dataset

ALPHA = 1e-4
Z = stats.norm.isf(ALPHA)


def test_vote_law_is_exact_on_a_tiny_population():
    """All 3^6 outcomes of 6 users (2 holders), each in the group with probability 0.3."""
    n, holders, share, epsilon = 6, 2, 0.3, 1.0
    phi = 1 / (math.exp(epsilon) + 1)
    law = {1: (share * (1 - phi), share / 2), -1: (share * phi, share / 2), 0: (1 - share,) * 2}
    expected = 0.0
    for outcome in product((1, -1, 0), repeat=n):
        weight = math.prod(law[z][0 if u < holders else 1] for u, z in enumerate(outcome))
        margin = sum(outcome)
        expected += weight * ((margin > 0) + 0.5 * (margin == 0))
    assert bit_vote_success(epsilon, n, share, holders)[0] == pytest.approx(expected, abs=1e-12)


def test_vote_law_matches_its_normal_approximation_at_paper_scale():
    """n = 10^6, s = 0.9/64, c = 23,160 (f_16): the margin is a sum of 10^6 bounded terms,
    so Φ(E[M]/sd(M)) is within 1e-3 (Berry-Esseen's order here)."""
    n, share, holders, epsilon = 10**6, 0.9 / 64, 23_160, 1.2
    phi = 1 / (math.exp(epsilon) + 1)
    mean = holders * share * (1 - 2 * phi)
    sd = math.sqrt(holders * (share - (share * (1 - 2 * phi)) ** 2) + (n - holders) * share)
    assert bit_vote_success(epsilon, n, share, holders)[0] == pytest.approx(
        stats.norm.cdf(mean / sd), abs=1e-3
    )
    assert bit_vote_success(epsilon, n, share, 0)[0] == pytest.approx(0.5, abs=1e-9)


def test_ceiling_of_fig8a_at_epsilon_1_2():
    """[PEM] Fig. 8a's partitioned MCM, ε = 1.2, f_j = 0.05·0.95^(j-1), n = 10^6, m = 64:
    the ceiling is 0.43, far below the figure's "nearly 0.8"."""
    f = 0.05 * 0.95 ** np.arange(16)
    assert mcm_f1_ceiling(1.2, 10**6, 64, 16, f) == pytest.approx(0.4295, abs=5e-4)
    assert mcm_f1_ceiling(1.2, 10**6, 64, 16, f, budget="split") < 0.02
    p = mcm_candidate_probability(1.2, 10**6, 64, f)
    assert np.all(np.diff(p) < 0) and p[0] > 0.95 and p[-1] < 0.02


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"k": 17}, "frequencies"),
        ({"budget": "thirds"}, "budget"),
        ({"final_fraction": 1.5}, "final_fraction"),
        ({"frequencies": [2.0] * 16}, "frequencies"),
    ],
)
def test_bad_parameters(kwargs, error):
    params = {"epsilon": 1.0, "n": 1000, "m": 8, "k": 16, "frequencies": [0.01] * 16} | kwargs
    with pytest.raises(ValueError, match=error):
        mcm_f1_ceiling(**params)


def _mean_and_se(data, protocol: MCM, runs: int) -> tuple[float, float]:
    top = data.top_k(protocol.k)
    f1 = np.array(
        [
            metrics.f1(top, protocol.run(data, np.random.default_rng(seed)).identified)
            for seed in range(runs)
        ]
    )
    return float(f1.mean()), float(f1.std(ddof=1) / math.sqrt(runs))


def test_ceiling_is_reached_when_nothing_collides_and_the_final_test_is_easy():
    """8 values only (so top 8 = every value), 1024 channels, n = 2 x 10^4, m = 16,
    ε = 1.5 split: a top value shares its channel with another with probability
    7/1024 < 0.7%, and the final test (all users at ε/2) ranks the values that do become
    candidates (the 4 most frequent, >= 2400 users, > 4 s.d. of an OLH estimate) above
    the ~1000 empty channels' candidates.  Allowance for both: 0.02.  200 runs."""
    probabilities = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.08, 0.06, 0.04])
    data = ranked_dataset(probabilities, n=20_000, m=16, seed=3)
    protocol = MCM(epsilon=1.5, k=8, m=16, channels=1024, budget="split", oracle="OLH")
    frequencies = data.histogram()[1] / data.n
    ceiling = mcm_f1_ceiling(1.5, data.n, 16, 8, frequencies, budget="split")
    mean, se = _mean_and_se(data, protocol, 200)
    assert 0.3 < ceiling < 0.5  # an informative setting (0.39)
    assert ceiling - 0.02 - Z * se <= mean <= ceiling + Z * se


@pytest.mark.parametrize(
    ("variant", "channels"),
    [("partitioned", "k1.5"), ("partitioned", "sqrt_n"), ("improved", "sqrt_n")],
)
def test_ceiling_bounds_mcm_on_the_exponential_data(variant, channels):
    """Fig. 8a's setting (n = 10^6, m = 64, k = 16, ε = 1.2), 40 runs: the simulated F1
    stays under the ceiling (0.43 partitioned, 0.016 split) up to sampling noise."""
    data = load("exponential", n=10**6, seed=0)
    frequencies = data.histogram()[1] / data.n
    protocol = MCM(epsilon=1.2, k=16, m=64, variant=variant, channels=channels)
    ceiling = mcm_f1_ceiling(1.2, data.n, 64, 16, frequencies, budget=protocol.budget)
    mean, se = _mean_and_se(data, protocol, 40)
    assert mean <= ceiling + Z * se
