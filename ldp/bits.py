"""Bit strings of m bits: prefixes, extensions and conversions, vectorised over users.

The heavy-hitter protocols of Wang, Li and Jha, *Locally Differentially Private Heavy
Hitter Identification* (PEM, Section IV) work on the prefixes v[0:ell] of each user's
m-bit value and extend candidate prefixes by eta bits at a time (C_{i-1} x {0,1}^eta).
This module fixes one representation of such bit strings for the whole project.

Values (what :class:`ldp.datasets.Dataset` holds)
    * m <= 64: a 1-D ``np.uint64`` array, each value < 2**m. The bit string v[0:m] is the
      m-bit big-endian binary expansion of the integer: v[0] is its most significant bit.
    * m > 64 (m a multiple of 8): a 1-D array of fixed-width bytes, dtype ``S{m // 8}``
      (e.g. ``S20`` for 160-bit URLs), big-endian bit order: the most significant bit of
      byte 0 is v[0]. NumPy strips trailing NUL bytes when one *item* is read, so text
      values are padded with spaces, never NULs; whole-array operations are unaffected.

Prefixes and words (what :func:`prefix`, :func:`to_words` and :func:`extend` return)
    A prefix of ell bits is the right-aligned integer whose ell-bit binary expansion is
    v[0:ell]. For ell <= 64 it is a 1-D ``np.uint64`` array; for ell > 64 it is a 2-D
    ``np.uint64`` array of shape (n, ceil(ell / 64)): the integer written in base 2**64,
    most significant word first, the first word left-padded with zero bits. The empty
    prefix (ell = 0) is the integer 0 for every value.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "bytes_to_int",
    "bytes_to_words",
    "extend",
    "format_value",
    "int_to_bytes",
    "int_to_words",
    "n_words",
    "prefix",
    "row_hashes",
    "to_words",
    "words_to_bytes",
    "words_to_int",
]

_WORD = 64
#: Extensions of more than this many bits at once would need 2**eta candidates per prefix.
MAX_ETA = 40


def n_words(ell: int) -> int:
    """Number of 64-bit words holding an ell-bit integer (1 for ell <= 64)."""
    return max(1, -(-int(ell) // _WORD))


def _check_bits(value: object, name: str, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        upper = "" if maximum is None else f", {maximum}"
        raise ValueError(f"{name} must be in [{minimum}{upper}], got {value}")
    return value


def _check_m(m: object) -> int:
    m = _check_bits(m, "m", 1)
    if m > _WORD and m % 8:
        raise ValueError(f"m must be a multiple of 8 when m > 64 (bytes values), got {m}")
    return m


# --------------------------------------------------------------------------- Python ints
def bytes_to_int(value: bytes) -> int:
    """The big-endian integer of a byte string (``int.from_bytes(value, "big")``)."""
    return int.from_bytes(bytes(value), "big")


def int_to_bytes(value: int, n_bytes: int) -> bytes:
    """The big-endian ``n_bytes``-byte string of a non-negative integer < 2**(8 n_bytes)."""
    return int(value).to_bytes(int(n_bytes), "big")


def words_to_int(words: np.ndarray | int) -> int:
    """The Python integer of one word row (most significant word first) or one uint64."""
    row = np.atleast_1d(np.asarray(words, dtype=np.uint64))
    out = 0
    for word in row.tolist():
        out = (out << _WORD) | int(word)
    return out


def int_to_words(value: int, ell: int) -> np.ndarray:
    """The word row of an integer < 2**ell: shape (ceil(ell / 64),), most significant first."""
    count = n_words(ell)
    mask = (1 << _WORD) - 1
    value = int(value)
    return np.array(
        [(value >> (_WORD * (count - 1 - i))) & mask for i in range(count)], dtype=np.uint64
    )


# ------------------------------------------------------------------- vectorised conversions
def bytes_to_words(values: np.ndarray) -> np.ndarray:
    """Fixed-width byte values (dtype ``S{w}``) as right-aligned words.

    Parameters
    ----------
    values : numpy.ndarray
        1-D array of dtype ``S{w}``.

    Returns
    -------
    numpy.ndarray
        ``np.uint64`` array of shape (n, ceil(8 w / 64)), most significant word first.
    """
    values = np.ascontiguousarray(values)
    if values.dtype.kind != "S" or values.ndim != 1:
        raise TypeError(f"values must be a 1-D bytes array (dtype S<w>), got {values.dtype}")
    width = values.dtype.itemsize
    return _byte_matrix_to_words(values.view(np.uint8).reshape(len(values), width))


def _byte_matrix_to_words(raw: np.ndarray) -> np.ndarray:
    """(n, w) uint8 matrix, big-endian, as (n, ceil(w / 8)) uint64 words."""
    n, width = raw.shape
    count = n_words(8 * width)
    padded = np.zeros((n, 8 * count), dtype=np.uint8)
    padded[:, 8 * count - width :] = raw
    return padded.view(">u8").astype(np.uint64).reshape(n, count)


def words_to_bytes(words: np.ndarray, n_bytes: int) -> np.ndarray:
    """Right-aligned words (or a 1-D uint64 array) as fixed-width bytes of dtype ``S{n_bytes}``.

    The inverse of :func:`bytes_to_words`; the integers must be < 2**(8 n_bytes).
    """
    n_bytes = _check_bits(n_bytes, "n_bytes", 1)
    words = np.asarray(words, dtype=np.uint64)
    if words.ndim == 1:
        words = words[:, None]
    n, count = words.shape
    raw = np.ascontiguousarray(words.astype(">u8")).view(np.uint8).reshape(n, 8 * count)
    if n_bytes > 8 * count:
        raw = np.concatenate([np.zeros((n, n_bytes - 8 * count), np.uint8), raw], axis=1)
    elif np.any(raw[:, : 8 * count - n_bytes]):
        raise ValueError(f"words do not fit in n_bytes={n_bytes} bytes")
    raw = np.ascontiguousarray(raw[:, raw.shape[1] - n_bytes :])
    return raw.view(f"S{n_bytes}").reshape(n)


def _shift_right(words: np.ndarray, shift: int) -> np.ndarray:
    """Multi-word logical right shift of each row by ``shift`` bits (0 <= shift)."""
    n, count = words.shape
    q, r = divmod(shift, _WORD)
    out = np.zeros_like(words)
    if q >= count:
        return out
    out[:, q:] = words[:, : count - q]
    if r:
        carry = np.zeros_like(out)
        carry[:, 1:] = out[:, :-1] << np.uint64(_WORD - r)
        out = (out >> np.uint64(r)) | carry
    return out


def _shift_left(words: np.ndarray, shift: int) -> np.ndarray:
    """Multi-word left shift of each row by ``shift`` bits (bits past the top are lost)."""
    n, count = words.shape
    q, r = divmod(shift, _WORD)
    out = np.zeros_like(words)
    if q >= count:
        return out
    out[:, : count - q] = words[:, q:]
    if r:
        carry = np.zeros_like(out)
        carry[:, :-1] = out[:, 1:] >> np.uint64(_WORD - r)
        out = (out << np.uint64(r)) | carry
    return out


def _check_width(values: np.ndarray, m: int) -> None:
    bits = 8 * values.dtype.itemsize
    if bits != m:
        raise ValueError(f"bytes values of dtype {values.dtype} hold {bits} bits, not m={m}")


def _as_words(values: np.ndarray, m: int) -> np.ndarray:
    """Any accepted representation of m-bit values as an (n, ceil(m / 64)) word matrix."""
    if values.dtype.kind == "S":
        _check_width(values, m)
        return bytes_to_words(values)
    if values.dtype != np.uint64:
        raise TypeError(f"values must be np.uint64 or bytes (S<w>), got dtype {values.dtype}")
    if values.ndim == 1:
        if m > _WORD:
            raise ValueError(f"1-D uint64 values hold at most 64 bits, not m={m}")
        return values[:, None]
    if values.ndim == 2 and values.shape[1] == n_words(m):
        return values
    raise ValueError(f"word values for m={m} must have shape (n, {n_words(m)}), got {values.shape}")


# ------------------------------------------------------------------------------ prefixes
def prefix(values: np.ndarray, m: int, ell: int) -> np.ndarray:
    """The prefix v[0:ell] of every m-bit value, as a right-aligned integer.

    Parameters
    ----------
    values : numpy.ndarray
        The values: 1-D ``np.uint64`` (m <= 64), 1-D bytes ``S{m // 8}`` (m > 64), or an
        (n, ceil(m / 64)) ``np.uint64`` word matrix as returned by :func:`to_words`.
    m : int
        Bits per value.
    ell : int
        Prefix length, 0 <= ell <= m. The empty prefix (ell = 0) is 0 for every value.

    Returns
    -------
    numpy.ndarray
        1-D ``np.uint64`` of length n when ell <= 64, else ``np.uint64`` of shape
        (n, ceil(ell / 64)), most significant word first. (PEM, Section IV-A: group i
        reports the prefix of length gamma + i eta.)

    Raises
    ------
    ValueError
        If ``ell`` is outside [0, m], or the values do not match ``m``.
    """
    m = _check_m(m)
    ell = _check_bits(ell, "ell", 0, m)
    values = np.asarray(values)
    if values.dtype == np.uint64 and values.ndim == 1 and m <= _WORD:
        if ell == 0:
            return np.zeros(len(values), dtype=np.uint64)
        return values >> np.uint64(m - ell)
    if values.dtype.kind == "S" and values.ndim == 1:
        _check_width(values, m)
        if ell == 0:
            return np.zeros(len(values), dtype=np.uint64)
        # Only the first ceil(ell / 8) bytes matter: convert them, then drop the extra bits.
        n_bytes = -(-ell // 8)
        raw = np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)
        words = _shift_right(_byte_matrix_to_words(raw[:, :n_bytes]), 8 * n_bytes - ell)
    else:
        words = _as_words(values, m)
        if ell == 0:
            return np.zeros(len(words), dtype=np.uint64)
        words = _shift_right(words, m - ell)[:, words.shape[1] - n_words(ell) :]
    if ell <= _WORD:
        return np.ascontiguousarray(words[:, -1])
    return np.ascontiguousarray(words)


def to_words(values: np.ndarray, m: int) -> np.ndarray:
    """The whole value as a right-aligned integer: ``prefix(values, m, m)``."""
    return prefix(values, m, m)


def extend(prefixes: np.ndarray, ell: int, eta: int) -> np.ndarray:
    """Every eta-bit extension of every ell-bit prefix: (c << eta) | j, j = 0 .. 2**eta - 1.

    This is PEM's candidate set C_{i-1} x {0,1}^eta (Section IV-A, step 2).

    Parameters
    ----------
    prefixes : numpy.ndarray
        ell-bit prefixes: 1-D ``np.uint64`` when ell <= 64, else (k, ceil(ell / 64)) words.
    ell : int
        Length of the given prefixes (0 <= ell).
    eta : int
        Bits to append (0 <= eta <= MAX_ETA).

    Returns
    -------
    numpy.ndarray
        k * 2**eta prefixes of length ell + eta, prefix-major and j-minor, as a 1-D
        ``np.uint64`` array when ell + eta <= 64, else a (k 2**eta, ceil((ell+eta)/64))
        word matrix (crossing the 64-bit boundary is handled).
    """
    ell = _check_bits(ell, "ell", 0)
    eta = _check_bits(eta, "eta", 0, MAX_ETA)
    prefixes = np.asarray(prefixes)
    if prefixes.dtype != np.uint64:
        raise TypeError(f"prefixes must be np.uint64, got dtype {prefixes.dtype}")
    expected_ndim = 1 if ell <= _WORD else 2
    if prefixes.ndim != expected_ndim or (expected_ndim == 2 and prefixes.shape[1] != n_words(ell)):
        raise ValueError(
            f"prefixes of ell={ell} bits must be "
            + ("1-D" if expected_ndim == 1 else f"of shape (k, {n_words(ell)})")
            + f", got shape {prefixes.shape}"
        )
    new_ell = ell + eta
    suffixes = np.arange(2**eta, dtype=np.uint64)
    if new_ell <= _WORD:
        out = (prefixes[:, None] << np.uint64(eta)) | suffixes[None, :]
        return out.reshape(-1)
    words = prefixes[:, None] if prefixes.ndim == 1 else prefixes
    count = n_words(new_ell)
    widened = np.zeros((len(words), count), dtype=np.uint64)
    widened[:, count - words.shape[1] :] = words
    shifted = _shift_left(widened, eta)
    out = np.repeat(shifted, 2**eta, axis=0)
    out[:, -1] |= np.tile(suffixes, len(words))
    return out


# ------------------------------------------------------------------------------ display
def format_value(value: object, m: int, *, text: bool = False) -> str:
    """A readable rendering of one value or prefix, for diagnostics and reports.

    Bytes are shown as text (``repr`` of the latin-1 decoding, so padding is visible), and
    so are integers when ``text`` is true (m a multiple of 8: e.g. 48-bit AOL queries held
    as uint64); other integers and word rows as ``0x`` hexadecimal with ceil(m / 4) digits.
    """
    m = _check_bits(m, "m", 0)
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        value = value.item()
    if isinstance(value, bytes):
        return repr(bytes(value).decode("latin-1"))
    integer = words_to_int(value) if isinstance(value, np.ndarray) else int(value)
    if text and m % 8 == 0 and m > 0:
        return repr(int_to_bytes(integer, m // 8).decode("latin-1"))
    return f"0x{integer:0{max(1, -(-m // 4))}x}"


def row_keys(values: np.ndarray) -> np.ndarray:
    """A 1-D sortable view of values: integers as they are, word rows as opaque bytes."""
    array = np.asarray(values)
    if array.ndim == 1:
        return array
    rows = np.ascontiguousarray(array)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1])))[:, 0]


#: Odd multiplier of :func:`row_hashes` (the 64-bit golden ratio).
_MIX = np.uint64(0x9E3779B97F4A7C15)


def row_hashes(rows: np.ndarray) -> np.ndarray:
    """A uint64 digest of each row of a 2-D uint64 word matrix (xor, multiply, xor-shift
    per word).  Equal rows have equal digests; distinct rows rarely do, and every user of
    it checks the rows themselves where digests collide."""
    words = np.asarray(rows, dtype=np.uint64)
    digest = np.full(words.shape[0], _MIX, dtype=np.uint64)
    for column in range(words.shape[1]):
        digest ^= words[:, column]
        digest *= _MIX
        digest ^= digest >> np.uint64(29)
    return digest
