"""ldp.bits against a slow pure-Python reference (Python ints and int.from_bytes)."""

from __future__ import annotations

import numpy as np
import pytest

from ldp import bits


def _reference_prefix(value: int, m: int, ell: int) -> int:
    return value >> (m - ell)


def _as_python_ints(result: np.ndarray) -> list[int]:
    if result.ndim == 1:
        return [int(x) for x in result.tolist()]
    return [bits.words_to_int(row) for row in result]


def _random_uint64(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    high = np.uint64(2**m - 1) if m < 64 else np.iinfo(np.uint64).max
    return rng.integers(0, high, size=n, dtype=np.uint64, endpoint=True)


def _random_bytes(rng: np.random.Generator, n: int, n_bytes: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n, n_bytes), dtype=np.uint8)
    raw[:3, -1] = 0  # trailing NUL bytes, which numpy strips on item access
    raw[3, :] = 0
    raw[4, :] = 255
    return np.ascontiguousarray(raw).view(f"S{n_bytes}").reshape(n)


@pytest.mark.parametrize("m", [1, 7, 16, 48, 63, 64])
def test_prefix_uint64_every_ell(m: int) -> None:
    rng = np.random.default_rng(m)
    values = _random_uint64(rng, 50, m)
    values[0] = 0
    values[1] = 2**m - 1
    python = [int(v) for v in values.tolist()]
    for ell in range(1, m + 1):
        got = bits.prefix(values, m, ell)
        assert got.dtype == np.uint64 and got.shape == (50,)
        assert _as_python_ints(got) == [_reference_prefix(v, m, ell) for v in python]
    assert np.array_equal(bits.to_words(values, m), values)


@pytest.mark.parametrize("n_bytes", [6, 8, 9, 20])
def test_prefix_bytes_every_ell(n_bytes: int) -> None:
    m = 8 * n_bytes
    rng = np.random.default_rng(n_bytes)
    values = _random_bytes(rng, 40, n_bytes)
    python = [int.from_bytes(bytes(row), "big") for row in values.view(np.uint8).reshape(40, -1)]
    for ell in range(1, m + 1):
        got = bits.prefix(values, m, ell)
        expected_shape = (40,) if ell <= 64 else (40, -(-ell // 64))
        assert got.dtype == np.uint64 and got.shape == expected_shape, ell
        assert _as_python_ints(got) == [_reference_prefix(v, m, ell) for v in python], ell
    words = bits.to_words(values, m)
    assert np.array_equal(bits.words_to_bytes(words, n_bytes), values)
    assert np.array_equal(bits.bytes_to_words(values), words.reshape(40, -1))


def test_prefix_of_word_matrix_matches_bytes() -> None:
    rng = np.random.default_rng(160)
    values = _random_bytes(rng, 30, 20)
    words = bits.to_words(values, 160)
    for ell in (1, 63, 64, 65, 127, 128, 129, 160):
        assert np.array_equal(bits.prefix(words, 160, ell), bits.prefix(values, 160, ell))


def test_prefix_zero_and_range_errors() -> None:
    values = np.array([5, 7], dtype=np.uint64)
    assert np.array_equal(bits.prefix(values, 3, 0), np.zeros(2, np.uint64))
    for ell in (-1, 4):
        with pytest.raises(ValueError, match="ell"):
            bits.prefix(values, 3, ell)
    with pytest.raises(ValueError, match="m"):
        bits.prefix(np.array([b"abc"], dtype="S3"), 32, 3)
    with pytest.raises(ValueError, match="multiple of 8"):
        bits.prefix(values, 70, 3)
    with pytest.raises(TypeError):
        bits.prefix(np.array([1, 2], dtype=np.int32), 8, 3)


@pytest.mark.parametrize(
    ("ell", "eta"),
    [(0, 3), (5, 2), (60, 4), (62, 2), (64, 1), (63, 5), (64, 4), (100, 3), (126, 4), (128, 5)],
)
def test_extend_against_reference(ell: int, eta: int) -> None:
    rng = np.random.default_rng(ell * 100 + eta)
    python = [int(rng.integers(0, 2**62)) << max(0, ell - 62) for _ in range(5)]
    python = [p % (1 << ell) if ell else 0 for p in python]
    python[0] = (1 << ell) - 1
    if ell <= 64:
        prefixes = np.array(python, dtype=np.uint64)
    else:
        prefixes = np.stack([bits.int_to_words(p, ell) for p in python])
    got = bits.extend(prefixes, ell, eta)
    expected = [(c << eta) | j for c in python for j in range(2**eta)]
    assert _as_python_ints(got) == expected
    new = ell + eta
    assert got.shape == ((len(expected),) if new <= 64 else (len(expected), -(-new // 64)))


def test_extend_then_prefix_round_trip() -> None:
    """The prefixes of the extensions are the prefixes extended (PEM, Section IV-A)."""
    rng = np.random.default_rng(3)
    values = _random_bytes(rng, 20, 20)
    for ell, eta in [(60, 6), (62, 4), (120, 9)]:
        extended = bits.extend(bits.prefix(values, 160, ell), ell, eta)
        longer = _as_python_ints(bits.prefix(values, 160, ell + eta))
        candidates = set(_as_python_ints(extended))
        assert all(v in candidates for v in longer)


def test_int_bytes_conversions() -> None:
    assert bits.bytes_to_int(b"\x01\x00") == 256
    assert bits.int_to_bytes(256, 3) == b"\x00\x01\x00"
    assert bits.words_to_int(bits.int_to_words(2**130 + 5, 160)) == 2**130 + 5
    with pytest.raises(ValueError, match="n_bytes"):
        bits.words_to_bytes(np.array([2**20], dtype=np.uint64), 2)
    assert bits.format_value(np.uint64(255), 16) == "0x00ff"
    assert bits.format_value(b"ab  ", 32) == "'ab  '"
    assert bits.format_value(bits.bytes_to_int(b"www.ab"), 48, text=True) == "'www.ab'"
    assert bits.format_value(bits.int_to_words(1, 65), 65) == "0x" + "0" * 16 + "1"
