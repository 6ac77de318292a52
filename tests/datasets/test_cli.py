"""python -m ldp.datasets describe NAME key=value ..."""

from __future__ import annotations

import pytest

from ldp.datasets import __main__ as cli


def test_describe_prints_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["describe", "zipf", "n=20000", "--m=16", "--drop-top=20"]) == 0
    out = capsys.readouterr().out
    for label in (
        "n                 20,000",
        "distinct values",
        "top-1 share",
        "top-16 share",
        "top-32 share",
        "16th frequency",
        "32nd frequency",
        "Zipf slope",
    ):
        assert label in out
    assert "zipf (synthetic), m = 16 bits" in out


def test_bad_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["describe", "zipf", "exponent=2"]) == 2
    assert "exponent" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["describe", "zipf", "n"])


def test_parse_value() -> None:
    assert cli.parse_value("10") == 10 and cli.parse_value("1e6") == 10**6
    assert cli.parse_value("1.5") == 1.5 and cli.parse_value("none") is None
    assert cli.parse_value("true") is True and cli.parse_value("first") == "first"
    assert cli.parse_params(["--item_rule=first", "n=5"]) == {"item_rule": "first", "n": 5}


def test_describe_aol_prints_the_prefix_table_beside_the_real_one(
    capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)
    assert cli.main(["describe", "aol", "n=20000", f"cache_dir={tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert "prefix table" in out
    # One surrogate line and one real line per prefix length; the real 15-bit row as published.
    assert "  real  15      868  23.17%  46.9%  1.052%  0.652%   2  3  5  1  1  8 14" in out
    assert sum(line.startswith("  real") for line in out.splitlines()) == 14
