"""The up-front estimate of a run's cost (issue 16: a long run warns and says how to shrink)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from experiments import estimate
from experiments.run import run_settings
from experiments.settings import Setting

QUIET = ("n_jobs=1", "progress=false")


@dataclass(frozen=True)
class _Batch:
    setting: Setting
    trials: tuple[int, ...]


def _setting(protocol: str, dataset: str = "zipf") -> Setting:
    config = {"protocol": {"name": protocol}, "dataset": {"name": dataset}, "engine": "sampled"}
    return Setting(config=config, key=protocol)


def test_probe_times_each_class_twice_when_quick_and_leaves_the_rest():
    ran = []
    batches = [_Batch(_setting("GRR"), (0, 1, 2)), _Batch(_setting("OLH"), (0,))]
    probed = estimate.probe(batches, lambda s, t: ran.append((s.key, t)), budget=60)
    # a quick first trial is timed again (one-time costs); OLH has one trial only
    assert ran == [("GRR", (0,)), ("GRR", (1,)), ("OLH", (0,))]
    assert probed.ran == 3 and [b.trials for b in probed.batches] == [(2,)]
    assert set(probed.seconds) == {("GRR", "zipf", "sampled"), ("OLH", "zipf", "sampled")}


def test_the_estimate_is_the_classes_times_over_the_workers():
    slow, fast = _setting("SPM"), _setting("PEM")
    probed = estimate.Probe(
        seconds={estimate.cost_class(slow): 2.0, estimate.cost_class(fast): 0.5},
        ran=2,
        batches=[_Batch(slow, (1, 2, 3)), _Batch(fast, (1,)), _Batch(_setting("MCM"), (1, 2))],
        elapsed=2.5,
    )
    # 3 x 2.0 + 1 x 0.5 + 2 x mean(2.0, 0.5) = 9 s of work on 2 workers
    assert estimate.estimate_seconds(probed, workers=2) == pytest.approx(4.5)


def test_probing_stops_at_its_budget():
    def slow(setting, trials):
        time.sleep(0.05)

    batches = [_Batch(_setting(f"P{i}"), (0, 1)) for i in range(20)]
    probed = estimate.probe(batches, slow, budget=0.2)
    # the probe starts a trial only while under budget: at most 0.2 / 0.05 + 1 of them
    assert 1 <= probed.ran <= 5
    assert sum(len(b.trials) for b in probed.batches) == 40 - probed.ran


def _run(settings_of, capsys, *overrides):
    settings = settings_of(
        "experiment=oracle_variance",
        "protocol=grr",
        "epsilon=1",
        "engine=sampled",
        "dataset.n=300",
        "n_trials=6",
        *QUIET,
        *overrides,
    )
    report, store = run_settings(settings, announce=True)
    return report, store, capsys.readouterr()


def test_a_run_over_the_threshold_warns_and_names_the_shrinking_overrides(
    settings_of, capsys, monkeypatch
):
    monkeypatch.setattr(estimate.joblib, "cpu_count", lambda: 2)  # n_jobs=1 leaves one idle
    report, store, out = _run(settings_of, capsys, "warn_minutes=0")
    assert "estimate: about" in out.out
    assert "warning: this run will take about" in out.err
    for hint in ("n_trials=", "epsilon=1,4", "dataset.n=", "n_jobs="):
        assert hint in out.err
    # the timed trials are real trials, recorded like the others
    assert report.ran == report.trials == 6 * len(store.keys())
    assert all(store.done_trials(key) == set(range(6)) for key in store.keys())


def test_a_cheap_run_prints_no_estimate_and_no_warning(settings_of, capsys):
    _, _, out = _run(settings_of, capsys)
    assert "estimate" not in out.out and "warning" not in out.err


def test_a_run_of_minutes_prints_its_estimate_without_a_warning():
    batches = [_Batch(_setting("SPM"), tuple(range(60))), _Batch(_setting("SPM"), (60,) * 60)]
    probed = estimate.Probe({estimate.cost_class(batches[0].setting): 2.0}, 1, batches, 2.0)
    # 120 trials x 2 s on 2 workers
    line, warning = estimate.estimate_lines(probed, workers=2, warn_minutes=10)
    assert line.startswith("  estimate: about 2 min for the 120 trials left on 2 workers")
    assert warning is None


def test_the_warning_suggests_more_workers_only_when_cores_are_idle(monkeypatch):
    monkeypatch.setattr(estimate.joblib, "cpu_count", lambda: 4)
    batch = _Batch(_setting("SPM"), tuple(range(100)))
    probed = estimate.Probe({estimate.cost_class(batch.setting): 60.0}, 1, [batch], 60.0)
    _, busy = estimate.estimate_lines(probed, workers=4, warn_minutes=1)
    _, idle = estimate.estimate_lines(probed, workers=2, warn_minutes=1)
    # every core busy (the default, n_jobs=null): more workers would not shrink the run
    assert "n_trials=" in busy and "epsilon=1,4" in busy and "n_jobs=" not in busy
    assert "n_jobs=-1 (all 4 cores, 2 now)" in idle
