"""RAPPOR as Google's deployed client encodes it, so that its reports decode here.

Citations ``[RAPPOR]`` are to Erlingsson, Pihur, Korolova, CCS 2014; the encoding details
are those of the reference client (google/rappor, ``client/python``), restated here:

* **Bloom filter**: the first h bytes of MD5(4-byte big-endian cohort || value bytes), each
  mod k, set bit i of an integer (:func:`ldp.oracles.rappor.bloom_positions`); k <= 32.
* **PRR**: D = HMAC-SHA256(client secret, the filter as 4 big-endian bytes).  Byte i of D
  decides bit i: its lowest bit is the uniform bit, and its upper 7 bits r in [0, 128)
  randomize the bit when r < 128 f.  So bit i is randomized w.p. ⌈128 f⌉/128: f is
  effectively quantized up to a multiple of 1/128 (:func:`quantized_f`), and that is the f
  this module declares and the decoder uses.  The PRR is a deterministic function of
  (secret, filter): memoized per (client, value) without storing anything.
* **IRR**: fresh per report, a 0 becomes 1 w.p. p and a 1 stays 1 w.p. q; the report is the
  integer whose bit i is the IRR's bit i.  Here the IRR coins come from the caller's
  ``numpy.random.Generator`` on the exact 53-bit grid (:mod:`ldp.oracles.exact`); Google's
  client draws them from the operating system's random source.

Privacy.  HMAC-SHA256 under a secret key is modelled as a random function (the reference
implementation's assumption): then the PRR bits are independent, randomized w.p.
⌈128 f⌉/128 with a fair uniform bit, and ε∞, ε₁ are those of :class:`~ldp.oracles.rappor.RAPPOR`
with the quantized f (``google_rappor(..., client="python")``, the default).  Google's C++
client truncates instead, ⌊128 f⌋/128 (``client="cpp"``), its default random source realises
p and q as ⌊256 x⌋/256, and its PRR hashes an HMAC message this module does not
reproduce: ``client="cpp"`` serves to decode and account for its reports, never to encode
them (:class:`GoogleClient` refuses it).  Two reports of a client with the same filter
share their PRR; this is what bounds a longitudinal observer by ε∞.

The Generator-driven path (:meth:`RAPPOR.perturb`, :class:`~ldp.oracles.rappor.RapporClients`)
draws the same distribution with exact coins and is what the simulations use.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldp.oracles.rappor.decoder import RapporDecoding, decode
from ldp.oracles.rappor.protocol import (
    CLIENTS,
    RAPPOR,
    CohortCounts,
    RapporReports,
    bloom_positions,
    bloom_table,
    rappor_epsilon_one,
    realised_f,
    realised_irr,
)
from ldp.validation import ParameterError, check_generator, check_int

__all__ = ["GoogleClient", "collect", "decode_strings", "google_rappor", "prr_masks", "quantized_f"]

#: HMAC-SHA256 gives 32 bytes, one per bit, and reports are 32-bit integers.
MAX_BITS = 32


def quantized_f(f: float) -> float:
    """The f Google's Python client realises: ⌈128 f⌉/128 (7 random bits compared with 128 f).

    Parameters
    ----------
    f : float
        The configured f, in [0, 1].

    Returns
    -------
    float
        ``realised_f(f, "python")`` (:func:`ldp.oracles.rappor.realised_f`).
    """
    if not 0.0 <= f <= 1.0:
        raise ParameterError("f", f, "in [0, 1]")
    return realised_f(f, "python")


def google_rappor(
    *,
    k: int = 16,
    h: int = 2,
    m: int = 64,
    f: float = 0.5,
    p: float = 0.5,
    q: float = 0.75,
    domain_size: int = 2,
    client: str = "python",
    allow_no_noise: bool = False,
) -> RAPPOR:
    """The :class:`~ldp.oracles.rappor.RAPPOR` that describes a Google client's reports.

    Parameters
    ----------
    k, h, m, f, p, q
        google/rappor's parameters (its params CSV ``k,h,m,p,q,f``); the defaults are its
        client library's defaults.
    domain_size : int, default 2
        Only for the integer-valued API; Google's clients report strings
        (:class:`GoogleClient`, :func:`decode_strings`).
    client : {"python", "cpp"} or None, default "python"
        Whose rounding the reports follow (:func:`ldp.oracles.rappor.realised_f`):
        ``"python"`` ⌈128 f⌉/128, ``"cpp"`` ⌊128 f⌋/128 (and p, q rounded down to 1/256,
        :func:`ldp.oracles.rappor.realised_irr`), None f itself (google/rappor's R
        simulator).  Only ``"python"`` can encode (:class:`GoogleClient`); the others
        describe reports made elsewhere, for decoding and privacy accounting.
    allow_no_noise : bool, default False
        Allow f = 0 with p = 0 or q = 1 (ε = ∞), as Google's encoding tests do.

    Returns
    -------
    RAPPOR
        Its ``f_realised`` is the client's, its ``epsilon`` the realised ε₁ (``math.inf``
        without noise), its ``realised`` the probabilities the reports follow.

    Examples
    --------
    >>> oracle = google_rappor(f=0.45, p=0.39, q=0.61)
    >>> oracle.f_realised == 58 / 128
    True
    """
    k = check_int(k, "k", minimum=1, maximum=MAX_BITS)
    if client is not None and client not in CLIENTS:
        raise ParameterError("client", client, f"one of {CLIENTS}")
    if not 0.0 <= f <= 1.0:
        raise ParameterError("f", f, "in [0, 1]")
    realised_p, realised_q = realised_irr(p, client), realised_irr(q, client)
    epsilon = rappor_epsilon_one(realised_f(f, client), realised_p, realised_q, h)
    if math.isfinite(epsilon):
        epsilon *= 1 + 1e-12  # the realised coins' ε₁, with room for its rounding
    elif not allow_no_noise:
        epsilon = 1.0  # RAPPOR refuses the parameters, naming them and how to opt in
    # else: epsilon = math.inf, which RAPPOR accepts with allow_no_noise
    return RAPPOR(
        epsilon=epsilon,
        domain_size=max(domain_size, 2),
        k=k,
        h=h,
        m=m,
        f=f,
        p=p,
        q=q,
        client=client,
        allow_no_noise=allow_no_noise and not math.isfinite(epsilon),
    )


def prr_masks(secret: bytes, bloom: int, f: float, k: int) -> tuple[int, int]:
    """(uniform, randomize): the PRR's two masks from HMAC-SHA256(secret, filter).

    Bit i of ``uniform`` is the lowest bit of digest byte i; bit i of ``randomize`` is set
    when that byte's upper 7 bits are below 128 f.
    """
    digest = hmac.new(secret, bloom.to_bytes(4, "big"), hashlib.sha256).digest()
    uniform = randomize = 0
    for i in range(k):
        uniform |= (digest[i] & 1) << i
        randomize |= (int(digest[i] >> 1 < 128 * f)) << i
    return uniform, randomize


@dataclass(frozen=True)
class GoogleClient:
    """One client of Google's deployment (its Python client's encoding): a cohort and a
    secret, for life.

    Parameters
    ----------
    oracle : RAPPOR
        The parameters, from :func:`google_rappor` (k <= 32, and an f whose realised value
        is the Python client's ⌈128 f⌉/128, so that the decoder's p*, q* are the truth).
    cohort : int
        The client's cohort, in [0, m).
    secret : bytes
        The client's HMAC key: its PRR is HMAC-SHA256(secret, filter), memoized for free.

    Raises
    ------
    ldp.validation.ParameterError
        k > 32, ``client="cpp"`` (its HMAC message is not reproduced here), or an oracle
        whose declared f the Python client's PRR would not realise.

    Examples
    --------
    >>> import numpy as np
    >>> client = GoogleClient(google_rappor(), cohort=3, secret=b"key")
    >>> 0 <= client.report(b"v1", np.random.default_rng(0)) < 2**16
    True
    """

    oracle: RAPPOR
    cohort: int
    secret: bytes

    def __post_init__(self) -> None:
        oracle = self.oracle
        if oracle.k > MAX_BITS:
            raise ParameterError("k", oracle.k, f"<= {MAX_BITS}", "Google's 32-bit reports")
        if oracle.client == "cpp":
            raise ParameterError(
                "client",
                "cpp",
                "'python'",
                "this library does not reproduce the HMAC message of Google's C++ client; "
                "client='cpp' describes its reports for decoding and accounting only",
            )
        if oracle.f is None or oracle.f_realised != quantized_f(oracle.f):
            raise ParameterError(
                "f",
                oracle.f,
                "realised as Google's Python client realises it",
                f"its PRR randomizes w.p. ceil(128 f)/128, the oracle declares f = "
                f"{oracle.f_realised!r}: build it with google_rappor(f=..., client='python')",
            )
        check_int(self.cohort, "cohort", minimum=0, maximum=self.oracle.m - 1)
        if not isinstance(self.secret, bytes) or not self.secret:
            raise TypeError("secret must be non-empty bytes")

    def bloom(self, value: bytes) -> int:
        """The Bloom filter of a value as an integer (bit i = position i)."""
        filter_bits = 0
        for position in bloom_positions(value, self.cohort, self.oracle.h, self.oracle.k):
            filter_bits |= 1 << position
        return filter_bits

    def permanent(self, value: bytes) -> int:
        """The PRR of a value: B' = (B & ~randomize) | (uniform & randomize)."""
        bloom = self.bloom(value)
        uniform, randomize = prr_masks(self.secret, bloom, self.oracle.f, self.oracle.k)
        return (bloom & ~randomize) | (uniform & randomize)

    def report(self, value: bytes, rng: np.random.Generator) -> int:
        """One report: the IRR of the memoized PRR, as an integer."""
        rng = check_generator(rng)
        prr = self.permanent(value)
        k = self.oracle.k
        bits = (prr >> np.arange(k, dtype=np.int64)) & 1
        coins = self.oracle.instantaneous(bits[None, :].astype(bool), rng)[0]
        return int(np.sum(coins.astype(np.int64) << np.arange(k, dtype=np.int64)))


