"""Google's RAPPOR encoding (google/rappor's client): MD5 Bloom bits, HMAC-SHA256 PRR with
f quantized to 1/128, integer IRR reports, decoded by ``ldp``'s decoder.

Statistical assertions at ALPHA = 1e-4 (``oracle_testing``), fixed seeds.
"""

from __future__ import annotations

import hashlib
import hmac
import math

import numpy as np
import pytest
from oracle_testing import ALPHA, seed_for, z_critical

from ldp.oracles.rappor import bloom_positions, rappor_epsilon_inf
from ldp.oracles.rappor_google import (
    GoogleClient,
    collect,
    decode_strings,
    google_rappor,
    prr_masks,
    quantized_f,
)


def test_f_is_quantized_up_to_128ths() -> None:
    assert quantized_f(0.5) == 0.5
    assert quantized_f(0.45) == 58 / 128  # 57.6 -> 58 values of r in [0, 128) are below
    assert quantized_f(0.0) == 0.0
    oracle = google_rappor(f=0.45, p=0.39, q=0.61)
    assert oracle.f_realised == 58 / 128  # declared exactly
    assert oracle.epsilon_inf == pytest.approx(rappor_epsilon_inf(58 / 128, 2), rel=1e-14)
    assert oracle.epsilon_inf < rappor_epsilon_inf(0.45, 2)  # quantizing up is more private


def test_prr_masks_read_the_hmac_bytes() -> None:
    secret, bloom = b"secret", 0b1000000000000101
    digest = hmac.new(secret, bloom.to_bytes(4, "big"), hashlib.sha256).digest()
    uniform, randomize = prr_masks(secret, bloom, 0.25, 16)
    for i in range(16):
        assert (uniform >> i) & 1 == digest[i] & 1
        assert (randomize >> i) & 1 == int((digest[i] >> 1) < 32)


def test_client_filter_and_memoized_prr() -> None:
    oracle = google_rappor()
    client = GoogleClient(oracle, 7, b"k" * 32)
    expected = sum(1 << b for b in set(bloom_positions(b"abc", 7, 2, 16)))
    assert client.bloom(b"abc") == expected
    assert client.permanent(b"abc") == client.permanent(b"abc")  # deterministic: memoized
    rng = seed_for("google", "irr")
    reports = {client.report(b"abc", rng) for _ in range(50)}
    assert len(reports) > 1  # the IRR is fresh


def test_prr_bits_follow_the_quantized_f() -> None:
    """Over 4000 secrets x 16 bits: randomized w.p. ⌈128 f⌉/128, uniform bit fair (α/2)."""
    rng = seed_for("google", "prr")
    f = 0.3
    randomized = ones = 0
    trials = 4000
    for _ in range(trials):
        uniform, randomize = prr_masks(rng.bytes(32), int(rng.integers(1 << 16)), f, 16)
        randomized += bin(randomize).count("1")
        ones += bin(uniform).count("1")
    cells, f_q = 16 * trials, quantized_f(f)
    z_f = (randomized - cells * f_q) / math.sqrt(cells * f_q * (1 - f_q))
    z_u = (ones - cells / 2) / math.sqrt(cells / 4)
    assert max(abs(z_f), abs(z_u)) < z_critical(ALPHA, 2)


def test_googles_reports_decode_here() -> None:
    """20,000 Google clients report one of 5 strings (plus 15 unused candidates): the decoder
    detects the 5, each estimate within z_critical SEs of the truth (Bonferroni over 5)."""
    oracle = google_rappor(k=32, m=32, f=0.25, p=0.25, q=0.75)
    rng = seed_for("google", "decode")
    truth = {b"alpha": 8000, b"beta": 5000, b"gamma": 3500, b"delta": 2000, b"eps": 1500}
    values = [v for v, c in truth.items() for _ in range(c)]
    reports, _ = collect(oracle, values, rng)
    assert reports.as_integers().max() < 1 << 32
    candidates = list(truth) + [f"other{i}".encode() for i in range(15)]
    result = decode_strings(oracle, reports, candidates)
    assert result.detected[:5].all()
    z = (result.estimates[:5] - np.array(list(truth.values()))) / result.std_errors[:5]
    assert np.abs(z).max() < z_critical(ALPHA, 5), z


def test_bad_clients_are_refused() -> None:
    oracle = google_rappor()
    with pytest.raises(ValueError, match="cohort must be <= 63"):
        GoogleClient(oracle, 64, b"s")
    with pytest.raises(TypeError, match="secret must be non-empty bytes"):
        GoogleClient(oracle, 0, "s")
    with pytest.raises(ValueError, match="k must be <= 32"):
        google_rappor(k=64)
