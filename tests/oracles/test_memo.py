"""The memo index every memoizing client shares (:mod:`ldp.oracles.memo`)."""

from __future__ import annotations

import numpy as np
import pytest

from ldp.oracles import ORACLES
from ldp.oracles.memo import MemoIndex, memo_slots
from ldp.oracles.rappor import RAPPOR, RapporClients


def test_a_pair_keeps_its_slot_and_new_pairs_are_numbered_in_key_order() -> None:
    index = MemoIndex(4, 10)
    first = index.assign([2, 0, 2, 1], [7, 3, 7, 9])
    assert first.first_new == 0
    assert first.slots.tolist() == [2, 0, 2, 1]  # (0, 3) < (1, 9) < (2, 7)
    assert list(zip(first.new_users.tolist(), first.new_values.tolist(), strict=True)) == [
        (0, 3),
        (1, 9),
        (2, 7),
    ]
    again = index.assign([1, 2, 3, 0], [9, 7, 0, 4])
    assert again.first_new == 3
    assert again.slots.tolist() == [1, 2, 4, 3]  # seen pairs keep theirs; (0, 4) < (3, 0)
    assert list(zip(again.new_users.tolist(), again.new_values.tolist(), strict=True)) == [
        (0, 4),
        (3, 0),
    ]
    assert len(index) == 5
    assert index.assign([0], [3]).new_users.size == 0


def test_byte_keys_give_the_slots_of_integer_keys() -> None:
    """Where user · size + value overflows an int64 the pairs are keyed by their bytes; the
    slots are the same as with integer keys, call after call."""
    rng = np.random.default_rng(0)
    wide, narrow = MemoIndex(2**24, 2**40), MemoIndex(2**24, 2**20)
    assert wide._keys.dtype.kind == "V" and narrow._keys.dtype == np.int64
    for _ in range(4):
        users, values = rng.integers(0, 50, 200), rng.integers(0, 30, 200)
        a, b = wide.assign(users, values), narrow.assign(users, values)
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    assert len(wide) == len(narrow) < 200 * 4


def test_one_batch_is_the_pairs_distinct_values() -> None:
    users = np.repeat(np.arange(3), 4)
    values = np.array([1, 1, 2, 1, 0, 0, 0, 0, 5, 6, 5, 6])
    memo = memo_slots(users, values, 3, 8)
    assert memo.new_users.tolist() == [0, 0, 1, 2, 2]
    assert memo.new_values.tolist() == [1, 2, 0, 5, 6]
    assert memo.slots.tolist() == [0, 0, 1, 0, 2, 2, 2, 2, 3, 4, 3, 4]


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("LGRR", "permanent"),
        ("LOUE", "permanent"),
        ("LOLOHA", "permanent"),
        ("dBitFlip", "respond"),
    ],
)
def test_a_value_held_again_reuses_its_memo(name: str, step: str, monkeypatch) -> None:
    """τ = 3 rounds of 400 users holding 3, 5, 3: one memo per user and value, 800 in all
    (a client that drew a memo per round would draw 1,200); LOLOHA keeps one per hashed
    cell, so a user whose hash sends 3 and 5 to one cell has a single memo."""
    cls = ORACLES[name]
    drawn = []
    original = getattr(cls, step)

    def counted(self, values, *rest):
        drawn.append(np.shape(values)[0])
        return original(self, values, *rest)

    monkeypatch.setattr(cls, step, counted)
    oracle = cls(epsilon=1.0, domain_size=8)
    oracle.perturb_rounds(np.tile([[3, 5, 3]], (400, 1)), np.random.default_rng(1))
    if name == "LOLOHA":
        assert len(drawn) == 1 and 400 < drawn[0] <= 800
    else:
        assert drawn == [800]


def test_rappor_clients_keep_one_prr_per_client_and_value() -> None:
    oracle = RAPPOR(epsilon=2.0, domain_size=10)
    clients = RapporClients.new(oracle, 30, np.random.default_rng(0))
    rng = np.random.default_rng(5)
    clients.report(np.zeros(30, dtype=np.int64), rng)
    assert clients.memoized == 30
    clients.report(np.zeros(30, dtype=np.int64), rng)
    assert clients.memoized == 30
    clients.report(np.r_[np.ones(10), np.zeros(20)].astype(np.int64), rng)
    assert clients.memoized == 40
