"""The :class:`Dataset` every loader returns: users' m-bit values plus their histogram.

Values follow :mod:`ldp.bits`: a 1-D ``np.uint64`` array when m <= 64, fixed-width bytes
(``S{m // 8}``) when m > 64. The histogram (distinct values and their counts) is what the
heavy-hitter "sampled engine" works on; the true top-k is read from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ldp import bits

__all__ = ["Dataset"]

SOURCES = ("synthetic", "surrogate")


@dataclass(frozen=True, eq=False)
class Dataset:
    """One user population: each user holds one m-bit value.

    Parameters
    ----------
    name : str
        The loader's name (``zipf``, ``exponential``, ``kosarak``, ``aol``, ``url``).
    values : numpy.ndarray
        One value per user, in a seeded random order (so any contiguous block of users is
        a uniform random subset). ``np.uint64`` when m <= 64, else dtype ``S{m // 8}``.
    m : int
        Bits per value.
    source : str
        ``"synthetic"``, ``"surrogate"`` or ``"real:<file path>"``.
    params : dict
        The parameters that built it (with defaults filled in), for result rows.
    notes : tuple of str
        What the loader did that a reader should know: rows skipped and why, values merged
        by truncation, undecodable bytes replaced. Nothing is dropped without a note.
    text : bool
        Whether values are text (queries, domain names) and should be displayed as such.
    integer : bool
        Whether values are integer ids (kosarak items), displayed in decimal.
    fallback : str or None
        Why a surrogate stands in for real data the user asked for (``$LDP_DATA_DIR`` set
        but none of the expected file names in it), else None. Also the first of
        :attr:`notes`, and issued as a :class:`ldp.datasets.DataFallbackWarning`, so that
        a harness can print it.

    Notes
    -----
    Ordering convention of :meth:`histogram` and :meth:`top_k`: by count descending, ties
    broken by value ascending (numerical order of the integer, which for bytes is the
    lexicographic order of the big-endian bytes). It is deterministic for a given dataset.
    """

    name: str
    values: np.ndarray
    m: int
    source: str
    params: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    text: bool = False
    integer: bool = False
    fallback: str | None = None

    def __post_init__(self) -> None:
        if self.text and self.integer:
            raise ValueError("a dataset's values are text or integer ids, not both")
        values = np.asarray(self.values)
        if values.ndim != 1:
            raise ValueError(f"values must be 1-D, got shape {values.shape}")
        if self.m <= 64:
            if values.dtype != np.uint64:
                raise TypeError(
                    f"values of m={self.m} <= 64 bits must be np.uint64, got {values.dtype}"
                )
            if self.m < 64 and len(values) and int(values.max()) >> self.m:
                raise ValueError(f"values do not fit in m={self.m} bits")
        elif values.dtype != np.dtype(f"S{self.m // 8}") or self.m % 8:
            raise TypeError(
                f"values of m={self.m} > 64 bits must have dtype S{self.m // 8}, got {values.dtype}"
            )
        if not (self.source in SOURCES or self.source.startswith("real:")):
            raise ValueError(
                f"source must be one of {SOURCES} or 'real:<path>', got {self.source!r}"
            )
        values = values.view()  # read-only view: the caller's array stays writeable
        values.setflags(write=False)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "notes", tuple(self.notes))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_histogram(
        cls,
        values: np.ndarray,
        counts: np.ndarray,
        *,
        name: str,
        m: int,
        source: str,
        params: dict[str, Any] | None = None,
        notes: tuple[str, ...] = (),
        text: bool = False,
        integer: bool = False,
        fallback: str | None = None,
        rng: np.random.Generator | None = None,
    ) -> Dataset:
        """Build a dataset from distinct values and their counts.

        Users are the values repeated by their counts, then shuffled with ``rng`` (kept
        grouped by value when ``rng`` is None). Zero counts are dropped.
        """
        values = np.asarray(values)
        counts = np.asarray(counts, dtype=np.int64)
        if values.shape != counts.shape or values.ndim != 1:
            raise ValueError("values and counts must be 1-D arrays of the same length")
        if np.any(counts < 0):
            raise ValueError("counts must be >= 0")
        keep = counts > 0
        values, counts = values[keep], counts[keep]
        if len(np.unique(values)) != len(values):
            raise ValueError("histogram values must be distinct")
        users = np.repeat(values, counts)
        if rng is not None:
            users = users[rng.permutation(len(users))]
        dataset = cls(
            name=name,
            values=users,
            m=m,
            source=source,
            params=dict(params or {}),
            notes=notes,
            text=text,
            integer=integer,
            fallback=fallback,
        )
        dataset.__dict__["_histogram"] = _sorted_histogram(values, counts)
        return dataset

    # ------------------------------------------------------------------------ views
    @property
    def n(self) -> int:
        """Number of users."""
        return len(self.values)

    @cached_property
    def _histogram(self) -> tuple[np.ndarray, np.ndarray]:
        distinct, counts = np.unique(self.values, return_counts=True)
        return _sorted_histogram(distinct, counts.astype(np.int64))

    def histogram(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct values and their counts, by count descending then value ascending.

        Returns
        -------
        values : numpy.ndarray
            Distinct values, same dtype as :attr:`values` (read-only, cached).
        counts : numpy.ndarray
            ``np.int64`` counts, summing to :attr:`n`.
        """
        return self._histogram

    @property
    def n_distinct(self) -> int:
        """Number of distinct values."""
        return len(self._histogram[1])

    def top_k(self, k: int, *, with_counts: bool = False):
        """The k most frequent values, most frequent first (ties by value ascending).

        Returns fewer than k values when the dataset has fewer distinct values. With
        ``with_counts``, returns ``(values, counts)``.
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        values, counts = self._histogram
        if with_counts:
            return values[:k], counts[:k]
        return values[:k]

    @cached_property
    def _by_value(self) -> tuple[np.ndarray, np.ndarray]:
        values, counts = self._histogram
        order = np.argsort(values, kind="stable")
        return values[order], counts[order]

    def counts_of(self, values: np.ndarray) -> np.ndarray:
        """The true number of users holding each given value (0 for absent ones), int64."""
        query = np.asarray(values, dtype=self.values.dtype)
        sorted_values, sorted_counts = self._by_value
        if len(sorted_values) == 0:
            return np.zeros(query.shape, dtype=np.int64)
        position = np.clip(np.searchsorted(sorted_values, query), 0, len(sorted_values) - 1)
        found = sorted_values[position] == query
        return np.where(found, sorted_counts[position], 0).astype(np.int64)

    def frequencies(self, values: np.ndarray) -> np.ndarray:
        """The true frequency (share of users, in [0, 1]) of each given value."""
        return self.counts_of(values) / max(self.n, 1)

    def format(self, value: object) -> str:
        """A readable rendering of one value: text (queries, domains), decimal (item ids), hex."""
        if self.integer:
            return str(int(value))
        return bits.format_value(value, self.m, text=self.text)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, n={self.n}, m={self.m}, source={self.source!r}, "
            f"params={self.params!r})"
        )


def _sorted_histogram(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((values, -counts))
    values, counts = np.ascontiguousarray(values[order]), np.ascontiguousarray(counts[order])
    values.setflags(write=False)
    counts.setflags(write=False)
    return values, counts
