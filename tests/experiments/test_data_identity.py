"""A setting's key follows the data it reads: a real file by its content, the surrogate apart."""

from __future__ import annotations

import os

import pytest

from experiments.run import run_settings
from experiments.store import ResultsStore
from experiments.summarize import main as summarize

REAL = ("protocol=grr", "dataset=kosarak", "dataset.n=50", "n_trials=2", "n_jobs=1")
REAL += ("progress=false", "name=real", "options.domain_size=4")


def kosarak(path, lines: int, shift: int = 0):
    path.write_text("".join(f"{1 + (i + shift) % 3} {7 + i % 5}\n" for i in range(lines)))
    return path


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)


def test_replacing_the_file_at_the_same_path_gives_a_new_key(settings_of, tmp_path):
    data = kosarak(tmp_path / "kosarak.dat", 200)
    before = settings_of(*REAL, f"dataset.path={data}")[0]
    assert before.data == f"kosarak: real file {data.resolve()}"
    kosarak(data, 200, shift=1)
    os.utime(data, ns=(1, 1))  # even with another modification time only
    after = settings_of(*REAL, f"dataset.path={data}")[0]
    assert after.key != before.key
    moved = data.rename(tmp_path / "moved.dat")
    assert settings_of(*REAL, f"dataset.path={moved}")[0].key == after.key  # content, not path


def test_the_surrogate_and_the_file_in_ldp_data_dir_never_share_a_key(
    settings_of, tmp_path, monkeypatch, results_dir, capsys
):
    surrogate = settings_of(*REAL)[0]
    assert surrogate.data.startswith("kosarak: calibrated surrogate (LDP_DATA_DIR is not set")
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path / "data"))
    missing = settings_of(*REAL)[0]
    assert missing.key == surrogate.key and "none of the kosarak file names" in missing.data
    kosarak(tmp_path / "data" / "kosarak.dat", 300)
    real = settings_of(*REAL)[0]
    assert real.key != surrogate.key and real.data.startswith("kosarak: real file")
    run_settings([real])
    monkeypatch.delenv("LDP_DATA_DIR")
    run_settings([surrogate])
    table, _ = ResultsStore(results_dir, "real").load()
    assert table.groupby("config_hash")["data_source"].nunique().max() == 1
    assert table["config_hash"].nunique() == 2
    assert summarize(["real", "--results-dir", str(results_dir)]) == 0
    out = capsys.readouterr().out
    assert "surrogate" in out and "real:" in out
