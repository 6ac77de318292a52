"""MD5 (RFC 1321) of many short messages at once, vectorised over numpy arrays.

RAPPOR's Bloom positions are bytes of MD5(4-byte big-endian cohort || value) (the
deployed client's encoding, :func:`ldp.oracles.rappor.bloom_positions`).  A decoder tables
them for every candidate and cohort: 10^4 candidates x 128 cohorts is 1.28 million
digests, which ``hashlib`` computes one Python call at a time.  A message of at most 55
bytes fits one 64-byte MD5 block, so its digest is the 64 steps of RFC 1321 Sec. 3.4 on
one block; here every step runs on all messages at once (uint32 arithmetic wraps modulo
2^32, as MD5's additions do).  Longer messages are left to ``hashlib`` by the caller.
``tests/oracles/test_rappor.py`` checks the digests against ``hashlib.md5``.
"""

from __future__ import annotations

import numpy as np

#: The longest message that fits one block (RFC 1321 Sec. 3.1-3.2: 0x80 and the 8-byte length).
MAX_ONE_BLOCK = 55

# RFC 1321 Sec. 3.4: T[i] = floor(2^32 |sin(i + 1)|), the rotations s and the word order g.
_T = np.floor(np.abs(np.sin(np.arange(1, 65))) * 2.0**32).astype(np.uint32)
_S = np.array([7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4)
_G = np.array(
    [i for i in range(16)]
    + [(5 * i + 1) % 16 for i in range(16)]
    + [(3 * i + 5) % 16 for i in range(16)]
    + [(7 * i) % 16 for i in range(16)]
)
_INITIAL = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476)


def one_block_words(messages: list[bytes]) -> np.ndarray:
    """The 16 little-endian words of each message's single padded block, (len, 16) uint32.

    Padding (RFC 1321 Sec. 3.1-3.2): the byte 0x80, zeros, then the length in bits as a
    64-bit little-endian integer in bytes 56-63.
    """
    blocks = np.zeros((len(messages), 64), dtype=np.uint8)
    for row, message in enumerate(messages):
        size = len(message)
        if size > MAX_ONE_BLOCK:
            raise ValueError(f"messages must be at most {MAX_ONE_BLOCK} bytes, got {size}")
        blocks[row, :size] = np.frombuffer(message, dtype=np.uint8)
        blocks[row, size] = 0x80
        blocks[row, 56:64] = np.frombuffer((8 * size).to_bytes(8, "little"), dtype=np.uint8)
    return blocks.view("<u4").astype(np.uint32)


def digest_words(words: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """MD5's output words (A, B, C, D) of one-block messages given as 16 word arrays.

    ``words[g]`` is word g of every message (arrays broadcasting to one shape: e.g. word 0
    per cohort (m, 1) and words 1-15 per value (1, C)).  The digest's bytes are A, B, C, D
    in little-endian order.  The round functions are RFC 1321's in equivalent forms with
    fewer operations (F = D ^ (B & (C ^ D)), G = C ^ (D & (B ^ C))), computed in place.
    """
    shape = np.broadcast_shapes(*(np.shape(w) for w in words))
    a, b, c, d = (np.full(shape, v, dtype=np.uint32) for v in _INITIAL)
    mixed, spare = np.empty(shape, np.uint32), np.empty(shape, np.uint32)
    for i in range(64):
        if i < 16:
            np.bitwise_xor(c, d, out=mixed)
            mixed &= b
            mixed ^= d
        elif i < 32:
            np.bitwise_xor(b, c, out=mixed)
            mixed &= d
            mixed ^= c
        elif i < 48:
            np.bitwise_xor(b, c, out=mixed)
            mixed ^= d
        else:
            np.invert(d, out=mixed)
            mixed |= b
            mixed ^= c
        mixed += a
        mixed += words[_G[i]] + _T[i]  # the small per-message word plus the constant
        np.right_shift(mixed, np.uint32(32 - _S[i]), out=spare)
        mixed <<= np.uint32(_S[i])
        mixed |= spare
        mixed += b
        # a <- d, d <- c, c <- b, b <- b + rotated: reuse a's array for the next "mixed"
        a, d, c, b, mixed = d, c, b, mixed, a
    return tuple(x + np.uint32(v) for x, v in zip((a, b, c, d), _INITIAL, strict=True))


def digest_bytes(state: tuple[np.ndarray, ...], count: int) -> np.ndarray:
    """The first ``count`` digest bytes of every message (shape (..., count) uint8)."""
    stacked = np.stack([np.asarray(x, dtype="<u4") for x in state], axis=-1)
    return stacked.view(np.uint8).reshape(*stacked.shape[:-1], 16)[..., :count]
