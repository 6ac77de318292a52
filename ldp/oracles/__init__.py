"""The frequency oracles of USENIX'17 Table 1, each with a reports and a sampled engine.

>>> import numpy as np
>>> from ldp.oracles import OLH
>>> oracle = OLH(epsilon=1.0, domain_size=1024)
>>> reports = oracle.perturb(np.zeros(1000, dtype=np.int64), np.random.default_rng(0))
>>> oracle.estimate(reports).shape
(1024,)
"""

from ldp.oracles.base import FrequencyOracle, PureOracle
from ldp.oracles.direct import GRR
from ldp.oracles.histogram import SHE, THE
from ldp.oracles.local_hashing import BLH, OLH, HashReports
from ldp.oracles.unary import OUE, SUE, UnaryReports

#: Every oracle by its paper acronym (the names used in configs and result tables).
ORACLES: dict[str, type[FrequencyOracle]] = {
    cls.name: cls for cls in (GRR, SUE, OUE, SHE, THE, BLH, OLH)
}

__all__ = [
    "BLH",
    "GRR",
    "OLH",
    "ORACLES",
    "OUE",
    "SHE",
    "SUE",
    "THE",
    "FrequencyOracle",
    "HashReports",
    "PureOracle",
    "UnaryReports",
]
