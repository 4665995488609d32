"""Evaluate issue detection on a directory of benchmark format v1.

    python -m raider_ros.cli.evaluate --cases DIR --backend rules|openai|scripted --out DIR
           [--mode local|ros] [--limit N] [--filter REGEX] [--set KEY=VALUE ...]
           [--case-timeout S] [--scale N] [--retrieval off|full|rag|rag-strict]
    python -m raider_ros.cli.evaluate --cases DIR --check          # load and validate only
    python -m raider_ros.cli.evaluate --compare OUT1 OUT2 ... --out DIR   # side-by-side tables

Writes OUT/report.json, OUT/report.md and OUT/report.png. Exit status: 0 when the run
completed (failed cases included), 1 when there was nothing to run (no loadable case, or the
filter matched none) or ``--check`` found load errors, 2 for a usage error (missing or empty
directory, unavailable pipeline).

Pipelines: ``--mode local`` builds the in-process pipeline
(``raider_ros.evaluation.local.make_pipeline``); ``--mode ros`` the ROS-backed one
(``raider_ros.ros.eval_pipeline.make_pipeline``). Both are called as
``make_pipeline(backend, **settings)`` with the ``--set`` detector settings
(``raider_ros.agent.factory.DetectorSettings`` field names, values read as YAML).
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import yaml

from raider_ros.evaluation.cases import CATEGORIES, filter_cases, load_benchmark
from raider_ros.evaluation.report import load_report, markdown, plot
from raider_ros.evaluation.runner import Evaluator, print_summary
from raider_ros.sim.plausibility import check_plausibility

BACKENDS = ("rules", "openai", "scripted")
PIPELINE_MODULES = {"local": "raider_ros.evaluation.local", "ros": "raider_ros.ros.eval_pipeline"}


class UsageError(Exception):
    pass


def make_pipeline(mode: str, backend: str, settings: dict | None = None):
    module_name = PIPELINE_MODULES[mode]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"the {mode} pipeline is not available ({module_name}: {exc})") from None
    try:
        return module.make_pipeline(backend, **(settings or {}))
    except (ValueError, TypeError, OSError, RuntimeError) as exc:
        raise UsageError(f"cannot build the {mode} pipeline for backend {backend!r}: {exc}") from None


def _settings(pairs: list[str] | None) -> dict:
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects KEY=VALUE, got {pair!r}")
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="evaluate", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", help="directory of *.scene.yaml and *.cases.yaml files")
    p.add_argument("--backend", default="rules", choices=BACKENDS)
    p.add_argument("--out", default="out/evaluation", help="output directory for the reports")
    p.add_argument("--mode", default="local", choices=tuple(PIPELINE_MODULES))
    p.add_argument("--limit", type=int, help="run at most N cases")
    p.add_argument("--filter", metavar="REGEX", help="only cases whose id, scene, category or query matches")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", dest="settings",
                   help="a detector setting (repeatable), e.g. --set model=gpt-4o --set fixture=run.yaml")
    p.add_argument("--case-timeout", type=float, default=300.0, metavar="S",
                   help="give up on a case after S seconds (a watchdog; detectors have their own limit)")
    p.add_argument("--scale", type=int, default=0, metavar="N",
                   help="embed every case into a house of N objects (the rest remembered, out of sight); local mode")
    p.add_argument("--retrieval", choices=("off", "full", "rag", "rag-strict"), default="off",
                   help="scene graph in the first message: off, full (every object), rag (the task's subgraph), "
                        "rag-strict; local mode")
    p.add_argument("--check", action="store_true", help="load and validate the directory, run nothing")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run every case N times and report per-case agreement (repeatability)")
    p.add_argument("--compare", nargs="+", metavar="REPORT",
                   help="report.json files (or their directories): write report.md/png side by side")
    return p


def _check_dir(path: str | None) -> Path:
    if not path:
        raise UsageError("--cases DIR is required")
    d = Path(path)
    if not d.is_dir():
        raise UsageError(f"{d}: no such directory")
    if not any(d.glob("*.cases.yaml")):
        raise UsageError(f"{d}: no *.cases.yaml files (a benchmark directory holds *.scene.yaml "
                         "and *.cases.yaml files, see docs/benchmark-format.md)")
    return d


def _compare(paths: list[str], out: Path) -> int:
    runs = []
    for p in paths:
        try:
            runs.append(load_report(p))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read report {p}: {exc}") from None
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(markdown(runs), encoding="utf-8")
    plot(runs, out / "report.png")
    print(f"compared {len(runs)} runs: {out / 'report.md'}, {out / 'report.png'}")
    return 0


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.compare:
        return _compare(args.compare, out)
    directory = _check_dir(args.cases)
    bench = load_benchmark(directory)
    for e in bench.errors:
        print(f"load error: {e}", file=sys.stderr)
    for w in bench.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.check:
        counts = {c: sum(1 for k in bench.cases if k.category == c) for c in CATEGORIES}
        implausible = _plausibility(bench)
        for line in implausible:
            print(f"implausible: {line}", file=sys.stderr)
        print(f"{directory}: {len(bench.scenes)} scenes, {len(bench.cases)} cases "
              f"({', '.join(f'{c} {n}' for c, n in counts.items())}), {len(bench.errors)} load errors, "
              f"{len(implausible)} physical plausibility problems")
        return 1 if bench.errors or implausible else 0
    if not bench.cases:
        print(f"{directory}: no case could be loaded ({len(bench.errors)} load errors)", file=sys.stderr)
        return 1
    what = {"local": "simulator, perception and detector in this process",
            "ros": "starting the node graph (sim_world, perception, scene_graph, issue_detector)"}[args.mode]
    print(f"{len(filter_cases(bench.cases, args.filter, args.limit))} cases from {directory}; "
          f"{args.mode} pipeline: {what} ...", flush=True)
    t0 = time.monotonic()
    settings = _settings(args.settings)
    if args.scale < 0:
        raise UsageError(f"--scale expects a number of objects >= 0, got {args.scale}")
    if args.scale or args.retrieval != "off":
        if args.mode != "local":
            raise UsageError("--scale and --retrieval run in the local pipeline (--mode local); the ROS "
                             "evaluation pipeline has no house memory yet")
        settings.update(scale=args.scale, retrieval=args.retrieval)
    pipeline = make_pipeline(args.mode, args.backend, settings)
    print(f"pipeline ready in {time.monotonic() - t0:.1f} s: {getattr(pipeline, 'name', args.backend)}", flush=True)
    evaluator = Evaluator(pipeline, backend=getattr(pipeline, "name", "") or args.backend,
                          case_timeout_s=args.case_timeout if args.case_timeout > 0 else None)
    try:
        report = evaluator.evaluate(bench, out, pattern=args.filter, limit=args.limit,
                                    extra={"mode": args.mode, "set": _set_name(directory)}, repeat=args.repeat)
    finally:
        close = getattr(pipeline, "close", None)
        if callable(close):
            close()
    if not report["cases"]:
        print(f"no case matched --filter {args.filter!r} / --limit {args.limit}", file=sys.stderr)
        return 1
    print_summary(report, out)
    if report["overall"]["errors"] == report["cases"]:
        print(f"evaluate: every case ended with an error (first: {report['results'][0]['error']})", file=sys.stderr)
        return 1
    return 0


def _set_name(directory: Path) -> str:
    """Which set a figure was measured on: data/benchmark/<set> is named by its folder (dev
    sets were tuned on, held-out sets not); any other directory by its path."""
    d = directory.resolve()
    return f"{d.name} (project benchmark)" if d.parent.name == "benchmark" and d.parent.parent.name == "data" else str(d)


def _plausibility(bench) -> list[str]:
    """Physical plausibility of every scene and every case's world after its setup (each
    problem once, with the first place it shows up)."""
    out, seen = [], set()
    worlds = [(f"scene {name}", scene) for name, scene in bench.scenes.items()]
    for case in bench.cases:
        try:
            worlds.append((f"case {case.id} (scene {case.scene} after its setup)", bench.scene_for(case)))
        except Exception as exc:  # noqa: BLE001 - a broken setup is reported as a load error already
            out.append(f"case {case.id}: its setup cannot be applied: {exc}")
    for where, world in worlds:
        for problem in check_plausibility(world):
            if problem not in seen:
                seen.add(problem)
                out.append(f"{where}: {problem}")
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except UsageError as exc:
        print(f"evaluate: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evaluate: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
