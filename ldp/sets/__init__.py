"""Protocols over users' item sets (kind ``"set"``): Kosarak as transactions.

A user holds a set of items of {0, ..., d-1} (:class:`ldp.datasets.Transactions`).
:class:`~ldp.sets.psfo.PSFO` estimates how many users hold each item (padding and
sampling, Wang, Li, Jha, IEEE S&P 2018, Sec. IV), :class:`~ldp.sets.split.SPLIT` the same
with ε split over ℓ reports per user (the naive baseline); :class:`~ldp.sets.svsm.SVSM`
finds the top-k items (Sec. V).  Every protocol of the kind offers ``top_items(sets, k, rng,
engine)``; see ``docs/sets.md``.

>>> import numpy as np
>>> from ldp.sets import PSFO
>>> rows = np.array([[0, 1, -1], [1, 2, 3], [-1, -1, -1]])  # three users' sets
>>> PSFO(epsilon=1.0, domain_size=4, ell=2).expected_counts(rows)
array([1.        , 1.66666667, 0.66666667, 0.66666667])
"""

from ldp.sets.base import ItemsResult, SetProtocol, as_sets, padded_sample
from ldp.sets.psfo import PSFO, amplified_epsilon, prefers_grr
from ldp.sets.split import SPLIT
from ldp.sets.svsm import SVSM

__all__ = [
    "PSFO",
    "SPLIT",
    "SVSM",
    "ItemsResult",
    "SetProtocol",
    "amplified_epsilon",
    "as_sets",
    "padded_sample",
    "prefers_grr",
]
