"""RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014), as one package.

* :mod:`~ldp.oracles.rappor.protocol`: the oracle (:class:`RAPPOR`), its closed forms
  (ε∞, ε₁, p*, q*), the Bloom encoding of Google's deployed client, the memoized
  permanent responses (:class:`RapporClients`) and both engines;
* :mod:`~ldp.oracles.rappor.decoder`: the paper's decoder (LASSO, least squares, standard
  errors, Bonferroni cut-off) over per-cohort bit counts;
* :mod:`~ldp.oracles.rappor.google`: Google's client byte for byte (HMAC-SHA256 permanent
  response, integer reports) and the strings it reports.

Google's files (params, reports, maps, counts) are read and written by :mod:`ldp.io.rappor`,
outside the oracles.  Everything public is importable from this package.
"""

from ldp.oracles.rappor.decoder import RapporDecoding, decode, design_columns, design_matrix
from ldp.oracles.rappor.google import (
    GoogleClient,
    collect,
    decode_strings,
    google_rappor,
    prr_masks,
    quantized_f,
)
from ldp.oracles.rappor.protocol import *  # noqa: F403  (the oracle module's public names)
from ldp.oracles.rappor.protocol import __all__ as _protocol

__all__ = [
    *_protocol,
    "GoogleClient",
    "RapporDecoding",
    "collect",
    "decode",
    "decode_strings",
    "design_columns",
    "design_matrix",
    "google_rappor",
    "prr_masks",
    "quantized_f",
]
