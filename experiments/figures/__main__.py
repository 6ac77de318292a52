"""``python -m experiments.figures [--quick] [--only NAME] [--no-run] [--add KEY=V] [--set KEY=V]``.

Runs what is missing of every figure's experiment (finished trials are kept, so this
resumes), draws each figure from its results table into ``results/figures/`` as PNG and
PDF (quick mode: into ``results/quick/figures/``, PNG only), and writes the gallery
``index.md``.  At the end it prints where the time went, per experiment and stage, and the
peak memory (:mod:`experiments.figures.profile`), and writes that table beside the gallery.

``--add protocol=myplugin`` adds values to an axis of each chosen figure's grid (a
plug-in drawn beside the paper's protocols); ``--set KEY=VALUE`` overrides a field
(``n_trials=3``, ``dataset.path=...``).  The committed gallery and ``REPRODUCTION.md``
change only by a full paper-scale run: a run with ``--only``, ``--add``, ``--set`` or
real data (a ``dataset.path``) draws into its own directory, ``<results_dir>/custom``
(or ``--out-dir``), with a gallery and a report of its own figures only.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from hydra import compose, initialize_config_dir

from experiments.execute import RunReport, TrialError, parallel_map
from experiments.figures import FIGURES, FigureSpec, style
from experiments.figures.gallery import Entry, write_gallery
from experiments.figures.profile import Profile
from experiments.figures.reproduction import Judged, collect, paper_trials, write_report
from experiments.preflight import preflight
from experiments.run import CONF_DIR, describe, run_many
from experiments.schema import ConfigError, register_configs
from experiments.settings import Setting, expand
from experiments.store import ROW_KEY, ResultsDirError, ResultsStore


def experiment_settings(
    experiment: str, overrides: Sequence[str], added: Sequence[str] = ()
) -> list[Setting]:
    """The settings of ``conf/experiment/<experiment>.yaml`` under ``overrides``, with the
    values of ``added`` (``key=a,b``) appended to that axis of its grid (or as a new axis)."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name="figures"):
        grid = []
        if added:
            composed = compose(
                "config", [f"experiment={experiment}", *overrides], return_hydra_config=True
            )
            params = composed.hydra.sweeper.get("params") or {}
            for text in added:
                key, _, values = text.partition("=")
                current = params.get(key)
                grid.append(f"{key}={current},{values}" if current is not None else text)
        return expand("config", [f"experiment={experiment}", *overrides], grid)


#: The results directory whose figures and report are committed.
COMMITTED = (CONF_DIR.parent / "results").resolve()


def custom_reasons(args: argparse.Namespace, settings_of: dict[str, list[Setting]]) -> list[str]:
    """Why this run is not the full paper-scale one (empty: it is)."""
    reasons = []
    if args.only:
        reasons.append("--only")
    if args.add or args.set:
        reasons.append("--add/--set")
    settings = [s for group in settings_of.values() for s in group]
    if any(s.config["dataset"].get("path") or "real file" in s.data for s in settings):
        reasons.append("real data")
    wanted = {name: paper_trials(name) for name in settings_of}  # a YAML read each
    trials = {s.config["n_trials"] != wanted[n] for n in settings_of for s in settings_of[n]}
    if not args.quick and True in trials:
        reasons.append("trials other than the configs'")
    if args.quick and args.results_dir and Path(args.results_dir).resolve() == COMMITTED:
        reasons.append("--quick")  # quick results beside the committed ones: not their figures
    return reasons


def replaces_all(reasons: Sequence[str], out_dir: Path) -> bool:
    """Whether this run's gallery and report replace the directory's whole files (a custom
    run in a directory of its own) rather than update the figures it drew (a full run, or
    ``--only`` redrawing figures of the committed results into their own directory)."""
    if not reasons:
        return False
    return not (list(reasons) == ["--only"] and out_dir.resolve() == COMMITTED)


