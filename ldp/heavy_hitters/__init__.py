"""Heavy-hitter identification on large domains ([PEM] Sections III-IV).

Every protocol is built with ``epsilon=``, ``k=``, ``m=`` and its own parameters, takes
its frequency oracle as a parameter (a class or its name; OLH by default), and offers
``perturb(values, rng)``, the client side (what the users send, :class:`ClientReports`),
and ``run(dataset, rng, engine="sampled" | "reports")`` returning a
:class:`HeavyHitterResult` (``.identified``, ``.estimates``, ``.diagnostics``); the
reports engine aggregates ``perturb``'s output.
"""

from ldp.heavy_hitters.base import ClientReports, HeavyHitterResult
from ldp.heavy_hitters.mcm import MCM
from ldp.heavy_hitters.pem import PEM
from ldp.heavy_hitters.spm import SPM, joint_estimate, pair_estimate
from ldp.heavy_hitters.strawman import Strawman

#: Every heavy-hitter protocol by its paper name (the names used in configs and tables).
PROTOCOLS = {"PEM": PEM, "SPM": SPM, "MCM": MCM, "Strawman": Strawman}

__all__ = [
    "MCM",
    "PEM",
    "PROTOCOLS",
    "SPM",
    "ClientReports",
    "HeavyHitterResult",
    "Strawman",
    "joint_estimate",
    "pair_estimate",
]
