"""The closed forms behind [PEM] Sec. VI's model lines (:mod:`ldp.theory.pem_figures`)."""

from __future__ import annotations

import numpy as np
import pytest

from ldp.theory import olh_default_g, olh_pq, pem_figures, pure_variance


def test_exponential_frequencies_fall_by_one_minus_the_scale() -> None:
    f = pem_figures.exponential_frequencies(0.05, 1024)
    assert f.sum() == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(f[1:] / f[:-1], 0.95, rtol=1e-12)


def test_released_squared_error_is_olh_variance_plus_the_sampling_term() -> None:
    """With every user in the final test (ρ = 1) it is OLH's variance of Eq. (3) with its
    n_v term, averaged; with ρ < 1 the estimate is scaled by 1/ρ and the group's draw adds
    n_v (1 - f_v)(1 - ρ)/ρ."""
    n, epsilon = 10**6, 2.0
    f = pem_figures.exponential_frequencies(0.05, 1024)[:8]
    p, q = olh_pq(epsilon, olh_default_g(epsilon))
    whole = np.mean(pure_variance(n, p, q, n * f))
    assert pem_figures.released_squared_error(n, f, 1.0, epsilon) == pytest.approx(whole)
    rho = 0.25
    part = pure_variance(rho * n, p, q, rho * n * f) / rho**2 + n * f * (1 - f) * (1 - rho) / rho
    assert pem_figures.released_squared_error(n, f, rho, epsilon) == pytest.approx(np.mean(part))
    assert pem_figures.released_squared_error(n, f, rho, epsilon) > whole
