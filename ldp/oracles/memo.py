"""Memoization per (user, value): which memo each report reuses, shared by every memoizing
client.

RAPPOR's client draws the permanent randomized response of a (client, value) pair the
first time the client reports that value and reuses it afterwards ([RAPPOR] Sec. 2); the
chained longitudinal protocols (L-GRR, L-OUE, L-OSUE, LOLOHA, [ACBX22]) and dBitFlip's
replayed bits ([DKY17]) do the same over τ rounds.  :class:`MemoIndex` is that
bookkeeping, once: it maps each (user, value) pair to a slot, the pairs not seen before to
new slots numbered in the order of their keys, and leaves the memos themselves to the
protocol (Bloom bits, unary vectors, cells, bits of sampled buckets), which draws one for
each new slot and keeps them in slot order.

A pair's key is ``user · size + value`` (one int64) when every key fits, else the pair
itself as 16 big-endian bytes; both sort the pairs by user, then value, so the slots do
not depend on which is used.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ldp.validation import check_int

#: Keys ``user · size + value`` fit an int64 when ``n_users · size`` is at most this.
PACKED_KEYS = 2**63 - 1


class Slots(NamedTuple):
    """What :meth:`MemoIndex.assign` found: the slot of each pair, and the users and values
    of the slots it created (slot ``first_new + j`` is ``new_users[j], new_values[j]``)."""

    slots: np.ndarray
    new_users: np.ndarray
    new_values: np.ndarray
    first_new: int


class MemoIndex:
    """The slots of the (user, value) pairs a population has reported so far.

    Parameters
    ----------
    n_users : int
        Users are 0 .. n_users - 1.
    size : int
        Values are 0 .. size - 1 (the domain, or the cells a value is hashed to).
    """

    def __init__(self, n_users: int, size: int) -> None:
        self.n_users = check_int(n_users, "n_users", minimum=0)
        self.size = check_int(size, "size", minimum=1)
        self._packed = self.n_users * self.size <= PACKED_KEYS
        self._keys = np.empty(0, dtype=np.int64 if self._packed else "V16")  # sorted
        #: the slot of each sorted key; None while they are in key order (one batch)
        self._slots: np.ndarray | None = None

    def __len__(self) -> int:
        """How many pairs have a memo."""
        return int(self._keys.shape[0])

    def _key(self, users: np.ndarray, values: np.ndarray) -> np.ndarray:
        if self._packed:
            return users * self.size + values
        pairs = np.ascontiguousarray(np.stack([users, values], axis=1).astype(">u8"))
        return pairs.view("V16").ravel()

    def _pairs(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._packed:
            return np.divmod(keys, self.size)
        pairs = keys.view(">u8").reshape(-1, 2).astype(np.int64)
        return pairs[:, 0], pairs[:, 1]

    def assign(self, users: np.ndarray, values: np.ndarray) -> Slots:
        """The slot of each pair ``(users[i], values[i])``; pairs not seen before get new
        slots, one per distinct pair, numbered from ``len(self)`` in key order."""
        users = np.asarray(users, dtype=np.int64)
        values = np.asarray(values, dtype=np.int64)
        keys = self._key(users, values)
        first_new = len(self)
        if not first_new:  # the first batch: its sorted distinct keys are the slots
            self._keys, inverse = np.unique(keys, return_inverse=True)
            return Slots(inverse.reshape(-1), *self._pairs(self._keys), 0)
        if self._slots is None:
            self._slots = np.arange(first_new, dtype=np.int64)
        where = np.searchsorted(self._keys, keys)
        found = where < first_new
        found[found] = self._keys[where[found]] == keys[found]
        slots = np.empty(keys.shape[0], dtype=np.int64)
        slots[found] = self._slots[where[found]]
        fresh, inverse = np.unique(keys[~found], return_inverse=True)
        slots[~found] = first_new + inverse.reshape(-1)
        new_slots = np.arange(first_new, first_new + fresh.shape[0], dtype=np.int64)
        all_keys = np.concatenate([self._keys, fresh])
        order = np.argsort(all_keys, kind="stable")
        self._keys, self._slots = all_keys[order], np.concatenate([self._slots, new_slots])[order]
        return Slots(slots, *self._pairs(fresh), first_new)


def memo_slots(users: np.ndarray, values: np.ndarray, n_users: int, size: int) -> Slots:
    """One batch of pairs from a population with no memo yet (τ rounds at once): the slot
    of each pair, and the user and value of each slot."""
    return MemoIndex(n_users, size).assign(users, values)
