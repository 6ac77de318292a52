"""ldp.theory.textbook: the lecture notes' closed forms, against the library and sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp.theory import textbook as theory
from ldp.theory.shuffle import blanket_grr_epsilon


def test_the_binary_sum_calibration_inverts_the_library_blanket_bound() -> None:
    for n in (10**4, 10**5, 10**6):
        epsilon0 = theory.binary_sum_epsilon0(1.0, n, 1e-6)
        assert blanket_grr_epsilon(epsilon0, 2, n, 1e-6) == pytest.approx(1.0, rel=1e-9)
        gamma = theory.binary_sum_noise_probability(1.0, n, 1e-6)
        assert gamma == pytest.approx(2 / (math.exp(epsilon0) + 1), rel=1e-12)
    with pytest.raises(ValueError, match="epsilon <= 1"):
        theory.binary_sum_noise_probability(2.0, 10**6, 1e-6)
    with pytest.raises(ValueError, match="too small"):
        theory.binary_sum_noise_probability(1.0, 100, 1e-6)


def test_the_expected_largest_normal_error() -> None:
    assert theory.expected_max_abs_normal(2.0, 1) == pytest.approx(2 * math.sqrt(2 / math.pi))
    rng = np.random.default_rng(1)
    draws = np.abs(rng.standard_normal((40_000, 31))).max(axis=1)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(theory.expected_max_abs_normal(1.0, 31) - draws.mean()) < 4.5 * se
    assert theory.expected_max_abs_normal(1.0, 31) < theory.max_abs_normal_bound(1.0, 31)


def test_the_small_closed_forms() -> None:
    assert theory.central_laplace_mean_sd(0.5, 100) == pytest.approx(2 * math.sqrt(2) / 50)
    assert theory.collision_probability(16, 3) == 16.0**-3
    # E[f̂[h(v)]] = (m-1)/m f + n/m is mapped back to f
    f, n, m = 300.0, 10_000, 16
    assert theory.hashed_frequency_estimate((m - 1) / m * f + n / m, n, m) == pytest.approx(f)
