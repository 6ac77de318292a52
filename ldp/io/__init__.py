"""Files of other implementations, read and written byte for byte.

:mod:`ldp.io.rappor` reads and writes the five file kinds of google/rappor (parameters,
reports, candidates, candidate map, per-cohort bit counts) and decodes them end to end
(``python -m ldp.io.rappor decode ...``).  Import it as ``from ldp.io import rappor``;
nothing is re-exported here, so that ``python -m ldp.io.rappor`` imports it only once.
:mod:`ldp.io.files` holds the one atomic file write that the dataset cache, the data
files' digest cache and the harness's results store share.
"""