def _load_table(
    results_dir: Path, experiments: Sequence[str], settings_of: dict[str, list[Setting]]
) -> pd.DataFrame:
    """The rows of the experiments' current settings, one table (a figure with one config
    per panel reads several experiments)."""
    tables = [
        ResultsStore(results_dir, name).load([s.key for s in settings_of[name]])[0]
        for name in experiments
    ]
    if len(tables) == 1:
        return tables[0]
    table = pd.concat([t for t in tables if not t.empty] or tables[:1], ignore_index=True)
    return table.drop_duplicates(subset=[c for c in ROW_KEY if c in table.columns])


def _composed(
    experiment: str, overrides: Sequence[str], added: Sequence[str]
) -> tuple[list[Setting], float]:
    """An experiment's settings, checked (:func:`~experiments.preflight.preflight`), and
    the seconds that took (run in a worker: composing is a Hydra call per setting)."""
    began = time.perf_counter()
    settings = experiment_settings(experiment, overrides, added)
    preflight([setting.config for setting in settings])
    return settings, time.perf_counter() - began


def _drawn(
    spec: FigureSpec,
    results_dir: Path,
    settings_of: dict[str, list[Setting]],
    figures_dir: Path,
    quick: bool,
) -> tuple[pd.DataFrame, list[Path], dict[str, float], list[tuple[FigureSpec, Judged]]]:
    """Load a figure's table, draw and save it, judge its claims (run in a worker): the
    table, the files (none if the table is empty), the seconds per stage and the claims,
    each with its *detects* search done (the report's costliest column)."""
    seconds = {}
    began = time.perf_counter()
    table = _load_table(results_dir, spec.experiments, settings_of)
    seconds["data"] = time.perf_counter() - began
    if table.empty:
        return table, [], seconds, []
    began = time.perf_counter()
    figure = spec.draw(table)
    seconds["drawing"] = time.perf_counter() - began
    began = time.perf_counter()
    files = style.save(figure, figures_dir, spec.name, pdf=not quick)
    seconds["saving"] = time.perf_counter() - began
    began = time.perf_counter()
    judged = collect([(spec, table)])
    for _, one in judged:
        one.claim.detection  # noqa: B018 (a cached property: computed here, in the worker)
    seconds["report"] = time.perf_counter() - began
    return table, files, seconds, judged


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Command line entry point (``prog``: the name its usage shows)."""
    parser = argparse.ArgumentParser(
        prog=prog or "python -m experiments.figures", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="few trials, into results/quick")
    parser.add_argument("--only", action="append", help="only this figure (repeatable)")
    parser.add_argument("--no-run", action="store_true", help="draw from existing results")
    parser.add_argument(
        "--force", action="store_true", help="recompute recorded trials (rerun=true)"
    )
    parser.add_argument("--results-dir", help="default: results (results/quick with --quick)")
    parser.add_argument("--n-jobs", type=int, help="workers (default: the config's n_jobs)")
    parser.add_argument(
        "--add",
        action="append",
        default=[],
        metavar="KEY=VALUES",
        help="add values to a grid axis, e.g. protocol=myplugin (repeatable)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a field, e.g. n_trials=3 (repeatable)",
    )
    parser.add_argument(
        "--out-dir",
        help="where figures/ and REPRODUCTION.md go (default: the results dir for a full "
        "paper-scale run, else <results-dir>/custom)",
    )
    args = parser.parse_args(argv)
    if args.results_dir is not None and not Path(args.results_dir).is_dir():
        print(f"error: --results-dir {args.results_dir}: no such directory", file=sys.stderr)
        return 2
    results_dir = Path(args.results_dir or ("results/quick" if args.quick else "results"))
    chosen: list[FigureSpec] = [s for s in FIGURES if not args.only or s.name in args.only]
    if not chosen:
        print(f"no figure named {args.only}; known: {[s.name for s in FIGURES]}", file=sys.stderr)
        return 2
    overrides_of: dict[str, tuple[str, ...]] = {}
    for spec in chosen:
        for experiment in spec.experiments:
            quick = spec.quick_overrides(experiment) if args.quick else ()
            overrides = (f"results_dir={results_dir}", *quick, *args.set)
            if args.n_jobs is not None:
                overrides += (f"n_jobs={args.n_jobs}",)
            overrides_of.setdefault(experiment, overrides)
    profile = Profile()
    try:
        composed = parallel_map(
            _composed,
            [(e, o, tuple(args.add)) for e, o in overrides_of.items()],
            n_jobs=args.n_jobs or -1,
        )
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    settings_of: dict[str, list[Setting]] = {}
    for experiment, (settings, seconds) in zip(overrides_of, composed, strict=True):
        settings_of[experiment] = settings
        profile.add(experiment, "settings", seconds)
    if not args.no_run:
        last = [time.perf_counter()]  # when the previous experiment finished

        def done(report: RunReport, store: ResultsStore) -> None:
            # one pool runs the experiments in order and their trials overlap: an
            # experiment's time runs from the previous one's end to its own
            now = time.perf_counter()
            profile.add(store.experiment, "trials", now - last[0])
            last[0] = now
            print(describe(report, store), flush=True)

        try:
            # one pool for every experiment keeps both cores busy across their boundaries;
            # no up-front estimate: timing trials in this process first would leave a core
            # idle for each experiment, and the printed profile shows where the time went
            run_many(
                list(settings_of.values()),
                rerun=args.force,
                announce=True,
                estimate=False,
                on_done=done,
            )
        except (TrialError, ResultsDirError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(
                "interrupted: finished trials are kept; rerun the same command to resume",
                file=sys.stderr,
            )
            return 130
    reasons = custom_reasons(args, settings_of)
    out_dir = Path(args.out_dir) if args.out_dir else results_dir
    if reasons and not args.out_dir:
        out_dir = results_dir / "custom"
        print(f"{', '.join(reasons)}: figures and report go to {out_dir}, not {results_dir}")
    figures_dir = out_dir / "figures"
    entries = []
    # the longest drawings first, so that the two workers finish together
    longest_first = sorted(chosen, key=lambda spec: -spec.drawing_seconds)
    calls = [
        (spec, results_dir, {n: settings_of[n] for n in spec.experiments}, figures_dir, args.quick)
        for spec in longest_first
    ]
    drawn = parallel_map(_drawn, calls, n_jobs=args.n_jobs or -1)
    drawn = dict(zip([s.name for s in longest_first], drawn, strict=True))
    for spec in chosen:
        settings = [s for name in spec.experiments for s in settings_of[name]]
        table, files, seconds, _ = drawn[spec.name]
        for stage, spent in seconds.items():
            profile.add(f"figure {spec.name}", stage, spent)
        if table.empty:
            print(f"{spec.name}: no results yet (run without --no-run)", file=sys.stderr)
            continue
        shown = tuple(o for o in overrides_of[spec.experiments[0]] if not o.startswith("n_jobs"))
        if results_dir == Path("results"):
            shown = tuple(o for o in shown if o != "results_dir=results")
        entries.append(
            Entry(spec, files, settings, table, shown + (("--quick",) if args.quick else ()))
        )
        print(f"{spec.name}: {', '.join(str(f) for f in files)}")
    # a full run updates its gallery (figures not drawn now keep their entries); a custom
    # run's directory describes that run alone, except that redrawing some figures of the
    # committed run into its own directory updates them (it replaced the whole report)
    order = None if replaces_all(reasons, out_dir) else [spec.name for spec in FIGURES]
    with profile.time("gallery and reproduction report", "report"):
        gallery = write_gallery(figures_dir, entries, quick=args.quick, order=order)
        print(f"gallery: {gallery}")
        report = write_report(
            out_dir / "REPRODUCTION.md",
            [judged for entry in entries for judged in drawn[entry.spec.name][3]],
            quick=args.quick,
            order=order,
        )
    print(f"reproduction report: {report}")
    timings = profile.table()
    print(timings, end="")
    print(f"profile: {profile.write(figures_dir, timings)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
