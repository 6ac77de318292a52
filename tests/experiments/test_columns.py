"""Columns are spelled once: every constant of :mod:`experiments.columns` is a column the
harness writes, and the figures name columns only through them."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from hydra import initialize_config_dir

from experiments import columns as col
from experiments import schema
from experiments.execute import run_batch
from experiments.provenance import provenance
from experiments.run import CONF_DIR
from experiments.schema import register_configs
from experiments.settings import expand
from experiments.summarize import STAT_COLUMNS
from experiments.tables import META_COLUMNS
from ldp import registry

REPO = Path(__file__).resolve().parents[2]
#: The modules that read results tables and must name their columns through the constants.
READERS = sorted((REPO / "experiments" / "figures").glob("*.py")) + [
    REPO / "experiments" / "results.py"
]

#: Literals that spell a column's name but mean something else, per module, with why.
NOT_COLUMNS = {
    "fig_mean.py": {"mean"},  # the registry's kind of mean-estimation protocols
    "profile.py": {"trials"},  # a stage of the run's profile, a column of profile.md
    "__main__.py": {"trials"},  # the same stage, timed
    "fig_rappor.py": {"k"},  # RAPPOR's parameter names, read as protocol.<name>
}


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    return found.union(*(_subclasses(c) for c in found)) if found else found


def _schema_columns() -> set[str]:
    """Every parameter column a setting can have, from the config schema."""
    protocol = set().union(*(_fields(schema.protocol_schema(n)) for n in registry.protocols()))
    datasets = set().union(
        *(_fields(c) for c in {schema.DatasetConfig, *_subclasses(schema.DatasetConfig)})
    )
    return (
        {f"protocol.{name}" for name in protocol}
        | {f"dataset.{name}" for name in datasets}
        | {f"options.{name}" for name in _fields(schema.TrialOptions)}
        | {name for name in _fields(schema.Config) if name not in schema.RUN_ONLY_FIELDS}
    )


def spelt_columns(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string literal in ``source`` that is a column's name: not a
    docstring, not a piece of an f-string."""
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped |= {id(part) for part in node.values}
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in col.ALL
        and id(node) not in skipped
    ]


def test_the_tables_and_summaries_take_their_columns_from_here() -> None:
    assert META_COLUMNS == col.META
    assert STAT_COLUMNS == col.STATISTICS


def test_every_parameter_constant_is_a_column_of_the_config_schema() -> None:
    register_configs()
    unknown = set(col.PARAMETERS) - _schema_columns()
    assert not unknown, f"not a config field: {sorted(unknown)}"


def test_a_trial_row_holds_the_meta_columns_in_order(tmp_path: Path) -> None:
    register_configs()
    overrides = [f"results_dir={tmp_path}", "protocol=grr", "dataset=point", "dataset.n=200"]
    overrides += ["options.domain_size=4", "options.track=absent", "progress=false"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        (setting,) = expand("config", overrides)
    _, _, rows = run_batch(setting, (0,), "probe", provenance())
    written = [c for c in rows.columns if c in col.META]
    assert written == [c for c in col.META if c in rows.columns]
    assert set(col.META) - set(written) <= {col.PLUGIN, col.PLUGIN_VERSION}
    params = set(rows.columns) - set(col.META)
    assert {col.EPSILON, col.PROTOCOL, col.DATASET, col.DATASET_N, col.DOMAIN_SIZE} <= params


@pytest.mark.parametrize("path", READERS, ids=lambda p: p.name)
def test_no_reader_spells_a_column(path: Path) -> None:
    allowed = NOT_COLUMNS.get(path.name, set())
    found = [(line, text) for line, text in spelt_columns(path.read_text()) if text not in allowed]
    shown = "\n".join(f"{path.name}:{line}: {text!r}" for line, text in found)
    assert not found, f"use experiments.columns instead of the literal:\n{shown}"


def test_the_scan_finds_a_spelt_column_and_skips_prose() -> None:
    planted = '''
"""A module about "epsilon"."""
def f(table):
    """Reads epsilon."""
    label = f"{len(table)}n"
    return table["epsilon"], table[col.MEAN], label, f"{table['trial']}"
'''
    assert sorted(spelt_columns(planted)) == [(6, "epsilon"), (6, "trial")]
