"""A memoized protocol run as a one-round oracle trial is said so, never silently."""

from __future__ import annotations

from experiments.execute import kind_note
from experiments.run import run_settings

from .conftest import TINY


def test_a_memoized_protocol_in_an_oracle_trial_is_announced(settings_of, capsys):
    settings = settings_of("protocol=lgrr", *TINY, "n_trials=1", "n_jobs=1", "name=exp")
    run_settings(settings, announce=True)
    lines = capsys.readouterr().out.splitlines()
    notes = [line for line in lines if line.startswith("  note: ")]
    assert notes == [f"  note: {kind_note(settings)}"]
    assert notes[0].startswith("  note: LGRR: a memoized protocol, run here as one-round")
    assert "protocol.kind=longitudinal engine=reports options.rounds=<tau>" in notes[0]


def test_no_note_for_an_ordinary_oracle_or_a_longitudinal_trial(settings_of):
    assert kind_note(settings_of("protocol=grr", *TINY)) == ""
    longitudinal = settings_of(
        "protocol=loloha", *TINY, "protocol.kind=longitudinal", "engine=reports"
    )
    assert kind_note(longitudinal) == ""
    assert kind_note(settings_of("protocol=biloloha", *TINY)).startswith(
        "LOLOHA: a memoized protocol"
    )
