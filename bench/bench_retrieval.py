"""Scene-graph retrieval at house scale (EmbodiedRAG, issue 13).

For each benchmark set (the project's dev set; the shared examples when present), every case
is embedded into a house of N objects (raider_ros/sim/house.py: the case's scene is one room,
the rest are remembered objects) and run through the local pipeline:

* 1,000 objects: the rules detector in mode ``rag`` and in mode ``full`` on every case:
  retrieval recall (every object the expected grounding and the decisive relations need, of
  those the scene graph holds, is in the subgraph; with the objects perception never saw also
  counted: ``..._incl_unperceived``), tokens of the scene's representation (full / rag), of the first message, of
  the conversation, and verdict agreement rag vs full;
* 10,000 objects: retrieval only (no detector): the token ratio, retrieve time p95;
* a 10,000-object house: document-index update time per perception frame, resident memory of
  a process holding the scene graph and its index (subprocess), and the choice of the vector
  index: build time, query time and recall against exact search for every installed library.

Run: ``python bench/bench_retrieval.py [--quick] [--heldout] [--sets dev,shared,heldout] [--out NAME]``;
``--quick`` uses a few cases per set; ``--heldout`` ALSO reports data/benchmark/heldout (figures
named heldout_*; report them once, never tune on them); ``--sets`` picks the sets. Writes
bench/results/retrieval.json (or NAME.json).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from figures import shared_examples, write_figures  # noqa: E402
from raider_ros.common.token_count import count_tokens  # noqa: E402
from raider_ros.evaluation.cases import load_benchmark  # noqa: E402
from raider_ros.evaluation.local import LocalPipeline  # noqa: E402
from raider_ros.evaluation.retrieval_check import needed_objects  # noqa: E402
from raider_ros.evaluation.runner import Evaluator  # noqa: E402
from raider_ros.retrieval.scene_text import scene_text  # noqa: E402

QUERIES_K = 16


def _p95(values):
    return round(float(np.percentile(values, 95)), 2) if values else None


def _cases(directory: Path, quick: bool):
    bench = load_benchmark(directory)
    cases = bench.cases
    if quick:
        step = max(1, len(cases) // 12)
        cases = cases[::step]
    return bench, cases


def at_1000(directory: Path, quick: bool) -> dict:
    """The detector end to end, rag and full, on every case of the set."""
    bench, cases = _cases(directory, quick)
    pipe = LocalPipeline(scale=1000, retrieval="rag")
    ev = Evaluator(pipe, progress=None)
    rows = []
    for case in cases:
        r = ev.run_case(bench, case)
        if r.retrieval:
            rows.append(r.retrieval)
    with_need = [r for r in rows if r["needed"]]
    rag = sum(r["scene_tokens"] for r in rows)
    full = sum(r["full_scene_tokens"] for r in rows)
    missing = {r["case"]: r["missing"] for r in with_need if r["missing"]}
    if missing:
        print(f"  missing at 1,000 objects: {missing}")
    unperceived = {r["case"]: r["unperceived"] for r in with_need if r.get("unperceived")}
    if unperceived:
        print(f"  needed but never perceived (in no subgraph, the whole graph included): {unperceived}")
    disagree = [r["case"] for r in rows if not r["agrees_with_full"]]
    if disagree:
        print(f"  rag and full disagree on: {disagree}")
    return {
        "cases": len(rows),
        "retrieval_recall_1000_objects": round(sum(1 for r in with_need if r["recall"]) / max(1, len(with_need)), 4),
        "retrieval_recall_incl_unperceived_1000_objects": round(
            sum(1 for r in with_need if r["recall_incl_unperceived"]) / max(1, len(with_need)), 4),
        "needed_unperceived_cases_1000_objects": len(unperceived),
        "recall_cases_1000_objects": len(with_need),
        "prompt_tokens_ratio_1000_objects": round(full / max(1, rag), 1),
        "scene_tokens_rag_mean_1000_objects": round(rag / max(1, len(rows)), 1),
        "scene_tokens_full_mean_1000_objects": round(full / max(1, len(rows)), 1),
        "first_message_tokens_rag_mean_1000_objects": round(float(np.mean([r["first_message_tokens"] for r in rows])), 1),
        "first_message_tokens_full_mean_1000_objects": round(float(np.mean([r["full_first_message_tokens"] for r in rows])), 1),
        "conversation_tokens_rag_mean_1000_objects": round(float(np.mean([r["conversation_tokens"] for r in rows])), 1),
        "verdict_agreement_rag_full_1000_objects": round(sum(1 for r in rows if r["agrees_with_full"]) / max(1, len(rows)), 4),
        "retrieved_objects_mean_1000_objects": round(float(np.mean([len(r["retrieved"]) for r in rows])), 1),
    }


def at_10000(directory: Path, quick: bool) -> dict:
    """Retrieval only, every case of the set in a house of 10,000 objects."""
    bench, cases = _cases(directory, quick)
    pipe = LocalPipeline(scale=10000, retrieval="rag")
    ms, rag_tok, full_tok, first_rag, first_full, recall, recall_all = [], [], [], [], [], [], []
    for case in cases:
        world = bench.scene_for(case)
        pipe.prepare(bench.scenes[case.scene], case.setup)
        context = str(case.extra.get("context") or "")
        pipe.retriever.sync()                       # the perception frame's update, not the query
        t0 = time.perf_counter()
        sub = pipe.retriever.retrieve(case.query, context)
        ms.append((time.perf_counter() - t0) * 1000.0)
        st = scene_text(sub)
        fst = scene_text(pipe.retriever.retrieve(case.query, context, mode="full"))
        prompt = pipe._detector(str(case.extra.get("toolset") or "household")).prompt
        rag_tok.append(st.tokens)
        full_tok.append(fst.tokens)
        first_rag.append(count_tokens("\n".join([prompt.user_message(case.query, context or None, objects=st.in_sight), *st.lines])))
        first_full.append(count_tokens("\n".join([prompt.user_message(case.query, context or None, objects=fst.in_sight), *fst.lines])))
        need = needed_objects(case, world)
        if need:
            held = set(pipe.graph.snapshot().ids())
            recall.append(all(i in sub.nodes for i in need if i in held))
            recall_all.append(all(i in sub.nodes for i in need))
    return {
        "prompt_tokens_ratio_10000_objects": round(sum(full_tok) / max(1, sum(rag_tok)), 1),
        "scene_tokens_rag_mean_10000_objects": round(float(np.mean(rag_tok)), 1),
        "scene_tokens_full_mean_10000_objects": round(float(np.mean(full_tok)), 1),
        "first_message_tokens_rag_mean_10000_objects": round(float(np.mean(first_rag)), 1),
        "first_message_tokens_full_mean_10000_objects": round(float(np.mean(first_full)), 1),
        "retrieval_recall_10000_objects": round(sum(recall) / max(1, len(recall)), 4),
        "retrieval_recall_incl_unperceived_10000_objects": round(sum(recall_all) / max(1, len(recall_all)), 4),
        "retrieve_ms_p50_10000_objects": round(statistics.median(ms), 2),
        "retrieve_ms_p95_10000_objects": _p95(ms),
    }


def index_update_per_frame(frames: int = 40) -> dict:
    """A 10,000-object house: per perception frame (the view re-perceived, an object in it
    moved, now and then a new object put down), the scene graph update and the document
    store's sync (metadata, re-embedding of changed content, index writes)."""
    from raider_ros.perception.pipeline import PerceptionPipeline
    from raider_ros.perception.provider import TruthProvider
    from raider_ros.perception.scene_graph import SceneGraph
    from raider_ros.retrieval.retriever import Retriever
    from raider_ros.sim.house import generate_house, memory_entries
    from raider_ros.sim.world import SimWorld
    house = generate_house(10000, seed=7)
    world = SimWorld()
    world.load(house.view())
    provider, perception, graph = TruthProvider(), PerceptionPipeline("sim"), SceneGraph()
    graph.remember(memory_entries(house))
    retriever = Retriever(graph)

    def frame():
        f = world.frame()
        provider.update(world.truth())
        r = world.scene.robot
        t0 = time.perf_counter()
        graph.update(perception.process(f.rgb, f.depth, f.instance, f.labels, f.camera, robot_xy=(r.x, r.y)), provider)
        t1 = time.perf_counter()
        retriever.sync()
        return (t1 - t0) * 1000.0, (time.perf_counter() - t1) * 1000.0

    t0 = time.perf_counter()
    frame()
    first_sync_s = time.perf_counter() - t0
    graph_ms, index_ms = [], []
    movable = [o for o in world.scene.objects if "pickupable" in o.properties]
    for k in range(frames):
        if movable:
            o = movable[k % len(movable)]
            world.apply_setup({"objects": {o.id: {"state": dict(o.state)}}}, reset=False)
        if k % 10 == 5:   # something new in view: a remembered type appears, embedded once
            graph.remember([{"id": f"Notebook_{900 + k}", "type": "Notebook", "center": [0, 0, 0.1],
                             "size": [0.1, 0.1, 0.02], "seen_s_ago": 1.0}])
        g_ms, i_ms = frame()
        graph_ms.append(g_ms)
        index_ms.append(i_ms)
    return {"index_update_ms_per_frame_10000_objects": round(float(np.mean(index_ms)), 2),
            "index_update_ms_p95_10000_objects": _p95(index_ms),
            "scene_graph_update_ms_p50_10000_objects": round(statistics.median(graph_ms), 1),
            "first_sync_s_10000_objects": round(first_sync_s, 2)}


