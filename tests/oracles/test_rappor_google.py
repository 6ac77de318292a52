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

from ldp.oracles.rappor import (
    RAPPOR,
    RapporReports,
    bloom_positions,
    rappor_epsilon_inf,
    rappor_epsilon_one,
)
from ldp.oracles.rappor.google import (
    GoogleClient,
    collect,
    decode_strings,
    google_rappor,
    prr_masks,
    quantized_f,
)
from ldp.validation import ParameterError


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
    with pytest.raises(ParameterError, match="client must be one of"):
        google_rappor(client="go")


# --- the realised f of each client ---------------------------------------------------------
@pytest.mark.parametrize(
    ("client", "f", "p", "q"),
    [
        ("python", 58 / 128, 0.39, 0.61),  # 128 x 0.45 = 57.6, rounded up
        ("cpp", 57 / 128, 99 / 256, 156 / 256),  # rounded down; 256 p = 99.84, 256 q = 156.16
        (None, 0.45, 0.39, 0.61),
    ],
)
def test_each_client_realises_its_own_coins_and_is_accounted_on_them(client, f, p, q) -> None:
    oracle = google_rappor(f=0.45, p=0.39, q=0.61, client=client)
    realised = oracle.realised
    assert (realised["f"], realised["p"], realised["q"]) == pytest.approx((f, p, q), abs=2**-52)
    assert realised["epsilon_inf"] == rappor_epsilon_inf(oracle.f_realised, 2)
    assert realised["epsilon_one"] == rappor_epsilon_one(realised["f"], p, q, 2)
    assert oracle.epsilon >= realised["epsilon_one"]


def test_the_cpp_client_rounds_a_32_bit_float() -> None:
    """f = 3/128 - 1e-12 is 2.99999... x 1/128 as a double but exactly 3/128 as the C++
    client's 32-bit float, so that client realises 3/128 (a double would say 2/128)."""
    f = 3 / 128 - 1e-12
    assert google_rappor(f=f, client="cpp").f_realised == 3 / 128
    assert google_rappor(f=f, client="python").f_realised == 3 / 128
    with pytest.raises(ParameterError, match="uint8_t threshold") as caught:
        google_rappor(f=0.5, p=0.0, q=1.0, client="cpp")
    assert caught.value.name == "q"


def test_the_rounding_trap_unbiased_bits_need_the_realised_f() -> None:
    """One-time RAPPOR with f = 0.001: Google's Python client randomizes w.p. 1/128, 7.8
    times more.  With the client's f the unbiased bit counts t match the true Bloom bits M
    (their sum, standardised by its exact SD, is N(0, 1)); with f as configured (client
    None) they are off by about 100 SDs: the decoder must use the realised f."""
    truth = {b"alpha": 8000, b"beta": 5000, b"gamma": 3500, b"delta": 2000, b"eps": 1500}
    values = [v for v, c in truth.items() for _ in range(c)]
    settings = {"k": 32, "m": 32, "f": 0.001, "p": 0.0, "q": 1.0}
    reports, clients = collect(google_rappor(**settings), values, seed_for("google", "trap"))
    blooms = [client.bloom(value) for client, value in zip(clients, values, strict=True)]
    bloom = RapporReports.from_integers(reports.cohorts, np.array(blooms), 32)
    z = {}
    for client in ("python", None):
        oracle = google_rappor(**settings, client=client)
        set_bits = oracle.cohort_counts(bloom).ones
        counts = oracle.cohort_counts(reports)
        t = oracle.unbiased_bits(counts)
        a, b = oracle.q_star * (1 - oracle.q_star), oracle.p_star * (1 - oracle.p_star)
        unset = counts.reports[:, None] - set_bits
        variance = (set_bits * a + unset * b) / (oracle.q_star - oracle.p_star) ** 2
        z[client] = float((t - set_bits).sum() / math.sqrt(variance.sum()))
    assert abs(z["python"]) < z_critical(ALPHA, 1)
    assert abs(z[None]) > z_critical(ALPHA, 1), z


