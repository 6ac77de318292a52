"""The billion_users and streaming benchmarks: their workload and row logic, on tiny sizes."""

from __future__ import annotations

import numpy as np

from benchmarks import billion_users, streaming
from ldp import registry


def test_zipf_counts_hold_every_user_in_rank_order() -> None:
    counts = billion_users.zipf_counts(10**6, 1024)
    assert counts.sum() == 10**6 and np.all(np.diff(counts) <= 0)


def test_a_child_row_measures_or_says_why() -> None:
    done = billion_users.child("GRR", 10**5, 64)
    assert done["seconds"] > 0 and done["traced_mb"] >= 0 and done["rmse_n"] < 0.1
    refused = billion_users.child("RAPPOR", 10**5, 2**16)  # more values than Bloom bits
    assert "not built" in refused["error"]
    for name in registry.protocols("oracle"):
        assert billion_users.cost_note(registry.get(name).cls)


def test_streaming_child_reports_time_memory_and_error() -> None:
    done = streaming.child("OLH", 20_000)
    assert done["seconds"] > 0 and done["rss_mb"] > 0 and done["batch_mb"] > 0
    assert 0.5 < done["rmse_over_sd"] < 1.5  # RMSE over 256 values against the exact sd


def test_the_clients_table_has_every_oracle_and_both_samplers(tmp_path) -> None:
    from benchmarks import clients

    work = clients.Workload.quick(domain_size=64, n=200)
    text = clients.run(work, tmp_path / "clients.md")
    for name in registry.protocols("oracle"):
        assert f" {name} |" in text
    assert "keys ÷ floyd" in text and (tmp_path / "clients.md").read_text() == text
    drawn = clients.keys_sample(50, 16, 3, np.random.default_rng(0))
    assert drawn.shape == (50, 3) and all(len(set(row)) == 3 for row in drawn.tolist())