_RSS_SCRIPT = """
import os, resource, sys, json
sys.path.insert(0, {root!r})
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) / 1024.0
from raider_ros.retrieval.embedder import shared_embedder
shared_embedder().embed(['warm up'])
base = rss()
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.retrieval.retriever import Retriever
from raider_ros.sim.house import generate_house, memory_entries
g = SceneGraph()
g.remember(memory_entries(generate_house(10000, seed=7)))
r = Retriever(g)
r.sync()
r.retrieve('pick up the mug')
print(json.dumps({{'total': rss(), 'model': base}}))
"""


def rss_10000() -> dict:
    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT.format(root=str(ROOT))], capture_output=True,
                         text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return {"scene_graph_rss_mb_10000_objects": None}
    d = json.loads(out.stdout.strip().splitlines()[-1])
    return {"scene_graph_rss_mb_10000_objects": round(d["total"], 1),
            "scene_graph_rss_mb_10000_objects_without_model": round(d["total"] - d["model"], 1)}


def compare_indexes(directory: Path) -> dict:
    """Every installed index library on the document vectors of a 10,000-object house (two per
    document: the label and the label with its type's description), queried
    with the entity phrases of the set's cases; exact search is the reference."""
    from raider_ros.agent.backends.rules.knowledge import load_knowledge, type_key
    from raider_ros.retrieval.abstraction import RulesAbstractor
    from raider_ros.retrieval.documents import DocumentStore, label_of
    from raider_ros.retrieval.embedder import shared_embedder
    from raider_ros.retrieval.index import KINDS, available, make_index
    from raider_ros.sim.house import generate_house
    emb = shared_embedder()
    house = generate_house(10000, seed=7)
    kb = load_knowledge()
    store = DocumentStore(emb, "exact", describe=lambda t: kb.type_descriptions.get(type_key(t)))
    texts = []          # as the document store indexes them: each label and its described text
    for o in house.scene.objects:
        attrs = {"kind": "object", "type": o.type}
        label = label_of(o.id, attrs)
        texts += [label, store.text_of(o.id, attrs, label)]
    vecs = emb.embed(texts)
    bench = load_benchmark(directory)
    ab = RulesAbstractor()
    phrases = sorted({e.phrase for c in bench.cases for e in ab.abstract(c.query, str(c.extra.get("context") or "")).entities
                      if e.phrase})
    qv = emb.embed(phrases)
    exact = make_index("exact", vecs.shape[1], len(vecs))
    exact.upsert(list(range(len(vecs))), vecs)
    ref = [exact.search(q, QUERIES_K) for q in qv]
    out: dict = {"index_docs": len(vecs), "index_queries": len(phrases)}
    rng = np.random.default_rng(0)
    for kind in KINDS:
        if not available(kind):
            out[f"index_{kind}_available"] = 0
            continue
        gc.collect()
        t0 = time.perf_counter()
        idx = make_index(kind, vecs.shape[1], len(vecs))
        idx.upsert(list(range(len(vecs))), vecs)
        idx.search(qv[0], QUERIES_K)        # annoy builds its trees on the first search
        build = time.perf_counter() - t0
        times, rec = [], []
        for q, (rk, rs) in zip(qv, ref):
            t1 = time.perf_counter()
            keys, sims = idx.search(q, QUERIES_K)
            times.append((time.perf_counter() - t1) * 1000.0)
            kth = float(rs[-1]) - 1e-4       # ties: any document as similar as the k-th counts
            true_sims = vecs[keys] @ q if len(keys) else np.zeros(0)
            rec.append(min(1.0, float(np.sum(true_sims >= kth)) / len(rk)))
        # an update of one frame: 50 documents rewritten, 10 removed, 10 added
        ch = rng.choice(len(vecs), 60, replace=False)
        t2 = time.perf_counter()
        idx.upsert([int(k) for k in ch[:50]], vecs[ch[:50]])
        idx.remove([int(k) for k in ch[50:]])
        idx.upsert([int(k) for k in ch[50:]], vecs[ch[50:]])
        idx.search(qv[0], QUERIES_K)
        upd = (time.perf_counter() - t2) * 1000.0
        out.update({f"index_{kind}_build_s": round(build, 3), f"index_{kind}_query_ms_p95": _p95(times),
                    f"index_{kind}_recall_at_{QUERIES_K}": round(float(np.mean(rec)), 4),
                    f"index_{kind}_update_ms": round(upd, 2)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--heldout", action="store_true", help="also report the held-out set (once, at the end)")
    ap.add_argument("--sets", default=None,
                    help="comma-separated sets to run, of dev, shared, heldout (default: dev and shared, "
                         "plus heldout with --heldout); the house-wide figures are measured in every run")
    ap.add_argument("--out", default="retrieval", help="name of the results file (bench/results/<out>.json)")
    ap.add_argument("--parts", default="1000,10000,house",
                    help="comma-separated parts: 1000 (detector, rag and full), 10000 (retrieval only), "
                         "house (index update, memory, index comparison)")
    args = ap.parse_args()
    wanted = args.sets.split(",") if args.sets else ["dev", "shared"] + (["heldout"] if args.heldout else [])
    unknown = [w for w in wanted if w not in ("dev", "shared", "heldout")]
    if unknown:
        ap.error(f"unknown set(s) {', '.join(unknown)}: choose from dev, shared, heldout")
    sets = []
    if "dev" in wanted:
        sets.append(("dev", ROOT / "data" / "benchmark" / "dev"))
    shared = shared_examples()
    if "shared" in wanted and shared is not None:
        sets.append(("shared", shared))
    elif "shared" in wanted:
        print("shared examples not found: the shared set is not reported")
    if "heldout" in wanted:
        sets.append(("heldout", ROOT / "data" / "benchmark" / "heldout"))
    figures: dict = {"load_average_1min": round(os.getloadavg()[0], 2)}
    parts = set(args.parts.split(","))
    if parts - {"1000", "10000", "house"}:
        ap.error(f"unknown part(s) {', '.join(sorted(parts - {'1000', '10000', 'house'}))}")
    for name, directory in sets:
        print(f"== {name}: {directory}", flush=True)
        for part in [p for k, p in (("1000", at_1000), ("10000", at_10000)) if k in parts]:
            t0 = time.monotonic()
            for k, v in part(directory, args.quick).items():
                figures[f"{name}_{k}"] = v
            print(f"   {part.__name__} {time.monotonic() - t0:.0f} s", flush=True)
    if "house" in parts:
        figures.update(index_update_per_frame(10 if args.quick else 40))
        figures.update(rss_10000())
        figures.update(compare_indexes(ROOT / "data" / "benchmark" / "dev"))
    write_figures(args.out, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