def collect(
    oracle: RAPPOR, values: list[bytes], rng: np.random.Generator
) -> tuple[RapporReports, list[GoogleClient]]:
    """One report from each of ``len(values)`` new Google clients.

    Parameters
    ----------
    oracle : RAPPOR
        The parameters (:func:`google_rappor`).
    values : list of bytes
        Each client's value.
    rng : numpy.random.Generator
        Draws each client's cohort (uniform), its 32-byte secret, and the IRR coins.

    Returns
    -------
    (RapporReports, list of GoogleClient)
        The reports (cohort and IRR bits) and the clients that made them.
    """
    rng = check_generator(rng)
    cohorts = rng.integers(0, oracle.m, size=len(values))
    clients = [GoogleClient(oracle, int(c), rng.bytes(32)) for c in cohorts]
    prr = np.array([cl.permanent(v) for cl, v in zip(clients, values, strict=True)])
    bits = ((prr[:, None] >> np.arange(oracle.k)) & 1).astype(bool)
    irr = oracle.instantaneous(bits, rng)  # the same coins as GoogleClient.report, batched
    integers = (irr.astype(np.int64) << np.arange(oracle.k, dtype=np.int64)).sum(axis=1)
    return RapporReports.from_integers(cohorts, integers, oracle.k), clients


def decode_strings(
    oracle: RAPPOR,
    reports: RapporReports | CohortCounts,
    candidates: Sequence[str | bytes],
    **options: Any,
) -> RapporDecoding:
    """Decode reports against candidate strings ([RAPPOR] Sec. 4).

    Parameters
    ----------
    oracle : RAPPOR
        The parameters the reports follow (:func:`google_rappor`), with the realised f.
    reports : RapporReports or CohortCounts
        The reports, or their ones per (cohort, bit) and reports per cohort.
    candidates : sequence of str or bytes
        The candidate strings; a ``str`` is hashed as its UTF-8 bytes.
    **options
        ``alpha``, ``penalty``: :func:`ldp.oracles.rappor.decoder.decode`.

    Returns
    -------
    RapporDecoding
        One entry per candidate, in the order given.
    """
    counts = reports if isinstance(reports, CohortCounts) else oracle.cohort_counts(reports)
    positions = bloom_table(
        [c.encode("utf-8", "surrogateescape") if isinstance(c, str) else c for c in candidates],
        oracle.m,
        oracle.h,
        oracle.k,
    )
    return decode(oracle, counts, positions, **options)
