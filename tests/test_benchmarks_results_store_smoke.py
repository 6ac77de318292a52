"""The results-store benchmark on a tiny store (no timing assertions): both loads give
the same table, with several headers, and the coins table renders."""

from __future__ import annotations

from benchmarks import results_store


def test_the_two_loads_agree_and_the_tables_render() -> None:
    row = results_store.measure(settings=12, trials=3, headers=3, rounds=1)
    assert row["same"] and row["settings"] == 12
    coins = results_store.coins(rounds=1)
    assert [r["label"] for r in coins] == ["one T", "a T per coin"]
    text = results_store.render([row], coins)
    assert "| 12 | 3 | 3 |" in text and "| yes |" in text and "a T per coin" in text
