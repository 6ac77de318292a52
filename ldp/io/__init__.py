"""Files of other implementations, read and written byte for byte.

:mod:`ldp.io.rappor` reads and writes the five file kinds of google/rappor (parameters,
reports, candidates, candidate map, per-cohort bit counts) and decodes them end to end
(``python -m ldp.io.rappor decode ...``).  Its public names are re-exported here; the
module is imported on first use, so that ``python -m ldp.io.rappor`` runs it only once.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "CandidateMap",
    "RapporFileError",
    "RapporParams",
    "ReportsTable",
    "candidate_map",
    "decode_files",
    "read_candidate_map",
    "read_candidates",
    "read_counts",
    "read_params",
    "read_reports",
    "sum_bits",
    "write_candidate_map",
    "write_candidates",
    "write_counts",
    "write_params",
    "write_reports",
    "write_results",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module("ldp.io.rappor"), name)
    raise AttributeError(f"module 'ldp.io' has no attribute {name!r}")
