"""Which LTLf -> DFA tool chain: ltlf2dfa + MONA (the one shipped) against flloat/pythomata.

For every distinct formula shape of the safety benchmark's gold formulas (atoms renamed p0,
p1, ...), each candidate builds the automaton once, cold; the figure is the compile time, and
correctness is the share of 300 random finite traces on which the automaton's answer equals the
direct recursive LTLf semantics (raider_ros/safety/semantics.py). A candidate that needs more
than --limit-s seconds for one formula is stopped there and that formula counts as failed.

flloat is not a project dependency; give its install directory with --flloat-path (e.g.
``pip install --target /tmp/flloat flloat==0.3.0``); without it only MONA is measured.
Spot (the usual LTL tool chain) is not packaged for Debian 12 or PyPI here and is not measured.

Run: ``python bench/bench_safety_candidates.py [--flloat-path DIR]``; writes
bench/results/safety_candidates.json.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from raider_ros.common.paths import data_dir  # noqa: E402
from raider_ros.safety import ltl  # noqa: E402
from raider_ros.safety.automata import Compiler  # noqa: E402
from raider_ros.safety.benchmark import load_benchmark  # noqa: E402
from raider_ros.safety.semantics import holds  # noqa: E402
from figures import write_figures  # noqa: E402

TRACES = 300
# conjunctions of several constraints (3 to 5 atoms), as an ensemble compiled into one automaton
# would be; flloat's construction grows quickly with the number of atoms
ENSEMBLES = [
    "(!p0 U p1) & (!p1 U p2)",
    "G (p0 -> F p1) & G (p2 -> F p3)",
    "(!p0 U p1) & (!p1 U p2) & G (p3 -> !p4)",
    "G (p0 -> F p1) & G (p2 -> F p3) & G (p4 -> F p1)",
]


def shapes() -> list[str]:
    bench = load_benchmark(data_dir() / "safety" / "benchmark")
    out = []
    for c in bench.cases:
        for g in c.ltl or ():
            key, _ = ltl.shape_key(ltl.parse(g))
            if key not in out:
                out.append(key)
    return out


def traces(f, rng: random.Random):
    ats = ltl.atoms(f)
    return [[frozenset(a for a in ats if rng.random() < 0.5) for _ in range(rng.randint(1, 8))]
            for _ in range(TRACES)]


def _flloat_job(args):
    path, text, trs = args
    sys.path.insert(0, path)
    from flloat.parser.ltlf import LTLfParser
    t0 = time.perf_counter()
    dfa = LTLfParser()(text).to_automaton()
    ms = (time.perf_counter() - t0) * 1000
    names = text_atoms(text)
    ok = sum(dfa.accepts([{n: (n in p) for n in names} for p in tr]) == want for tr, want in trs)
    return ms, ok


def text_atoms(text: str) -> list[str]:
    return [a.name for a in ltl.atoms(ltl.parse(text))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flloat-path", help="directory where flloat 0.3.0 is installed (pip --target)")
    ap.add_argument("--limit-s", type=float, default=60.0)
    args = ap.parse_args()
    rng = random.Random(7)
    import ltlf2dfa.ltlf  # noqa: F401  (its import, with sympy, is not compile time)
    figures: dict[str, float | int | str] = {}
    for label, forms in (("benchmark", shapes()), ("ensemble", ENSEMBLES)):
        figures[f"{label}_formulas"] = len(forms)
        comp = Compiler(cache=False)
        times, correct, total = [], 0, 0
        jobs = []
        for text in forms:
            f = ltl.parse(text)
            trs = traces(f, rng)
            t0 = time.perf_counter()
            d = comp.compile(f)
            times.append((time.perf_counter() - t0) * 1000)
            correct += sum(d.accepts_trace(tr) == holds(f, tr) for tr in trs)
            total += len(trs)
            jobs.append((ltl.to_text(_expand_w(f)), [([{a.name for a in p} for p in tr], holds(f, tr)) for tr in trs]))
        figures[f"{label}_mona_compile_ms_median"] = round(statistics.median(times), 2)
        figures[f"{label}_mona_compile_ms_max"] = round(max(times), 2)
        figures[f"{label}_mona_correct_fraction"] = round(correct / total, 4)
        if not args.flloat_path:
            continue
        ftimes, fok, ftotal, failed = [], 0, 0, 0
        ctx = mp.get_context("spawn")
        for text, trs in jobs:
            with ctx.Pool(1) as pool:
                res = pool.apply_async(_flloat_job, ((args.flloat_path, text, trs),))
                try:
                    ms, ok = res.get(timeout=args.limit_s)
                except mp.TimeoutError:
                    failed += 1
                    ftimes.append(args.limit_s * 1000)
                    ftotal += len(trs)
                    print(f"flloat: no automaton within {args.limit_s:g} s for {text}")
                    continue
            ftimes.append(ms)
            fok += ok
            ftotal += len(trs)
        figures[f"{label}_flloat_compile_ms_median"] = round(statistics.median(ftimes), 2)
        figures[f"{label}_flloat_compile_ms_max"] = round(max(ftimes), 2)
        figures[f"{label}_flloat_correct_fraction"] = round(fok / ftotal, 4)
        figures[f"{label}_flloat_timeouts"] = failed
    write_figures("safety_candidates", figures)


def _expand_w(f):
    """flloat has no weak until: a W b = (a U b) | G a."""
    from raider_ros.safety.ltl import Binary, Not, Unary
    if isinstance(f, Binary):
        left, right = _expand_w(f.left), _expand_w(f.right)
        if f.op == "W":
            return Binary("|", Binary("U", left, right), Unary("G", left))
        return Binary(f.op, left, right)
    if isinstance(f, Not):
        return Not(_expand_w(f.f))
    if isinstance(f, Unary):
        return Unary(f.op, _expand_w(f.f))
    return f


if __name__ == "__main__":
    main()
