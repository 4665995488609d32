"""Evaluation reports: ``report.json``, ``report.md`` (Table 1 layout) and ``report.png``
(Figure 10 layout).

``build_report`` turns scored case results into one JSON-ready dict; ``write_reports`` writes
the three files. The Markdown and PNG writers take a *list* of reports, one per method
(backend), so runs of several backends can be put side by side (``evaluate --compare``).
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any, Sequence

from .cases import ABSTRACTIONS, CATEGORIES, CATEGORY_NAMES, QUERY_TYPES, LoadError
from .retrieval_check import summarize_retrieval
from .scoring import CaseResult, breakdown, failure_counts, summarize, warning_counts

REPORT_JSON, REPORT_MD, REPORT_PNG = "report.json", "report.md", "report.png"


def build_report(backend: str, results: Sequence[CaseResult], *, load_errors: Sequence[LoadError] = (),
                 load_warnings: Sequence[LoadError] = (), directory: str = "",
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    report = {
        "backend": backend,
        "directory": directory,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cases": len(results),
        "overall": summarize(results),
        "by_category": breakdown(results, "category", CATEGORIES),
        "by_query_type": breakdown(results, "query_type", QUERY_TYPES),
        "by_abstraction": breakdown(results, "abstraction", ABSTRACTIONS),
        "recov_plan": summarize(results)["recov_plan"],
        "warning_rate": summarize(results)["warning_rate"],
        "warnings_by_type": warning_counts(results),
        "warning_self_corrected": _self_corrected(results),
        "failure_reasons": failure_counts(results),
        "results": [r.to_dict() for r in results],
        "load_errors": [e.to_dict() | {"text": str(e)} for e in load_errors],
        "load_warnings": [w.to_dict() | {"text": str(w)} for w in load_warnings],
    }
    retrieval = summarize_retrieval([r.retrieval for r in results if r.retrieval])
    if retrieval is not None:
        report["retrieval"] = retrieval
    if extra:
        report.update(extra)
    return report


def _self_corrected(results: Sequence[CaseResult]) -> float | None:
    """Among the cases with a warning, the share still explained right (the paper: 86.8 %)."""
    warned = [r for r in results if r.warnings]
    return sum(1 for r in warned if r.expl) / len(warned) if warned else None


def write_reports(out_dir: str | Path, report: dict[str, Any],
                  others: Sequence[dict[str, Any]] = ()) -> dict[str, Path]:
    """Write report.json (this run), report.md and report.png (this run plus ``others``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / REPORT_JSON, "md": out / REPORT_MD, "png": out / REPORT_PNG}
    paths["json"].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    runs = [*others, report]
    paths["md"].write_text(markdown(runs, failures_of=report), encoding="utf-8")
    plot(runs, paths["png"])
    return paths


def load_report(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if p.is_dir():
        p = p / REPORT_JSON
    data = json.loads(p.read_text(encoding="utf-8"))
    for key in ("backend", "overall", "by_category"):
        if key not in data:
            raise ValueError(f"{p}: not an evaluation report (no {key!r})")
    return data


# --------------------------------------------------------------------------- Markdown
NO_LLM_NOTE = ("For a backend with no LLM (rules (no LLM)) no model is called: its turns are the "
               "reasoner's steps through the same text protocol, and its prompt tokens count the prompt "
               "an LLM would have been sent (cl100k), its completion tokens the text it wrote.")

def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100.0 * v:.1f}"


