"""Set-valued data: each user holds a set of items (a transaction), in CSR form.

Frequent-itemset mining under local differential privacy starts from users who each hold
a *set* of items, as in FIMI's ``kosarak.dat`` (one click-stream session per line); the
item-set protocols (e.g. Wang, Li, Jha, *Locally Differentially Private Frequent Itemset
Mining*, IEEE S&P 2018, the padding-and-sampling frequency oracle and SVIM) take such
users. This module gives them:

* :class:`Transactions`: n users' sets as CSR arrays ``offsets`` (n + 1) and ``items``,
  each user's items sorted ascending and distinct; true item and itemset counts;
* :func:`read_transactions`: a streaming reader of the FIMI format;
* :func:`load_kosarak_sets`: kosarak's transactions from the real file, or the calibrated
  surrogate of :mod:`ldp.datasets.set_surrogates` when no file is configured (the same
  path resolution as :func:`ldp.datasets.loaders.load_kosarak`), cached on disk;
* :func:`synthetic_sets`: a generator with planted frequent itemsets whose supports have
  a closed form (:func:`planted_support`).

Randomness follows :mod:`ldp.datasets.loaders`: independent streams from
``SeedSequence([seed, salt]).spawn(...)``; the kosarak streams are children 4 (surrogate)
and 5 (subsampling) of kosarak's salt, so they are independent of
:func:`~ldp.datasets.loaders.load_kosarak`'s four.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ldp.datasets import cache as histogram_cache
from ldp.datasets.loaders import SOURCE_CHOICES, _file_key, _streams, resolve_path
from ldp.datasets.readers import (
    BINARY_PROBE_BYTES,
    MAX_LINE_BYTES,
    ON_BAD_LINE,
    DataFileError,
    _Bad,
    _binary,
    excerpt,
)
from ldp.datasets.set_surrogates import (
    DOMAIN_SIZE as KOSARAK_DOMAIN_SIZE,
)
from ldp.datasets.set_surrogates import (
    MODEL_VERSION,
    _sorted_unique,
    kosarak_sets_surrogate,
)
from ldp.datasets.surrogates import KOSARAK_FIGURES
from ldp.io.files import atomic_write_bytes
from ldp.validation import ParameterError, check_choice, check_int, check_real

__all__ = [
    "MAX_ITEM_ID",
    "SOURCES",
    "Transactions",
    "cached_arrays",
    "load_kosarak_sets",
    "planted_support",
    "read_transactions",
    "synthetic_sets",
    "zipf_item_law",
]

#: What :attr:`Transactions.source` may be.
SOURCES = ("real", "surrogate", "synthetic")
#: Largest item id a file may hold (ids are read as int64 but must fit int32).
MAX_ITEM_ID = 2**31 - 1

#: Distinct items whose user bitmaps :meth:`Transactions.itemset_counts` holds at once
#: (each is n / 8 bytes: 64 MB at 10^6 users).
_BITMAP_ITEMS = 512
#: Bits set in each byte value.
_POPCOUNT = np.array([bin(value).count("1") for value in range(256)], dtype=np.int64)


def _integer_array(value: object, name: str) -> np.ndarray:
    """A 1-D array of integers as int64, or a TypeError / ParameterError naming ``name``."""
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integers, got dtype {array.dtype}")
    if array.ndim != 1:
        raise ParameterError(
            name,
            array.shape,
            "one-dimensional",
            message=f"{name} must be one-dimensional, got shape {array.shape}",
        )
    if array.dtype == np.uint64 and array.size and int(array.max()) > np.iinfo(np.int64).max:
        raise ParameterError(name, int(array.max()), "< 2**63", message=f"{name} must fit int64")
    return array.astype(np.int64, copy=False)


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.setflags(write=False)
    return view


@dataclass(frozen=True, eq=False)
class Transactions:
    """n users, each holding a set of items: CSR arrays with checked invariants.

    Parameters
    ----------
    offsets : numpy.ndarray
        int64, shape (n + 1,): ``offsets[0] = 0``, non-decreasing, ``offsets[-1] =
        len(items)``. User u holds ``items[offsets[u]:offsets[u + 1]]``; an empty slice is
        a user with an empty set (a legitimate user).
    items : numpy.ndarray
        int64 item ids in [0, domain_size), each user's sorted ascending and distinct.
    domain_size : int
        Number of possible item ids.
    name : str
        The loader's name (``kosarak``, ``synthetic-sets``, ...).
    source : {"real", "surrogate", "synthetic"}
    params : dict
        Every effective parameter that built it (for result rows).
    notes : tuple of str
        What the loader did that a reader should know (lines skipped, duplicates removed).

    Other integer dtypes are accepted and converted to int64. The arrays are stored as
    read-only views. Validation is vectorised and O(n + total items).

    Examples
    --------
    >>> data = Transactions.from_lists([[3, 1], [], [2, 2, 0]], domain_size=4)
    >>> data.n, data.sizes.tolist(), data.set_of(2).tolist()
    (3, [2, 0, 2], [0, 2])
    >>> data.item_counts().tolist(), data.itemset_counts([(0, 2), (1,), ()]).tolist()
    ([1, 1, 1, 1], [1, 1, 3])
    """

    offsets: np.ndarray
    items: np.ndarray
    domain_size: int
    name: str = "transactions"
    source: str = "synthetic"
    params: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        domain_size = check_int(self.domain_size, "domain_size", minimum=1)
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a string, got {type(self.name).__name__}")
        check_choice(self.source, "source", SOURCES)
        offsets = _integer_array(self.offsets, "offsets")
        items = _integer_array(self.items, "items")
        if len(offsets) == 0:
            raise ParameterError(
                "offsets", 0, "of length n + 1 >= 1", message="offsets must hold n + 1 >= 1 entries"
            )
        if offsets[0] != 0:
            raise ParameterError(
                "offsets",
                int(offsets[0]),
                "0 first",
                message=f"offsets[0] must be 0, got {offsets[0]}",
            )
        steps = np.diff(offsets)
        if steps.size and steps.min() < 0:
            u = int(np.argmax(steps < 0))
            raise ParameterError(
                "offsets",
                u,
                "non-decreasing",
                message=f"offsets must be non-decreasing: offsets[{u + 1}] = {offsets[u + 1]} < "
                f"offsets[{u}] = {offsets[u]}",
            )
        if offsets[-1] != len(items):
            raise ParameterError(
                "offsets",
                int(offsets[-1]),
                f"= len(items) = {len(items)} last",
                message=f"offsets[-1] must equal len(items) = {len(items)}, got {offsets[-1]}",
            )
        if items.size:
            outside = (items < 0) | (items >= domain_size)
            if outside.any():
                at = int(np.argmax(outside))
                user = int(np.searchsorted(offsets, at, side="right")) - 1
                raise ParameterError(
                    "items",
                    int(items[at]),
                    f"in [0, {domain_size})",
                    message=f"items must lie in [0, domain_size={domain_size}), found "
                    f"{items[at]} (user {user})",
                )
            ascending = np.diff(items) > 0
            starts = offsets[1:-1]
            starts = starts[(starts > 0) & (starts < len(items))]
            ascending[starts - 1] = True  # a new user may start lower
            if not ascending.all():
                at = int(np.argmax(~ascending))
                user = int(np.searchsorted(offsets, at, side="right")) - 1
                what = "repeats" if items[at] == items[at + 1] else "is not sorted ascending:"
                raise ParameterError(
                    "items",
                    user,
                    "sorted ascending and distinct within each user",
                    message=f"each user's items must be sorted ascending and distinct; user "
                    f"{user} {what} item {items[at + 1]} after {items[at]}",
                )
        object.__setattr__(self, "domain_size", domain_size)
        object.__setattr__(self, "offsets", _read_only(offsets))
        object.__setattr__(self, "items", _read_only(items))
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "notes", tuple(str(note) for note in self.notes))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_lists(
        cls,
        sets: Iterable[Iterable[int]],
        domain_size: int,
        *,
        name: str = "transactions",
        source: str = "synthetic",
        params: dict[str, Any] | None = None,
        notes: Sequence[str] = (),
    ) -> Transactions:
        """Build from one iterable of item ids per user; each is de-duplicated and sorted.

        Repeated items within a user are counted in a note. Item ids outside
        [0, domain_size) raise a :class:`~ldp.validation.ParameterError` naming the user.
        """
        domain_size = check_int(domain_size, "domain_size", minimum=1)
        arrays = []
        for u, user_set in enumerate(sets):
            if isinstance(user_set, str | bytes):
                raise TypeError(f"sets[{u}] must be an iterable of item ids, got a string")
            array = np.asarray(
                user_set if isinstance(user_set, np.ndarray) else list(user_set)
            ).reshape(-1)
            if array.size and array.dtype.kind not in "iu":
                raise TypeError(f"sets[{u}] must hold integer item ids, got dtype {array.dtype}")
            arrays.append(array.astype(np.int64) if array.size else np.empty(0, np.int64))
        sizes = np.array([len(a) for a in arrays], dtype=np.int64)
        flat = np.concatenate(arrays) if arrays else np.empty(0, np.int64)
        users = np.repeat(np.arange(len(arrays), dtype=np.int64), sizes)
        outside = (flat < 0) | (flat >= domain_size)
        if outside.any():
            at = int(np.argmax(outside))
            raise ParameterError(
                f"sets[{users[at]}]",
                int(flat[at]),
                f"in [0, {domain_size})",
                message=f"sets[{users[at]}] holds item {flat[at]}, outside [0, domain_size="
                f"{domain_size})",
            )
        keys = _sorted_unique(users * domain_size + flat)
        owner = keys // domain_size
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=len(arrays)), out=offsets[1:])
        notes = tuple(notes)
        if len(keys) < len(flat):
            notes += (f"removed {len(flat) - len(keys):,} repeated item(s) within users' sets",)
        return cls(
            offsets=offsets,
            items=keys - owner * domain_size,
            domain_size=domain_size,
            name=name,
            source=source,
            params=dict(params or {}),
            notes=notes,
        )

    # ------------------------------------------------------------------------ views
    @property
    def n(self) -> int:
        """Number of users."""
        return len(self.offsets) - 1

    @cached_property
    def sizes(self) -> np.ndarray:
        """Each user's set size, ``np.diff(offsets)`` (read-only)."""
        return _read_only(np.diff(self.offsets))

    @cached_property
    def _users(self) -> np.ndarray:
        return _read_only(np.repeat(np.arange(self.n, dtype=np.int64), self.sizes))

    def users_of_items(self) -> np.ndarray:
        """The user index of each entry of :attr:`items` (read-only, cached)."""
        return self._users

    @cached_property
    def _item_counts(self) -> np.ndarray:
        return _read_only(np.bincount(self.items, minlength=self.domain_size).astype(np.int64))

    def item_counts(self) -> np.ndarray:
        """Number of users holding each item id 0..domain_size - 1 (int64, read-only)."""
        return self._item_counts

    def top_items(self, k: int, *, with_counts: bool = False):
        """The k most held item ids: by count descending, ties by id ascending.

        Items no user holds are never listed, so fewer than k come back when fewer are
        held. With ``with_counts``, returns ``(ids, counts)``.
        """
        k = check_int(k, "k", minimum=0)
        counts = self._item_counts
        held = np.flatnonzero(counts)
        order = held[np.lexsort((held, -counts[held]))][:k]
        return (order, counts[order]) if with_counts else order

    def set_of(self, u: int) -> np.ndarray:
        """User u's items, sorted ascending (a read-only view)."""
        u = check_int(u, "u", minimum=0, maximum=self.n - 1)
        return self.items[self.offsets[u] : self.offsets[u + 1]]

    def _itemset(self, itemset: object, k: int) -> tuple[int, ...]:
        if isinstance(itemset, str | bytes) or not isinstance(itemset, Iterable):
            raise TypeError(f"itemsets[{k}] must be a sequence of item ids, got {itemset!r}")
        array = np.asarray(list(itemset) if not isinstance(itemset, np.ndarray) else itemset)
        if array.size and array.dtype.kind not in "iu":
            raise TypeError(f"itemsets[{k}] must hold integer item ids, got {array.dtype}")
        values = sorted({int(v) for v in array.reshape(-1).tolist()})
        if values and (values[0] < 0 or values[-1] >= self.domain_size):
            bad = values[0] if values[0] < 0 else values[-1]
            raise ParameterError(
                f"itemsets[{k}]",
                bad,
                f"in [0, {self.domain_size})",
                message=f"itemsets[{k}] holds item {bad}, outside [0, domain_size="
                f"{self.domain_size})",
            )
        return tuple(values)

    def itemset_counts(self, itemsets: Sequence[Sequence[int]]) -> np.ndarray:
        """Number of users whose set contains each itemset (all its items), int64.

        An itemset is a set: repeated ids count once; the empty itemset is in every
        user's set. Vectorised: one pass over :attr:`items` builds, for each distinct item
        of the itemsets (512 at a time), a bitmap of the users holding it; an itemset's
        count is the popcount of the AND of its items' bitmaps. A few hundred itemsets of
        size <= 4 over 10^6 users take well under a second.
        """
        wanted = [self._itemset(itemset, k) for k, itemset in enumerate(itemsets)]
        counts = np.empty(len(wanted), dtype=np.int64)
        pending: list[int] = []
        for k, itemset in enumerate(wanted):
            if len(itemset) == 0:
                counts[k] = self.n
            elif len(itemset) == 1:
                counts[k] = self._item_counts[itemset[0]]
            else:
                pending.append(k)
        batch: list[int] = []
        batch_items: set[int] = set()
        for k in pending:
            if batch and len(batch_items | set(wanted[k])) > _BITMAP_ITEMS:
                self._count_batch([wanted[j] for j in batch], counts, batch)
                batch, batch_items = [], set()
            batch.append(k)
            batch_items.update(wanted[k])
        if batch:
            self._count_batch([wanted[j] for j in batch], counts, batch)
        return counts

    def _count_batch(
        self, itemsets: list[tuple[int, ...]], out: np.ndarray, where: list[int]
    ) -> None:
        needed = np.array(sorted({item for itemset in itemsets for item in itemset}), np.int64)
        position = np.minimum(np.searchsorted(needed, self.items), len(needed) - 1)
        hit = needed[position] == self.items
        rows, users = position[hit], self._users[hit]
        order = np.argsort(rows, kind="stable")
        rows, users = rows[order], users[order]
        bounds = np.searchsorted(rows, np.arange(len(needed) + 1))
        width = (self.n + 7) // 8
        bitmaps = np.zeros((len(needed), width), dtype=np.uint8)
        block = 64  # items per boolean scratch matrix (64 x n bytes)
        for first in range(0, len(needed), block):
            last = min(first + block, len(needed))
            scratch = np.zeros((last - first, width * 8), dtype=bool)
            span = slice(bounds[first], bounds[last])
            scratch[rows[span] - first, users[span]] = True
            bitmaps[first:last] = np.packbits(scratch, axis=1)
        index = {item: row for row, item in enumerate(needed.tolist())}
        for k, itemset in zip(where, itemsets, strict=True):
            both = bitmaps[index[itemset[0]]].copy()
            for item in itemset[1:]:
                both &= bitmaps[index[item]]
            out[k] = int(_POPCOUNT[both].sum())

    def take(self, users: np.ndarray) -> Transactions:
        """The given users, in the given order (repeats allowed; a boolean mask too)."""
        users = np.asarray(users)
        if users.dtype == bool:
            if users.shape != (self.n,):
                raise ParameterError(
                    "users",
                    users.shape,
                    f"of shape ({self.n},)",
                    message=f"a boolean mask of users must have shape ({self.n},), got "
                    f"{users.shape}",
                )
            users = np.flatnonzero(users)
        users = _integer_array(users, "users")
        if users.size and (users.min() < 0 or users.max() >= self.n):
            bad = int(users.min() if users.min() < 0 else users.max())
            raise ParameterError(
                "users",
                bad,
                f"in [0, {self.n})",
                message=f"users must lie in [0, {self.n}), found {bad}",
            )
        sizes = self.sizes[users]
        offsets = np.zeros(len(users) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        shift = np.repeat(self.offsets[users] - offsets[:-1], sizes)
        return replace(self, offsets=offsets, items=self.items[shift + np.arange(offsets[-1])])

    def __repr__(self) -> str:
        return (
            f"Transactions(name={self.name!r}, n={self.n}, domain_size={self.domain_size}, "
            f"items={len(self.items)}, source={self.source!r})"
        )


# --------------------------------------------------------------------------- reader
#: Bytes read per block by :func:`read_transactions` (whole lines are parsed at once).
_BLOCK_BYTES = 1 << 22
#: Digits beyond which a token is not parsed (its value would not fit int64).
_MAX_TOKEN_DIGITS = 18
_POWERS = 10 ** np.arange(_MAX_TOKEN_DIGITS + 1, dtype=np.int64)


@dataclass
class _Block:
    """One parsed block: per-line sizes (bad lines removed), items, repeats found."""

    sizes: np.ndarray
    items: np.ndarray
    repeats: int
    repeated_lines: int


def _parse_block(data: bytes, first_line: int, path: Path, bad: _Bad) -> _Block:
    """Parse whole lines (the last one may lack its newline) of a FIMI file."""
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    if len(buf) and buf[-1] != 10:
        ends = np.append(ends, len(buf))
    lines = len(ends)
    starts = np.concatenate([[0], ends[:-1] + 1])
    if lines and (ends - starts).max() > MAX_LINE_BYTES:
        at = int(np.argmax(ends - starts > MAX_LINE_BYTES))
        raise DataFileError(
            path,
            f"longer than {MAX_LINE_BYTES:,} bytes (not a text data file?)",
            first_line + at + 1,
        )
    digit = (buf - np.uint8(48)) < 10  # uint8 wraps below '0'
    space = (buf == 32) | (buf == 9) | (buf == 13) | (buf == 10)
    stray = np.flatnonzero(~(digit | space))
    before = np.concatenate([[False], digit[:-1]])
    after = np.concatenate([digit[1:], [False]])
    token_start = np.flatnonzero(digit & ~before)
    token_end = np.flatnonzero(digit & ~after)
    length = token_end - token_start + 1
    token_line = np.searchsorted(ends, token_start)
    values = np.zeros(len(token_start), dtype=np.int64)
    if len(token_start):
        positions = np.flatnonzero(digit)
        power = np.minimum(np.repeat(token_end, length) - positions, _MAX_TOKEN_DIGITS)
        terms = (buf[positions] - 48).astype(np.int64) * _POWERS[power]
        first = np.concatenate([[0], np.cumsum(length)[:-1]])
        values = np.add.reduceat(terms, first)
    too_big = (length > _MAX_TOKEN_DIGITS) | (values > MAX_ITEM_ID)
    bad_lines = _sorted_unique(np.concatenate([np.searchsorted(ends, stray), token_line[too_big]]))
    line_bad = np.zeros(lines, dtype=bool)
    if len(bad_lines):
        line = int(bad_lines[0])
        text = data[starts[line] : ends[line]]
        in_line = stray[(stray >= starts[line]) & (stray < ends[line])]
        if len(in_line):
            at = int(in_line[0] - starts[line])
            message = (
                f"not a list of integer item ids ({chr(text[at])!r} at byte {at + 1} of "
                f"{excerpt(text)})"
            )
        else:
            big = int(np.flatnonzero(too_big & (token_line == line))[0])
            what = (
                f"of {length[big]:,} digits"
                if length[big] > _MAX_TOKEN_DIGITS
                else str(int(values[big]))
            )
            message = f"item id {what} is not below 2**31"
        bad(first_line + line + 1, message)  # raises with on_bad_line="raise"
        bad.count += len(bad_lines) - 1
        line_bad[bad_lines] = True
    keep = ~line_bad[token_line]
    keys = np.sort(token_line[keep] << 31 | values[keep])  # line, then id: sorted per line
    new = np.concatenate([[True], keys[1:] != keys[:-1]]) if len(keys) else np.ones(0, bool)
    unique = keys[new]
    repeats = len(keys) - len(unique)
    repeated_lines = len(_sorted_unique(keys[~new] >> 31)) if repeats else 0
    owner = unique >> 31
    sizes = np.bincount(owner, minlength=lines)[~line_bad]
    return _Block(sizes, unique & MAX_ITEM_ID, repeats, repeated_lines)


def _blocks(path: Path) -> Iterable[bytes]:
    """Blocks of whole lines of a (possibly gzipped) text file, about _BLOCK_BYTES each."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            rest = handle.read(BINARY_PROBE_BYTES)
            if _binary(rest):
                raise DataFileError(path, "not a text file (binary data in its first bytes)")
            while True:
                block = handle.read(_BLOCK_BYTES)
                data = rest + block
                if not block:
                    if data:
                        yield data
                    return
                cut = data.rfind(b"\n") + 1
                if cut == 0 and len(data) <= MAX_LINE_BYTES:
                    rest = data  # no line ends yet: read on
                    continue
                yield data[:cut] if cut else data  # a too-long line fails in the parser
                rest = data[cut:] if cut else b""
    except (OSError, EOFError) as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise DataFileError(path, f"cannot be read ({error})") from error


def read_transactions(
    path: str | os.PathLike[str], *, on_bad_line: str = "raise"
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Read a FIMI transaction file: one transaction per line, item ids by spaces or tabs.

    Streams the file in blocks of whole lines (4 MiB) and parses each block with numpy
    (no Python object per item): 10^6 lines and 8 * 10^6 items take about 1.5 s.
    Files ending in ``.gz`` are decompressed on the fly.

    Parameters
    ----------
    path : path
        The file.
    on_bad_line : {"raise", "skip"}
        A malformed line (a byte other than digits, spaces, tabs and CRs, which count
        as spaces so that CRLF line ends read; an id of 2**31 or more) raises
        :class:`~ldp.datasets.DataFileError` naming the file and the line number, or is
        skipped (not a user) and counted in the notes with the first one quoted.

    Returns
    -------
    offsets : numpy.ndarray
        int64, one entry per user (line) plus one: the CSR offsets.
    items : numpy.ndarray
        int64 item ids, each line's sorted ascending and distinct.
    notes : list of str
        Repeated items within a line (removed: a transaction is a set), empty lines (kept:
        users with an empty set), skipped malformed lines.

    Notes
    -----
    Every line is a user, an empty one too; the newline ending the last line does not
    start another (a file ending without one is read the same). A file with no line at
    all is a :class:`~ldp.datasets.DataFileError`, as is one whose first bytes are binary
    or with a line longer than 1 MiB (``MAX_LINE_BYTES`` of
    :mod:`ldp.datasets.readers`).
    """
    check_choice(on_bad_line, "on_bad_line", ON_BAD_LINE)
    path = Path(path)
    bad = _Bad(path, on_bad_line)
    sizes, items = [], []
    lines = repeats = repeated_lines = 0
    for data in _blocks(path):
        block = _parse_block(data, lines, path, bad)
        lines += data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        sizes.append(block.sizes)
        items.append(block.items)
        repeats += block.repeats
        repeated_lines += block.repeated_lines
    all_sizes = np.concatenate(sizes) if sizes else np.empty(0, dtype=np.int64)
    if len(all_sizes) == 0:
        raise DataFileError(path, "no transactions found (empty file?)")
    offsets = np.zeros(len(all_sizes) + 1, dtype=np.int64)
    np.cumsum(all_sizes, out=offsets[1:])
    notes = bad.notes()
    if repeats:
        notes.append(
            f"{path}: removed {repeats:,} repeated item(s) within {repeated_lines:,} "
            "line(s) (a transaction is a set)"
        )
    empty = int((all_sizes == 0).sum())
    if empty:
        notes.append(f"{path}: {empty:,} empty line(s) kept as users with an empty set")
    return offsets, np.concatenate(items), notes


# ---------------------------------------------------------------------------- cache
#: Bump when what the array cache stores changes: old entries are then ignored.
ARRAYS_FORMAT = 1

Arrays = tuple[dict[str, np.ndarray], dict[str, Any]]


def _checksum(arrays: dict[str, np.ndarray], meta: bytes) -> str:
    digest = hashlib.sha256()
    for key in sorted(arrays):
        digest.update(key.encode())
        digest.update(str(arrays[key].dtype).encode())
        digest.update(np.ascontiguousarray(arrays[key]).tobytes())
    digest.update(meta)
    return digest.hexdigest()


def _read_arrays(path: Path) -> Arrays:
    with np.load(path, allow_pickle=False) as archive:
        arrays = {key[2:]: archive[key] for key in archive.files if key.startswith("a_")}
        meta = bytes(archive["meta"].item())
        stored = str(archive["checksum"].item())
    if _checksum(arrays, meta) != stored:
        raise ValueError("checksum mismatch")
    return arrays, json.loads(meta.decode("utf-8"))


def cached_arrays(
    name: str,
    params: dict[str, Any],
    build: Callable[[], Arrays],
    *,
    enabled: bool = True,
    directory: str | os.PathLike[str] | None = None,
) -> Arrays:
    """``build()``'s (named arrays, JSON-serialisable metadata), from the disk cache if there.

    The same directory, key and guarantees as :func:`ldp.datasets.cache.cached_histogram`:
    the entry is named after a SHA-256 of (name, params, format), written atomically
    (:func:`ldp.io.files.atomic_write_bytes`), carries a checksum of its arrays and
    metadata; an entry that cannot be read or does not match is reported with a
    ``RuntimeWarning``, deleted and rebuilt; a cache that cannot be written is a warning.
    ``enabled=False`` bypasses it.
    """
    if not enabled:
        return build()
    path = histogram_cache.cache_path(name, {**params, "arrays_format": ARRAYS_FORMAT}, directory)
    return histogram_cache.cached_entry(path, _read_arrays, build, _write_arrays)


def _write_arrays(path: Path, built: Arrays) -> None:
    """One entry: the arrays, the metadata and their checksum, written atomically."""
    arrays, meta = built
    meta_bytes = json.dumps(meta, sort_keys=True).encode("utf-8")
    buffer = io.BytesIO()
    np.savez(
        buffer,
        meta=np.array(meta_bytes),
        checksum=np.array(_checksum(arrays, meta_bytes)),
        **{f"a_{key}": value for key, value in arrays.items()},
    )
    atomic_write_bytes(path, buffer.getvalue())


def _csr_arrays(offsets: np.ndarray, items: np.ndarray) -> dict[str, np.ndarray]:
    """CSR arrays as stored in the cache: ids fit int32 (:data:`MAX_ITEM_ID`)."""
    return {"offsets": offsets.astype(np.int64), "items": items.astype(np.int32)}


# --------------------------------------------------------------------------- kosarak
def load_kosarak_sets(
    *,
    path: str | os.PathLike[str] | None = None,
    n: int | None = None,
    seed: int = 0,
    source: str = "auto",
    on_bad_line: str = "raise",
    cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Transactions:
    """Kosarak click-stream as set-valued data: each transaction (line) is one user's set.

    Parameters
    ----------
    path : path, optional
        A FIMI ``kosarak.dat`` (or ``.gz``). Default: ``$LDP_DATA_DIR/kosarak.dat``, else
        the calibrated surrogate (:mod:`ldp.datasets.set_surrogates`). Resolved exactly as
        :func:`~ldp.datasets.loaders.load_kosarak` does (a missing ``path`` is a
        ``FileNotFoundError``; ``$LDP_DATA_DIR`` without the file is a
        :class:`~ldp.datasets.DataFallbackWarning`, noted).
    n : int, optional
        Real file: a seeded uniform random subset of n transactions, kept in file order
        (default: all). Surrogate: the number of users (default 990,002).
    seed : int
        Seeds the surrogate and the subset.
    source : {"auto", "real", "surrogate"}
    on_bad_line : {"raise", "skip"}
        See :func:`read_transactions`.
    cache, cache_dir
        Keep the built CSR arrays on disk (see :func:`cached_arrays`).

    Returns
    -------
    Transactions
        ``domain_size`` is max id + 1 but at least 41,271 (kosarak's ids 0..41,270), so a
        part of the file has the full file's domain; ``params`` holds source, n, seed (and
        path, on_bad_line for a file).
    """
    check_choice(source, "source", SOURCE_CHOICES)
    check_choice(on_bad_line, "on_bad_line", ON_BAD_LINE)
    seed = check_int(seed, "seed", minimum=0)
    if n is not None:
        n = check_int(n, "n", minimum=1)
    file, notes, _ = resolve_path("kosarak", path, source)
    surrogate_rng, sample_rng = _streams("kosarak", seed, 6)[4:]
    if file is None:
        users = KOSARAK_FIGURES["transactions"] if n is None else n
        key = {"n": users, "seed": seed, "model": MODEL_VERSION}

        def build() -> Arrays:
            return _csr_arrays(*kosarak_sets_surrogate(users, surrogate_rng)), {}

        arrays, _ = cached_arrays("kosarak-sets", key, build, enabled=cache, directory=cache_dir)
        return Transactions(
            offsets=arrays["offsets"],
            items=arrays["items"],
            domain_size=KOSARAK_DOMAIN_SIZE,
            name="kosarak",
            source="surrogate",
            params={"source": "surrogate", **key},
            notes=(*notes, "calibrated set-valued surrogate (ldp.datasets.set_surrogates)"),
        )
    key = {"file": _file_key(file), "on_bad_line": on_bad_line}

    def build_real() -> Arrays:
        offsets, items, file_notes = read_transactions(file, on_bad_line=on_bad_line)
        return _csr_arrays(offsets, items), {"notes": file_notes}

    arrays, meta = cached_arrays(
        "kosarak-sets-real", key, build_real, enabled=cache, directory=cache_dir
    )
    items = arrays["items"]
    total = len(arrays["offsets"]) - 1
    if n is not None and n > total:
        raise ParameterError("n", n, f"<= {total:,}", f"the file has {total:,} transactions")
    data = Transactions(
        offsets=arrays["offsets"],
        items=items,
        domain_size=max(int(items.max()) + 1 if items.size else 1, KOSARAK_DOMAIN_SIZE),
        name="kosarak",
        source="real",
        params={
            "source": "real",
            "path": str(file),
            "n": total if n is None else n,
            "seed": seed,
            "on_bad_line": on_bad_line,
        },
        notes=tuple(meta.get("notes", ())),
    )
    if n is None or n == total:
        return data
    chosen = np.sort(sample_rng.choice(total, size=n, replace=False))
    subset = data.take(chosen)
    return replace(
        subset,
        notes=(
            *subset.notes,
            f"a seeded uniform random subset of {n:,} of the file's {total:,} transactions, "
            "in file order",
        ),
    )


# -------------------------------------------------------------------------- synthetic
#: Mixed into :func:`synthetic_sets`' seed (the single-value loaders use 1-5).
SYNTHETIC_SETS_SALT = 101
DEFAULT_PLANTED: tuple[tuple[tuple[int, ...], float], ...] = (((1, 2), 0.2), ((3, 4, 5), 0.1))


def zipf_item_law(domain_size: int, zipf_s: float) -> np.ndarray:
    """q_j proportional to (j + 1)^-s for item ids j = 0..domain_size - 1 (sums to one)."""
    weights = np.arange(1, domain_size + 1, dtype=float) ** -float(zipf_s)
    return weights / weights.sum()


def _check_planted(planted: object, domain_size: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    if isinstance(planted, str | bytes) or not isinstance(planted, Sequence):
        raise TypeError("planted must be a sequence of (itemset, probability) pairs")
    checked = []
    for k, pair in enumerate(planted):
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(f"planted[{k}] must be an (itemset, probability) pair, got {pair!r}")
        itemset, probability = pair
        if isinstance(itemset, str | bytes) or not isinstance(itemset, Iterable):
            raise TypeError(f"planted[{k}]'s itemset must be a sequence of item ids")
        items = [check_int(item, f"planted[{k}] item", minimum=0) for item in itemset]
        if not items:
            raise ParameterError(f"planted[{k}]", (), "a non-empty itemset")
        if len(set(items)) != len(items):
            raise ParameterError(f"planted[{k}]", tuple(items), "an itemset of distinct ids")
        if max(items) >= domain_size:
            raise ParameterError(
                f"planted[{k}]",
                max(items),
                f"in [0, {domain_size})",
                message=f"planted[{k}] holds item {max(items)}, outside [0, domain_size="
                f"{domain_size})",
            )
        probability = check_real(probability, f"planted[{k}] probability", minimum=0, maximum=1)
        checked.append((tuple(sorted(items)), probability))
    return tuple(checked)


def synthetic_sets(
    *,
    n: int,
    domain_size: int = 1024,
    mean_size: float = 8.0,
    planted: Sequence[tuple[Sequence[int], float]] = DEFAULT_PLANTED,
    zipf_s: float = 1.1,
    seed: int = 0,
) -> Transactions:
    """Users' sets with planted frequent itemsets over a Zipf background, exact law below.

    User u's set is T_u = P_u ∪ B_u, independently across users:

    * **planted**: each planted itemset A_k is included (all its items) with probability
      p_k, independently of the others and of the background; P_u is the union of the
      included ones;
    * **background**: K_u ~ Poisson(``mean_size``) draws, i.i.d. over item ids
      j = 0..domain_size - 1 with q_j = (j + 1)^-s / sum_i (i + 1)^-s (:func:`zipf_item_law`,
      s = ``zipf_s``); B_u is the set of distinct drawn ids (repeats, and ids already in
      P_u, count once). ``mean_size`` is thus the mean number of draws, not of items.

    By Poisson thinning item j is drawn Poisson(mean_size q_j) times independently of
    every other item, so j is in B_u with probability 1 - exp(-mean_size q_j), independently
    across j and of P_u. Hence, for any itemset A,

        P(A ⊆ T) = sum over z in {0,1}^K of prod_k p_k^z_k (1 - p_k)^(1 - z_k)
                   x prod over j in A minus (union of A_k with z_k = 1) of (1 - exp(-mean_size q_j))

    (only the planted itemsets meeting A matter): :func:`planted_support`. A planted itemset
    A_k has support >= p_k, equality only without background.

    Parameters
    ----------
    n : int
        Number of users.
    domain_size : int
        Item ids 0..domain_size - 1 (at most 2**31).
    mean_size : float
        Mean number of background draws per user (>= 0).
    planted : sequence of (itemset, probability)
        Itemsets of distinct ids in the domain, probabilities in [0, 1].
    zipf_s : float
        Zipf exponent of the background (>= 0; 0 is uniform).
    seed : int
        Seeds three independent streams (planted, counts, draws): changing ``mean_size``
        keeps which users hold which planted itemset.
    """
    n = check_int(n, "n", minimum=1)
    domain_size = check_int(domain_size, "domain_size", minimum=1, maximum=2**31)
    mean_size = check_real(mean_size, "mean_size", minimum=0)
    zipf_s = check_real(zipf_s, "zipf_s", minimum=0)
    planted = _check_planted(planted, domain_size)
    seed = check_int(seed, "seed", minimum=0)
    planted_rng, count_rng, draw_rng = (
        np.random.default_rng(child)
        for child in np.random.SeedSequence([seed, SYNTHETIC_SETS_SALT]).spawn(3)
    )
    keys = []
    for itemset, probability in planted:
        holders = np.flatnonzero(planted_rng.random(n) < probability).astype(np.int64)
        keys.append((holders[:, None] * domain_size + np.array(itemset)[None, :]).ravel())
    draws = count_rng.poisson(mean_size, n).astype(np.int64)
    drawn = np.repeat(
        np.arange(domain_size, dtype=np.int64),
        draw_rng.multinomial(int(draws.sum()), zipf_item_law(domain_size, zipf_s)),
    )
    draw_rng.shuffle(drawn)
    keys.append(np.repeat(np.arange(n, dtype=np.int64), draws) * domain_size + drawn)
    keys = _sorted_unique(np.concatenate(keys))
    owner = keys // domain_size
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=offsets[1:])
    params = {
        "n": n,
        "domain_size": domain_size,
        "mean_size": mean_size,
        "planted": [[list(itemset), p] for itemset, p in planted],
        "zipf_s": zipf_s,
        "seed": seed,
    }
    return Transactions(
        offsets=offsets,
        items=keys - owner * domain_size,
        domain_size=domain_size,
        name="synthetic-sets",
        source="synthetic",
        params=params,
    )


def planted_support(
    itemset: Sequence[int],
    *,
    domain_size: int = 1024,
    mean_size: float = 8.0,
    planted: Sequence[tuple[Sequence[int], float]] = DEFAULT_PLANTED,
    zipf_s: float = 1.1,
) -> float:
    """P(itemset ⊆ T) under :func:`synthetic_sets`' law with these parameters, exactly.

    Sums over the inclusion patterns of the planted itemsets that meet ``itemset`` (at most
    20 of them); see :func:`synthetic_sets` for the formula. A single item's support is
    ``planted_support((j,), ...)``.

    >>> round(planted_support((1, 2), mean_size=0.0), 12)
    0.2
    """
    domain_size = check_int(domain_size, "domain_size", minimum=1, maximum=2**31)
    mean_size = check_real(mean_size, "mean_size", minimum=0)
    zipf_s = check_real(zipf_s, "zipf_s", minimum=0)
    planted = _check_planted(planted, domain_size)
    wanted = {
        check_int(item, "itemset item", minimum=0, maximum=domain_size - 1) for item in itemset
    }
    relevant = [(set(items), p) for items, p in planted if wanted & set(items)]
    if len(relevant) > 20:
        raise ParameterError("planted", len(relevant), "at most 20 itemsets meeting the itemset")
    law = zipf_item_law(domain_size, zipf_s)
    drawn = {j: -np.expm1(-mean_size * law[j]) for j in wanted}
    total = 0.0
    for pattern in itertools.product((False, True), repeat=len(relevant)):
        probability, covered = 1.0, set()
        for included, (items, p) in zip(pattern, relevant, strict=True):
            probability *= p if included else 1.0 - p
            if included:
                covered |= items
        for j in wanted - covered:
            probability *= drawn[j]
        total += probability
    return float(total)
