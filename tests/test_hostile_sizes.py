"""Every registered protocol at hostile sizes, under a lowered budget: refused at once with a
``ParameterError``, or finished within the budget's memory and a few seconds.

The sizes are the review's (10^6 users a call, 10^12 users simulated, a 2^30 domain),
taken for every oracle and mean protocol the registry lists, and for every heavy hitter
10^6 users on both engines, k = 2^40 and values of 2^16 bits, so a new protocol is tried
on its own.  Under a 64 MiB budget anything large must be refused before it allocates;
what runs is traced (``tracemalloc``, numpy's arrays included) and timed.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

from ldp import budget, registry
from ldp.datasets import Dataset
from ldp.validation import ParameterError

MEMORY = 64 * 2**20
#: Seconds a call that is not refused may take here (the machine may be shared).
SECONDS = 10.0
ORACLES = sorted(registry.protocols("oracle"))


def _refused_or_bounded(call: Callable[[], object]) -> str:
    """``"refused"`` or ``"ran"``; fails on any other error, on a peak over the lowered
    budget and on a call over :data:`SECONDS`."""
    with budget.limits(memory_bytes=MEMORY, operations=2**30):
        tracemalloc.start()
        started = time.perf_counter()
        try:
            call()
        except ParameterError:
            return "refused"
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            seconds = time.perf_counter() - started
    assert peak <= MEMORY, f"peak {peak / 2**20:.0f} MiB over the {MEMORY / 2**20:.0f} MiB budget"
    assert seconds <= SECONDS, f"{seconds:.1f} s"
    return "ran"


def _oracle(name: str, domain_size: int = 1024):
    return registry.get(name).cls(epsilon=1.0, domain_size=domain_size)


@pytest.mark.parametrize("name", ORACLES)
def test_a_million_users_perturbed(name: str) -> None:
    oracle = _oracle(name)
    values = np.random.default_rng(0).integers(0, 1024, size=10**6)  # the caller's 8 MB
    _refused_or_bounded(lambda: oracle.perturb(values, np.random.default_rng(1)))


@pytest.mark.parametrize("name", ORACLES)
def test_a_trillion_users_simulated(name: str) -> None:
    oracle = _oracle(name)
    counts = np.full(1024, 10**12 // 1024, dtype=np.int64)
    _refused_or_bounded(lambda: oracle.simulate(counts, np.random.default_rng(1)))


@pytest.mark.parametrize("name", ORACLES)
def test_a_full_domain_of_two_to_the_thirty(name: str) -> None:
    def call() -> object:
        oracle = _oracle(name, domain_size=2**30)
        reports = oracle.perturb(np.arange(10), np.random.default_rng(1))
        return oracle.estimate(reports)

    assert _refused_or_bounded(call) == "refused"  # 2^30 estimates alone are 8 GiB


@pytest.mark.parametrize("name", ORACLES)
def test_the_variance_of_a_quadrillion_users(name: str) -> None:
    oracle = _oracle(name)
    _refused_or_bounded(lambda: oracle.variance(10**15))


@pytest.mark.parametrize("name", sorted(registry.protocols("mean")))
@pytest.mark.parametrize("method", ["perturb", "simulate", "variance"])
def test_a_mean_protocol_over_a_million_values(name: str, method: str) -> None:
    protocol = registry.get(name).cls(epsilon=1.0)
    values = np.random.default_rng(0).uniform(-1, 1, size=10**6)  # the caller's 8 MB
    if method == "variance":
        _refused_or_bounded(lambda: protocol.variance(values))
    else:
        _refused_or_bounded(lambda: getattr(protocol, method)(values, np.random.default_rng(1)))


HEAVY_HITTERS = sorted(registry.protocols("heavy_hitter"))


def _values(n: int, m: int) -> Dataset:
    """n users of m-bit values: a few hundred distinct ones (a skewed draw), the caller's."""
    rng = np.random.default_rng(0)
    ranks = np.minimum(rng.zipf(1.3, size=n), 500).astype(np.uint64)
    if m <= 64:
        return Dataset(name="zipf", values=ranks, m=m, source="synthetic")
    words = np.zeros((n, m // 8), dtype=np.uint8)
    words[:, -8:] = ranks[:, None].view(np.uint8)[:, ::-1].reshape(n, 8)
    return Dataset(name="zipf", values=words.view(f"S{m // 8}").ravel(), m=m, source="synthetic")


@pytest.mark.parametrize("name", HEAVY_HITTERS)
@pytest.mark.parametrize("engine", ["sampled", "reports"])
def test_a_heavy_hitter_over_a_million_users(name: str, engine: str) -> None:
    protocol = registry.get(name).cls(epsilon=2.0, k=16, m=64)
    data = _values(10**6, 64)  # the caller's 8 MB
    _refused_or_bounded(lambda: protocol.run(data, np.random.default_rng(1), engine=engine))


@pytest.mark.parametrize("name", HEAVY_HITTERS)
def test_a_heavy_hitter_asked_for_two_to_the_forty_values(name: str) -> None:
    data = _values(10**4, 64)

    def call() -> object:
        protocol = registry.get(name).cls(epsilon=2.0, k=2**40, m=64)
        return protocol.run(data, np.random.default_rng(1), engine="sampled")

    _refused_or_bounded(call)


@pytest.mark.parametrize("name", HEAVY_HITTERS)
def test_a_heavy_hitter_over_values_of_sixty_five_thousand_bits(name: str) -> None:
    data = _values(1000, 2**16)  # the caller's 8 MB

    def call() -> object:
        protocol = registry.get(name).cls(epsilon=2.0, k=16, m=2**16)
        return protocol.run(data, np.random.default_rng(1), engine="sampled")

    _refused_or_bounded(call)


SETS = sorted(registry.protocols("set"))


def _rows(n: int, width: int) -> np.ndarray:
    """n users' sets of ``width`` distinct items of [0, 1024), rows of the caller's."""
    rng = np.random.default_rng(0)
    step = 1024 // width
    return np.arange(width) * step + rng.integers(0, step, size=(n, width))


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("engine", ["sampled", "reports"])
@pytest.mark.parametrize(("n", "width"), [(10**6, 4), (5 * 10**5, 4), (2 * 10**5, 4)])
def test_a_set_protocol_over_many_users(name: str, engine: str, n: int, width: int) -> None:
    """Refused naming the sets (10^6 users of 4 items under 64 MiB), or within it (PSFO
    and SVSM run 2 million entries within 64 MiB; SPLIT refuses them: its choice of ℓ
    items holds 64 B an item)."""
    protocol = registry.get(name).cls(epsilon=1.0, domain_size=1024)
    rows = _rows(n, width)  # the caller's
    outcome = _refused_or_bounded(
        lambda: protocol.top_items(rows, 16, np.random.default_rng(1), engine=engine)
    )
    if n == 10**6:  # 4 million entries: 128 MB of checks alone
        assert outcome == "refused"


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("engine", ["sampled", "reports"])
def test_a_set_protocol_over_a_domain_of_two_to_the_thirty(name: str, engine: str) -> None:
    """Refused before the 8 GiB of a full-domain estimate (it used to allocate them)."""

    def call() -> object:
        protocol = registry.get(name).cls(epsilon=1.0, domain_size=2**30)
        return protocol.top_items(_rows(10, 2), 16, np.random.default_rng(1), engine=engine)

    assert _refused_or_bounded(call) == "refused"
