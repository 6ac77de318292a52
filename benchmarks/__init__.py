"""Benchmarks of ``ldp`` (not tests): ``python -m benchmarks [--quick] [--only oracles]``.

See ``benchmarks/README.md`` for what is measured and what each column means.
"""
