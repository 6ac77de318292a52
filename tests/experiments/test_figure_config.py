"""The ``figure:`` block of an experiment: the protocols a figure compares, as data.

It is checked like any field (a bad name or type fails before any trial, one line naming
the field), read back by :func:`experiments.results.figure_config`, and never part of a
setting: adding or changing it leaves every key, and so every recorded result, in place.
"""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from experiments.check import check_figure
from experiments.results import EXPERIMENT_DIR, figure_config
from experiments.schema import ConfigError, FigureConfig
from ldp import registry


def test_names_are_kept_in_the_registry_spelling():
    checked = check_figure({"series": ["pem", "Spm"], "reference": ["olh"]})
    assert checked == {"series": ["PEM", "SPM"], "reference": ["OLH"], "subjects": []}
    assert check_figure(None) == {"series": [], "reference": [], "subjects": []}


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"series": ["pem", "nope"]}, r"^figure\.series: unknown protocol 'nope'; known: "),
        ({"reference": "olh"}, r"^figure\.reference: must be a list of protocol names, got 'olh'"),
        ({"subject": ["olh"]}, r"^figure\.subject: Key 'subject' not in 'FigureConfig'"),
    ],
)
def test_a_bad_block_fails_with_one_line_naming_the_field(node, message):
    with pytest.raises(ConfigError, match=message) as caught:
        check_figure(node)
    assert "\n" not in str(caught.value)


def test_a_bad_name_in_an_experiment_stops_it_before_any_trial(settings_of):
    with pytest.raises(ConfigError, match=r"^figure\.subjects: unknown protocol 'XYZ'"):
        settings_of("experiment=oracle_flh_pool", "figure.subjects=[XYZ]")


def test_the_block_is_not_part_of_a_setting(settings_of):
    """The key and the table's columns are the same with and without a figure block."""
    plain = settings_of("protocol=olh", "epsilon=2", "n_trials=2")[0]
    named = settings_of(
        "protocol=olh",
        "epsilon=2",
        "n_trials=2",
        "figure.series=[olh,oue]",
        "figure.reference=[grr]",
    )[0]
    assert named.config["figure"] == {
        "series": ["OLH", "OUE"],
        "reference": ["GRR"],
        "subjects": [],
    }
    assert named.key == plain.key
    assert named.params == plain.params
    assert not any(column.startswith("figure") for column in named.params)


def test_every_experiment_block_reads_back_checked():
    """Every ``figure:`` block in conf/experiment/ names registered protocols; the reader
    returns them in the registry's spelling, and an experiment without one reads empty."""
    blocks = 0
    for path in sorted(EXPERIMENT_DIR.glob("*.yaml")):
        raw = OmegaConf.load(path).get("figure")
        figure = figure_config(path.stem)
        assert isinstance(figure, FigureConfig)
        for field in ("series", "reference", "subjects"):
            names = getattr(figure, field)
            assert names == [registry.get(name).name for name in names]
            written = list((raw or {}).get(field, []))
            assert [name.lower() for name in names] == [str(n).lower() for n in written]
        blocks += raw is not None
    assert blocks >= 10  # the paper comparisons whose protocols the figures no longer name
