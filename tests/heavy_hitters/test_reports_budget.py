"""The heavy hitters' reports engine refuses by the memory budget in force (:mod:`ldp.budget`),
not by a fixed constant: a lower budget refuses what the default accepts, a higher one
accepts what the default refuses, and the refusal is a ``ParameterError`` blaming
``engine``."""

from __future__ import annotations

import numpy as np
import pytest

from ldp import budget
from ldp.heavy_hitters.baseline import check_report_size
from ldp.heavy_hitters.mcm import MCM
from ldp.heavy_hitters.pem import PEM
from ldp.oracles import OUE
from ldp.validation import ParameterError
from tests.heavy_hitters.synthetic import zipf


def test_a_round_s_reports_are_checked_against_the_budget_in_force():
    oracle = OUE(epsilon=1.0, domain_size=2**20)
    n = 10**6
    size = oracle.report_bytes(n)
    assert size > budget.DEFAULT_MEMORY_BYTES  # refused by default ...
    with pytest.raises(ParameterError, match="engine must be 'sampled'") as refused:
        check_report_size(oracle, n)
    assert (refused.value.name, refused.value.value) == ("engine", "reports")
    assert "memory budget" in str(refused.value) and "ldp.budget.limits" in str(refused.value)
    with budget.limits(memory_bytes=size):  # ... accepted under a budget that holds them
        check_report_size(oracle, n)
    with budget.limits(memory_bytes=size - 1), pytest.raises(ParameterError):
        check_report_size(oracle, n)


def test_pem_s_reports_engine_reads_the_budget():
    data = zipf(n=2000, m=16)
    protocol = PEM(epsilon=2.0, k=4, m=16, eta=4)
    with budget.limits(memory_bytes="1 KiB"), pytest.raises(ParameterError) as refused:
        protocol.run(data, np.random.default_rng(0), engine="reports")
    assert refused.value.name == "engine"


def test_mcm_s_channel_matrix_reads_the_budget():
    """n users x h channels, one byte a cell for blocks of at most 8 bits."""
    data = zipf(n=2000, m=16)
    protocol = MCM(epsilon=4.0, k=4, m=16, channels=64)
    matrix = data.n * 64
    protocol.run(data, np.random.default_rng(0), engine="reports")  # fits the default
    with budget.limits(memory_bytes=matrix - 1), pytest.raises(ParameterError) as refused:
        protocol.run(data, np.random.default_rng(0), engine="reports")
    assert refused.value.name == "engine" and "channel reports of 2000 users" in str(refused.value)
    with budget.limits(memory_bytes=matrix - 1):  # the sampled engine holds no reports
        protocol.run(data, np.random.default_rng(0), engine="sampled")
