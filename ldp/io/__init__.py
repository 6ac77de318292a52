"""Files of other implementations, read and written byte for byte.

:mod:`ldp.io.rappor` reads and writes the five file kinds of google/rappor (parameters,
reports, candidates, candidate map, per-cohort bit counts) and decodes them end to end.
"""

from ldp.io.rappor import (
    CandidateMap,
    RapporFileError,
    RapporParams,
    ReportsTable,
    candidate_map,
    decode_files,
    read_candidate_map,
    read_candidates,
    read_counts,
    read_params,
    read_reports,
    sum_bits,
    write_candidate_map,
    write_candidates,
    write_counts,
    write_params,
    write_reports,
    write_results,
)

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