def test_a_client_whose_prr_would_not_realise_the_declared_f_is_refused() -> None:
    biased = RAPPOR(epsilon=5.0, domain_size=2, k=16, f=0.45, p=0.39, q=0.61)  # f as given
    with pytest.raises(ParameterError, match=r"client='python'") as caught:
        GoogleClient(biased, 0, b"s")
    assert caught.value.name == "f"
    GoogleClient(google_rappor(f=0.45, p=0.39, q=0.61), 0, b"s")  # the realised f: fine
    GoogleClient(RAPPOR(epsilon=5.0, domain_size=2, k=16, f=0.5), 0, b"s")  # 64/128 exactly
    with pytest.raises(ParameterError, match="C\\+\\+ client") as caught:
        GoogleClient(google_rappor(f=0.45, p=0.39, q=0.61, client="cpp"), 0, b"s")
    assert caught.value.name == "client"


# --- no noise, on request only ---------------------------------------------------------------
def test_no_noise_needs_an_explicit_opt_in() -> None:
    with pytest.raises(ParameterError, match=r"allow_no_noise=True"):
        google_rappor(f=0.0, p=0.0, q=1.0)
    with pytest.raises(ParameterError, match=r"allow_no_noise=True"):
        RAPPOR(epsilon=5.0, domain_size=4, f=0.0, p=0.0, q=1.0)
    with pytest.raises(ParameterError, match=r"allow_no_noise=True"):
        RAPPOR(epsilon=math.inf, domain_size=4, f=0.0, p=0.0, q=1.0)
    with pytest.raises(ParameterError, match=r"math.inf"):
        RAPPOR(epsilon=5.0, domain_size=4, f=0.0, p=0.0, q=1.0, allow_no_noise=True)
    with pytest.raises(ParameterError, match=r"allow_no_noise=True"):
        google_rappor(f=0.001, p=0.001, q=0.75, client="cpp")  # f, p both round to 0


def test_without_noise_a_report_is_the_bloom_filter() -> None:
    """google/rappor's encoding tests: with f = 0, p = 0, q = 1 the report is the filter."""
    oracle = google_rappor(f=0.0, p=0.0, q=1.0, allow_no_noise=True)
    assert oracle.epsilon == math.inf and oracle.epsilon_one == math.inf
    client = GoogleClient(oracle, 5, b"secret")
    rng = seed_for("google", "no-noise")
    for value in (b"abc", b"v1", b"rappor"):
        expected = sum(1 << b for b in bloom_positions(value, 5, 2, 16))
        assert client.permanent(value) == client.report(value, rng) == expected


def test_string_candidates_are_refused_by_integer_decode_with_the_way_out() -> None:
    oracle = google_rappor()
    reports, _ = collect(oracle, [b"a", b"b"], seed_for("google", "strings"))
    with pytest.raises(TypeError, match="decode_strings"):
        oracle.decode(reports, ["a", "b"])
    result = decode_strings(oracle, reports, ["a", "b"])  # str: hashed as UTF-8
    assert result.estimates.shape == (2,)


def test_the_reference_clients_own_known_answer() -> None:
    """google/rappor's Python client test encodes "abc" (cohort 0, secret "secret", k = 16,
    h = 2, f = 0.5, p = 0.5, q = 0.75) with IRR coins cycling through 0.0, 0.6, 0.0 (a bit
    is set when its coin is below p, resp. q) and expects the report 64493.  The same MD5
    filter and HMAC PRR here, with those IRR coins, give 64493."""
    client = GoogleClient(google_rappor(k=16, h=2, m=64, f=0.5, p=0.5, q=0.75), 0, b"secret")
    prr = client.permanent(b"abc")
    coins = [(0.0, 0.6, 0.0)[i % 3] for i in range(16)]
    p_bits = sum(int(coin < 0.5) << i for i, coin in enumerate(coins))
    q_bits = sum(int(coin < 0.75) << i for i, coin in enumerate(coins))
    assert (p_bits & ~prr) | (q_bits & prr) == 64493