def _num(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def _overall_table(runs: Sequence[dict[str, Any]], key: str | None, order: Sequence[str]) -> list[str]:
    header = ["method", *([key] if key else []), "cases", "Grnd %", "Det %", "Expl %", "time mean s",
              "time p95 s", "turns", "tool calls", "prompt tok", "completion tok"]
    rows = []
    for run in runs:
        groups = {"all": run["overall"]} if key is None else run.get(f"by_{key}", {})
        for name in [g for g in order if g in groups] + sorted(set(groups) - set(order)):
            s = groups[name]
            rows.append([run["backend"], *([name] if key else []), str(s["cases"]), _pct(s["grnd"]),
                         _pct(s["det"]), _pct(s["expl"]), _num(s["time_mean_s"]), _num(s["time_p95_s"]),
                         _num(s["llm_turns_mean"], 1), _num(s["tool_calls_mean"], 1),
                         _num(s["prompt_tokens_mean"], 0), _num(s.get("completion_tokens_mean"), 0)])
    return _table(header, rows)


def markdown(runs: Sequence[dict[str, Any]], failures_of: dict[str, Any] | None = None) -> str:
    """Tables: Expl by issue type (Table 1 layout), overall Grnd/Det/Expl and time
    (Figure 10's numbers), breakdowns by query type and abstraction, then the failed cases
    and load errors of ``failures_of``."""
    lines = ["# Issue detection evaluation", ""]
    for run in runs:
        lines.append(f"- **{run['backend']}**: {run['cases']} cases"
                     + (f" from `{run['directory']}`" if run.get("directory") else "")
                     + (f", {len(run['load_errors'])} load errors" if run.get("load_errors") else ""))
    lines += ["", "## Explanation success (Expl %) by issue type", ""]
    header = ["method", *(f"{c}" for c in CATEGORIES)]
    rows = [[run["backend"], *(_pct(run["by_category"].get(c, {}).get("expl")) for c in CATEGORIES)]
            for run in runs]
    rows.append(["cases", *(str(runs[-1]["by_category"].get(c, {}).get("cases", 0)) for c in CATEGORIES)])
    lines += _table(header, rows)
    lines += ["", "Issue types: " + ", ".join(f"{c} {CATEGORY_NAMES[c]}" for c in CATEGORIES) + ".", ""]
    lines += ["## Overall", ""] + _overall_table(runs, None, ())
    lines += ["", NO_LLM_NOTE if any("no LLM" in str(r["backend"]) for r in runs) else
              "Turns are LLM replies; tokens are the model's prompt and completion tokens.", ""]
    lines += ["## By issue type", ""] + _overall_table(runs, "category", CATEGORIES)
    lines += ["", "## By query type", ""] + _overall_table(runs, "query_type", QUERY_TYPES)
    lines += ["", "## By abstraction", ""] + _overall_table(runs, "abstraction", ABSTRACTIONS)

    lines += ["", "## Recovery plans (Recov_Plan %, Table 2 layout)", ""]
    cats = [c for c in CATEGORIES if c != "IN"]
    rows = []
    for run in runs:
        o = run["overall"]
        rows.append([run["backend"], _pct(o.get("recov_plan")),
                     *(_pct(run["by_category"].get(c, {}).get("recov_plan")) for c in cats)])
    rows.append(["cases", str(runs[-1]["overall"].get("recov_plan_cases", 0)),
                 *(str(runs[-1]["by_category"].get(c, {}).get("recov_plan_cases", 0)) for c in cats)])
    lines += _table(["method", "All", *cats], rows)
    lines += ["", "Only cases whose issue was detected and explained, and that carry an expected "
              "recovery (`expected.recovery`), are scored.", ""]
    lines += ["## Warnings and failure reasons", ""]
    rows = [[run["backend"], _pct(run.get("warning_rate")), _pct(run.get("warning_self_corrected")),
             ", ".join(f"{k}: {v}" for k, v in (run.get("warnings_by_type") or {}).items()) or "–",
             ", ".join(f"{k} {v}" for k, v in (run.get("failure_reasons") or {}).items() if v) or "–"]
            for run in runs]
    lines += _table(["method", "cases with a warning %", "of those explained %", "warnings by type",
                     "failure reasons"], rows)
    for run in runs:
        rep = run.get("repeatability")
        if rep:
            lines += ["", f"## Repeatability of {run['backend']} ({rep['runs']} runs per case)", ""]
            lines += _table(["case", "agreement", "Det rate", "Expl rate", "time mean s", "time std s"],
                            [[cid, f"{c['agreement']:.2f}", f"{c['det_rate']:.2f}", f"{c['expl_rate']:.2f}",
                              f"{c['time_mean_s']:.2f}", f"{c['time_std_s']:.2f}"] for cid, c in rep["cases"].items()])

    if failures_of is not None:
        failed = [r for r in failures_of.get("results", []) if not r["expl"]]
        lines += ["", f"## Cases without a correct explanation ({len(failed)})", ""]
        if failed:
            rows = []
            for r in failed:
                why = r.get("error") or ""
                if not why and not r["det"]:
                    why = f"reported {r['reported']}"
                elif not why and r.get("missed_mentions"):
                    why = "explanation lacks " + "; ".join("/".join(g) for g in r["missed_mentions"])
                rows.append([r["id"], r["category"], r["expected"], str(r["reported"]),
                             {True: "yes", False: "no", None: "–"}[r["grnd"]], why[:160]])
            lines += _table(["case", "type", "expected", "reported", "Grnd", "reason", "why"],
                            [[*row[:5], str(r.get("failure_reason") or "–"), row[5]] for row, r in zip(rows, failed)])
        errors = failures_of.get("load_errors") or []
        if errors:
            lines += ["", f"## Load errors ({len(errors)})", ""] + [f"- {e['text']}" for e in errors]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- figure
def plot(runs: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Grouped bars Grnd / Det / Expl per method, mean time per case written above each group."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = (("grnd", "Grnd", "#4C72B0"), ("det", "Det", "#DD8452"), ("expl", "Expl", "#55A868"))
    width = 0.26
    fig, ax = plt.subplots(figsize=(max(4.5, 1.9 * len(runs) + 2.0), 4.2), dpi=120)
    for i, run in enumerate(runs):
        o = run["overall"]
        for j, (key, label, color) in enumerate(metrics):
            value = 100.0 * (o.get(key) or 0.0)
            x = i + (j - 1) * width
            ax.bar(x, value, width, color=color, label=label if i == 0 else None)
            ax.text(x, value + 1.0, "–" if o.get(key) is None else f"{value:.1f}",
                    ha="center", va="bottom", fontsize=7)
        t = o.get("time_mean_s")
        ax.text(i, 112, "–" if t is None else f"{t:.2f} s", ha="center", va="bottom", fontsize=8,
                fontweight="bold")
    ax.set_xticks(range(len(runs)), [r["backend"] for r in runs], fontsize=8)
    ax.set_ylim(0, 122)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("success rate (%)")
    ax.set_xlim(-0.6, len(runs) - 0.4)
    ax.set_title("Grounding, detection, explanation; mean time per case", fontsize=9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
