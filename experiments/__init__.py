"""The experiment harness: the Hydra app and everything around it (``conf/`` holds the configs).

* :mod:`experiments.run` — the app: ``python -m experiments.run experiment=<name>``.
* :mod:`experiments.schema` — structured-config schemas, ranges, :class:`ConfigError`.
* :mod:`experiments.check` — a composed config checked against them (:func:`check_config`).
* :mod:`experiments.settings` — settings, their result key, an experiment's grid.
* :mod:`experiments.seeding` — per-trial data and mechanism streams.
* :mod:`experiments.population` — a setting's data: loaded, counted, its shape.
* :mod:`experiments.build` — a setting's protocol from its config node (or a results row).
* :mod:`experiments.preflight` — every protocol built on its data before any trial runs.
* :mod:`experiments.trials` — one trial of a setting, by its kind (:data:`TRIAL_KINDS`).
* :mod:`experiments.kinds` — what a trial does, one module per kind.
* :mod:`experiments.execute` — settings x trials through one joblib pool.
* :mod:`experiments.provenance` — which code produced a row (versions, commit, plug-ins).
* :mod:`experiments.store` — the results store (atomic, checked parts; resume).
* :mod:`experiments.summarize` — ``python -m experiments.summarize <experiment>``.
* :mod:`experiments.plot` — ``python -m experiments.plot <results dir> --x ... --y ...``.
* :mod:`experiments.select` — reading any results directory, filters (``--where``).
* :mod:`experiments.tables` — results tables as text: column names, cells, export formats.
* :mod:`experiments.figures` — ``python -m experiments.figures [--quick]``.

See ``docs/cluster.md`` for Slurm (submitit) and Dask.
"""
