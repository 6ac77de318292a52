"""The frequency oracles, each with a reports and a sampled engine.

USENIX'17 Table 1's seven are imported by name below; every module of this package is
imported too, so a protocol added as one new module (registered with
:func:`ldp.registry.register`) is available as ``ldp.oracles.<Name>`` and by name in the
harness without touching this file.

>>> import numpy as np
>>> from ldp.oracles import OLH
>>> oracle = OLH(epsilon=1.0, domain_size=1024)
>>> reports = oracle.perturb(np.zeros(1000, dtype=np.int64), np.random.default_rng(0))
>>> oracle.estimate(reports).shape
(1024,)
"""

from ldp import registry as _registry
from ldp.oracles.base import FrequencyOracle, PureOracle
from ldp.oracles.direct import GRR
from ldp.oracles.histogram import SHE, THE
from ldp.oracles.local_hashing import BLH, OLH, HashReports
from ldp.oracles.rappor import RapporReports
from ldp.oracles.rappor.google import GoogleClient, decode_strings, google_rappor
from ldp.oracles.unary import OUE, SUE, UnaryReports

_registry.discover(__name__)

#: Every oracle of this package by its registered name (plug-ins: :mod:`ldp.registry`).
ORACLES: dict[str, type[FrequencyOracle]] = _registry.defined_in(__name__)
globals().update(ORACLES)

__all__ = [
    "BLH",
    "GRR",
    "OLH",
    "OUE",
    "SHE",
    "SUE",
    "THE",
    "FrequencyOracle",
    "GoogleClient",
    "HashReports",
    "ORACLES",
    "PureOracle",
    "RapporReports",
    "UnaryReports",
    "decode_strings",
    "google_rappor",
]
__all__ += [name for name in ORACLES if name not in __all__]  # new modules
