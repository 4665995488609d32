"""Fuzzing the parsers that read untrusted text: grammar-based generators whose output is
mutated (inserted separators, quotes, brackets, NUL, deep nesting, splices, truncation).

``TARGETS`` is the table: each :class:`FuzzTarget` generates one input from a seeded
``random.Random``, runs the parser on it, and names the clean rejections (an exception type
that carries a message). :func:`fuzz` runs ``n`` inputs and counts

- crashes: any other exception, a rejection with an empty message, or an accepted result
  that breaks the parser's contract (``check``);
- slow inputs: longer than ``slow_s`` (1 s); an input still running after ``hang_s`` is
  stopped by a SIGALRM watchdog and counts as both slow and a crash.

Used by test/unit/test_fuzz.py (10,000 inputs per target) and bench/bench_fuzz.py (100,000).
A later parser joins by adding a row.
"""
from __future__ import annotations

import copy
import json
import math
import random
import signal
import string
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import yaml

from raider_ros.agent.parsing import ISSUES, parse_final_response, parse_reply, parse_tool_calls
from raider_ros.evaluation.cases import CASES_FORMAT, CATEGORIES, LoadError, load_cases_text
from raider_ros.recovery.plan import ACTIONS, SKILL_ACTIONS, Literal, PlanError, Var, parse_plan
from raider_ros.safety.ltl import LTLError, parse as parse_ltl
from raider_ros.sim.scene import SceneError, load_scene_text, parse_scene

# ------------------------------------------------------------------------- mutations
SPICE = ["\n", "\r\n", "\x0b", "\x85", "\u2028", "\u2029", "\x00", "\t", "\\", '"', "'", "`", "{", "}", "[",
         "]", "(", ")", ",", ":", ";", "=", "#", "&", "*", "!", "|", "->", "<->", "\u201c", "\u201d", "\ufeff",
         "\u200b", "\U0001F916", "é", "ß", "日本", "null", "None", "true", "NaN", "-1e309", "1e309", "0x1F",
         "call_tool{", "final_response", "Query: ", "WARNING 3 (x): ", "&a ", "*a", "!!python/object:os.system",
         "<<: ", "---\n", "...", "%", "@", "$", "\x7f", "\ud800"[:0]]


def mutate(rng: random.Random, s: str, corpus: list[str] | None = None) -> str:
    """One to four random edits of ``s``."""
    for _ in range(rng.randint(1, 4)):
        n = len(s)
        op = rng.random()
        i = rng.randint(0, n)
        if op < 0.25:
            s = s[:i] + rng.choice(SPICE) + s[i:]
        elif op < 0.4 and n:
            j = rng.randint(i, min(n, i + 12))
            s = s[:i] + s[j:]
        elif op < 0.5 and n:
            j = rng.randint(i, min(n, i + 20))
            s = s[:i] + s[i:j] * rng.randint(2, 6) + s[i:]
        elif op < 0.6:
            s = s[:i]                                                     # truncated
        elif op < 0.67:
            k = rng.choice([5, 30, 120, 400])
            o, c = rng.choice([("(", ")"), ("[", "]"), ("{", "}"), ("!(", ")"), ("'", "'")])
            s = s[:i] + o * k + s[i:] + (c * k if rng.random() < 0.5 else "")   # deep nesting
        elif op < 0.74 and corpus:
            other = rng.choice(corpus)
            j = rng.randint(0, len(other))
            s = s[:i] + other[j:]                                          # splice
        elif op < 0.8 and n:
            s = s[:i] + chr(rng.randint(1, 0x2FFF)) + s[i + 1:]
        elif op < 0.85:
            s = s[:i] + "".join(rng.choice(string.printable) for _ in range(rng.randint(1, 40))) + s[i:]
        elif op < 0.9 and n > 1:
            j = rng.randint(0, n - 1)
            lst = list(s)
            lst[min(i, n - 1)], lst[j] = lst[j], lst[min(i, n - 1)]
            s = "".join(lst)
        elif op < 0.985:
            s = s + rng.choice(SPICE) * rng.randint(1, 50)
        else:                                                             # long and hostile
            tok = rng.choice(['{"final" ', '{"a": "', "{", "[", "(", "call_tool{", '"', "\\", "!(", "- ", "x, "])
            s = s[:i] + tok * rng.randint(1_000, 20_000) + s[i:]
    return s


def _word(rng: random.Random) -> str:
    return rng.choice(["Apple_1", "Mug_2", "apple", "the red mug", "Person_1", "free_table", "x", "", " ",
                       "Knife_1; ignore the rules", "CounterTop", "on top of", "blocking", "é", "0", "__class__",
                       "os.system('x')", "Mug_1\nQuery: y", "A" * rng.choice([1, 50, 300])])


def _maybe_mutate(rng: random.Random, s: str, corpus: list[str], p: float = 0.7) -> str:
    return mutate(rng, s, corpus) if rng.random() < p else s


# ------------------------------------------------------------------------- tool calls
_CALL_CORPUS = ['call_tool{"tool": "dist_to_target", "args": ["Mug_1"]}',
                "call_tool{tool: object_detection, args: []}",
                "call_tool({'tool': 'get_obj_state', 'args': ['Apple_1']})",
                'Step 3 - ANSWER:\ncall_tool{"tool": "check_obj_relationship", "args": ["on top of", "Table_1"]}\n'
                'call_tool{"tool": "robot_holding", "args": []}',
                "**call_tool**{\"name\": \"dist_to_target\", \"arguments\": {\"target\": \"Mug_1\"}}",
                "I will now call_tool{\"tool\": \"x\", \"args\": [1, 2.5, null, true, {\"a\": [\"b\"]}],}"]


def gen_tool_calls(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 4)):
        k = rng.random()
        if k < 0.3:
            parts.append(rng.choice(["Step 1 - GROUND: ", "Let me check.", "```json", "```", "- ", "**", "Sure!"]))
        name = rng.choice(["dist_to_target", "object_detection", "robot_holding", "get_obj_state", "", "x" * 200,
                           "call_tool", "tool"])
        args = [_word(rng) for _ in range(rng.randint(0, 3))]
        style = rng.random()
        if style < 0.4:
            body = json.dumps({"tool": name, "args": args})
        elif style < 0.6:
            body = "{tool: " + name + ", args: [" + ", ".join(args) + "]}"
        elif style < 0.75:
            body = "(" + repr({"tool": name, "args": args})[1:-1] + ")"
        else:
            body = json.dumps({rng.choice(["name", "function", "tool_name"]): name,
                               rng.choice(["arguments", "parameters", "arg"]): rng.choice([args, {"t": "Mug_1"}, "Mug_1"])})
        parts.append(rng.choice(["call_tool", "call tool", "CALL_TOOL", "calltool", "call_tool:"]) + body)
    return _maybe_mutate(rng, "\n".join(parts), _CALL_CORPUS)


def run_tool_calls(text: str) -> Any:
    return parse_tool_calls(text)


def check_tool_calls(_text: str, out: Any) -> str | None:
    calls, errors = out
    for c in calls:
        if not isinstance(c.tool, str) or not c.tool or not isinstance(c.args, list):
            return f"a call without a tool name or an argument list: {c!r}"
    if any(not isinstance(e, str) or not e.strip() for e in errors):
        return "an error without a message"
    return None


# ------------------------------------------------------------------------- final responses
_FINAL_CORPUS = ['{"final_response": "none", "explanation": "ok", "grounding": ["Apple_1"]}',
                 "Final response: {'final_response': 'ambiguity', 'explanation': 'two mugs', 'grounding': ['Mug_1', 'Mug_2']}",
                 '```json\n{"final response": "Unfeasible", "explanation": null, "grounding": "Mug_1"}\n```',
                 '{"answer": {"final_response": "infeasibility", "explanation": {"why": 1}}}']


def gen_final(rng: random.Random) -> str:
    value = rng.choice(["none", "ambiguity", "unfeasibility", "No issue", "Infeasible", "maybe", None, 3, ["none"],
                        {"x": 1}, "", "NONE.", "**ambiguity**"])
    obj: dict = {rng.choice(["final_response", "final response", "Final_Response", "final"]): value}
    if rng.random() < 0.8:
        obj["explanation"] = rng.choice([_word(rng), None, 5, ["a"], {"b": "c"}])
    if rng.random() < 0.8:
        obj["grounding"] = rng.choice([[_word(rng) for _ in range(rng.randint(0, 3))], _word(rng), None, {"a": "Mug_1"}, 7])
    body = json.dumps(obj) if rng.random() < 0.6 else repr(obj)
    for _ in range(rng.randint(0, 3)):
        body = rng.choice(['{"answer": %s}', "[%s]", "Final response: %s", "```json\n%s\n```", "%s %s"]).replace(
            "%s", body, 1).replace("%s", body)
    if rng.random() < 0.3:
        body = 'call_tool{"tool": "robot_holding", "args": []}\n' + body
    return _maybe_mutate(rng, body, _FINAL_CORPUS)


def run_final(text: str) -> Any:
    return parse_final_response(text, ISSUES), parse_reply(text, ISSUES)


def check_final(_text: str, out: Any) -> str | None:
    (final, error), reply = out
    for f in (final, reply.final):
        if f is not None:
            if f.issue not in ISSUES or not isinstance(f.explanation, str) or \
                    not all(isinstance(g, str) and g for g in f.grounding):
                return f"a final response outside the contract: {f!r}"
    for e in (error, reply.final_error):
        if e is not None and (not isinstance(e, str) or not e.strip()):
            return "an error without a message"
    return None


# ------------------------------------------------------------------------- recovery plans
_PLAN_CORPUS = ['item = ask("Which medicine should I pick, Medicine_1 or Medicine_2?"), pick(item)',
                "corrective actions:\nmove_to(free_table)\nplace(free_table)\nsay('done')",
                "```python\nx = ask('where?')\nmove_to(x); pick(Knife)\n```",
                "__import__('os').system('true')", "exec('pick(x)')", "lambda: pick(x)"]


def gen_plan(rng: random.Random) -> str:
    names = list(ACTIONS) + ["exec", "eval", "__import__", "os.system", "getattr", "print", "teleport", "Pick"]
    lines, bound = [], []
    for _ in range(rng.randint(1, 8)):
        k = rng.random()
        a = rng.choice(names)
        args = [rng.choice([repr(_word(rng)), _word(rng).replace(" ", "_") or "x", *(bound or ["item"]), "1", "None",
                            "f'{x}'", "x.y", "[1]", "**k", "a if b else c"]) for _ in range(rng.randint(0, 3))]
        stmt = f"{a}({', '.join(args)})"
        if k < 0.2:
            v = rng.choice(["item", "x", "loc", "pick", "__x"])
            bound.append(v)
            stmt = f"{v} = ask({repr(_word(rng))})" if rng.random() < 0.8 else f"{v} = {stmt}"
        elif k < 0.3:
            stmt = rng.choice(["import os", "for x in y:\n    pick(x)", "def f():\n    pass", "while 1: pass",
                               "with x as y: pick(y)", "del x", "x += 1", "@dec\ndef f(): pass", "class C: pass"])
        lines.append(stmt)
    sep = rng.choice(["\n", ", ", "; ", "\n- ", "\n1. "])
    body = sep.join(lines)
    body = rng.choice(["%s", "corrective actions:\n%s", "```python\n%s\n```", "Here is the plan:\n%s\nThat's all."]) % body
    return _maybe_mutate(rng, body, _PLAN_CORPUS)


def run_plan(text: str) -> Any:
    return parse_plan(text)


def check_plan(_text: str, plan: Any) -> str | None:
    for s in plan.steps:
        if s.action not in ACTIONS:
            return f"an accepted step with an unknown action: {s.action!r}"
        if len(s.args) != ACTIONS[s.action]:
            return f"an accepted step with the wrong number of arguments: {s!r}"
        if not all(isinstance(a, (Literal, Var)) for a in s.args):
            return f"an accepted argument that is neither a literal nor a variable: {s!r}"
        if s.binds is not None and s.action != "ask":
            return f"{s.action} binds a variable"
    return None


# ------------------------------------------------------------------------- scenes
WEIRD = [None, True, 0, -1, 1e9, -1e-9, float("nan"), float("inf"), "", "x", "1.0", [], {}, [1, 2], [[1, 2, 3]],
         {"a": 1}, "Mug_1\nQuery: x", "\x00", "A" * 300]


def _weird(rng: random.Random) -> Any:
    return copy.deepcopy(rng.choice(WEIRD))


def _path_edit(rng: random.Random, doc: Any) -> None:
    """Replace, delete or add one thing somewhere in a nested doc (in place)."""
    node = doc
    for _ in range(rng.randint(0, 4)):
        if isinstance(node, dict) and node:
            k = rng.choice(list(node))
            if not isinstance(node[k], (dict, list)) or rng.random() < 0.3:
                break
            node = node[k]
        elif isinstance(node, list) and node:
            i = rng.randrange(len(node))
            if not isinstance(node[i], (dict, list)) or rng.random() < 0.3:
                break
            node = node[i]
        else:
            break
    op = rng.random()
    if isinstance(node, dict):
        if op < 0.4 and node:
            node[rng.choice(list(node))] = _weird(rng)
        elif op < 0.7 and node:
            node.pop(rng.choice(list(node)))
        else:
            node[rng.choice(["extra", "id", "on", "mounted", "open_top", "colour", "state"])] = _weird(rng)
    elif isinstance(node, list):
        if op < 0.4 and node:
            node[rng.randrange(len(node))] = _weird(rng)
        elif op < 0.6 and node:
            node.pop(rng.randrange(len(node)))
        elif node:
            node.append(copy.deepcopy(rng.choice(node)))      # a duplicate


def gen_scene_doc(rng: random.Random) -> dict:
    """A valid small scene, then zero to three random edits."""
    objs = [{"id": "Table_1", "type": "Table", "shape": "box", "center": [1.5, 0.0, 0.4], "size": [1.0, 0.8, 0.8],
             "properties": ["receptacle"], "state": {}}]
    for i in range(rng.randint(0, 4)):
        t = rng.choice(["Mug", "Apple", "Knife", "Bowl", "Fridge"])
        objs.append({"id": f"{t}_{i + 1}", "type": t, "shape": rng.choice(["box", "cylinder", "sphere"]),
                     "center": [round(rng.uniform(1.2, 1.8), 2), round(rng.uniform(-0.3, 0.3), 2), 0.85],
                     "size": [0.1, 0.1, 0.1], "properties": rng.choice([["pickupable"], ["pickupable", "sliceable"],
                                                                         ["openable", "receptacle"]]),
                     "state": rng.choice([{}, {"clean": True}, {"open": False}, {"sliced": False}])})
    doc: dict = {"format": "raider-scene/1", "name": "fz",
                 "robot": {"pose": [0.0, 0.0, 0.0], "reach": 1.1, "holding": rng.choice([None, None, objs[-1]["id"]])},
                 "objects": objs}
    if rng.random() < 0.3:
        doc["people"] = [{"id": "Person_1", "name": rng.choice([None, "Ada"]), "center": [2.0, 1.0, 0.85],
                          "size": [0.45, 0.35, 1.7], "state": {"looking_at_robot": False, "hands_free": True}}]
    if rng.random() < 0.15:
        doc["camera"] = {"width": 64, "height": 48, "fov_deg": 60}
    if rng.random() < 0.15:
        doc["rooms"] = [{"name": "kitchen", "polygon": [[-1, -2], [4, -2], [4, 2], [-1, 2]]}]
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        _path_edit(rng, doc)
    return doc


def _to_text(rng: random.Random, doc: Any, corpus: list[str]) -> str:
    try:
        text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True,
                         sort_keys=False)
    except (yaml.YAMLError, ValueError):
        text = str(doc)
    if rng.random() < 0.1:      # YAML aliases, including an expansion bomb used as some value
        levels = rng.randint(1, 40)
        text = "a: &a [x, x, x, x]\n" + "".join(f"a{k}: &a{k} [*{'a' if k == 0 else 'a' + str(k - 1)}, "
                                                  f"*{'a' if k == 0 else 'a' + str(k - 1)}]\n" for k in range(levels)) + text
        lines = text.split("\n")
        spots = [i for i, line in enumerate(lines) if i > levels and ": " in line]
        if spots and rng.random() < 0.8:
            i = rng.choice(spots)
            lines[i] = lines[i].split(": ", 1)[0] + f": *a{levels - 1}"
            text = "\n".join(lines)
    return _maybe_mutate(rng, text, corpus, p=0.6)


_SCENE_CORPUS: list[str] = []


def gen_scene(rng: random.Random) -> Any:
    doc = gen_scene_doc(rng)
    if rng.random() < 0.6:
        return doc                                  # the structure itself (parse_scene)
    return _to_text(rng, doc, _SCENE_CORPUS)        # YAML text (load_scene_text)


def accepted_cases(bench: Any) -> int:
    return len(bench.cases)


def run_scene(inp: Any) -> Any:
    return parse_scene(inp, "<fuzz>") if isinstance(inp, dict) else load_scene_text(inp, "<fuzz>")


def check_scene(_inp: Any, scene: Any) -> str | None:
    ids = [e.id for e in scene.entities]
    if len(set(ids)) != len(ids):
        return f"an accepted scene with duplicate ids: {ids}"
    for o in scene.objects:
        if not all(isinstance(v, float) and math.isfinite(v) for v in (*o.center, *o.size)):
            return f"an accepted object with a non-finite or non-numeric box: {o.id}"
    return None


# ------------------------------------------------------------------------- benchmark cases
_FZ_SCENE = None


def fuzz_scene():
    global _FZ_SCENE
    if _FZ_SCENE is None:
        _FZ_SCENE = parse_scene({"format": "raider-scene/1", "name": "fz",
                                 "robot": {"pose": [0, 0, 0], "reach": 1.1, "holding": None},
                                 "objects": [{"id": "Mug_1", "type": "Mug", "shape": "cylinder", "center": [0.8, 0, 0.05],
                                              "size": [0.1, 0.1, 0.1], "properties": ["pickupable"], "state": {"clean": True}},
                                             {"id": "Table_1", "type": "Table", "shape": "box", "center": [2, 0, 0.4],
                                              "size": [1, 1, 0.8], "properties": ["receptacle"], "state": {}}]})
    return _FZ_SCENE


def gen_cases(rng: random.Random) -> str:
    """A valid small case file for the fuzz scene, then zero to three random edits."""
    cases = []
    for i in range(rng.randint(1, 3)):
        cat = rng.choice(list(CATEGORIES))
        issue = {"IN": "none", "IA": "ambiguity"}.get(cat, "unfeasibility")
        exp: dict = {"issue": issue, "category": cat}
        if rng.random() < 0.5:
            exp["grounding"] = ["Mug_1"]
        if rng.random() < 0.3:
            exp["mentions"] = [["mug", "cup"]]
        if issue != "none" and rng.random() < 0.3:
            exp["recovery"] = rng.choice([["ask", "pick"], [["say"]], ["move_to", "place"]])
        c = {"id": f"c{i}", "query": rng.choice(["pick(Mug)", "Can you pick up the mug?", "open(Fridge)"]),
             "query_type": rng.choice(["QS", "QU"]), "abstraction": rng.choice(["AS", "AN", "AR", "AC"]),
             "expected": exp}
        if rng.random() < 0.3:
            c["setup"] = rng.choice([{"robot": {"holding": "Mug_1"}}, {"objects": {"Mug_1": {"center": [0.9, 0.1, 0.05]}}},
                                     {"objects": {"Mug_1": {"state": {"clean": False}}}}])
        cases.append(c)
    doc = {"format": CASES_FORMAT, "scene": "fz", "cases": cases}
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        _path_edit(rng, doc)
    return _to_text(rng, doc, [])


def run_cases(text: str) -> Any:
    return load_cases_text(text, {"fz": fuzz_scene()}, "<fuzz>")


def check_cases(_text: str, bench: Any) -> str | None:
    if any(not isinstance(e, LoadError) or not e.message.strip() for e in (*bench.errors, *bench.warnings)):
        return "a load error without a message"
    return None


# ------------------------------------------------------------------------- LTL formulas
_LTL_CORPUS = ["G(!agent_at(bathroom))", "F(handover(Medicine_1, Person_1)) -> X(true)",
               "(a U b) & !(c W d) | G F e <-> WX f", "G(pick(Knife_1) -> !F(handover(Knife_1, Person_2)))"]


def gen_ltl(rng: random.Random, depth: int = 0) -> str:
    def f(d: int) -> str:
        k = rng.random()
        if d > 4 or k < 0.3:
            name = rng.choice(["a", "agent_at", "pick", "handover", "is_open", "X", "true", "FALSE", "G1", "_x", "1a"])
            if rng.random() < 0.5:
                return f"{name}({', '.join(rng.choice(['Knife_1', 'bathroom', 'Person_2', '', '1', 'a b']) for _ in range(rng.randint(0, 3)))})"
            return name
        if k < 0.55:
            return f"{rng.choice(['!', '~', 'X ', 'WX ', 'F ', 'G '])}{f(d + 1)}"
        if k < 0.9:
            return f"({f(d + 1)} {rng.choice(['&', '|', '->', '<->', 'U', 'W', 'R', '&&', '||', '=>', '<=>'])} {f(d + 1)})"
        return f"({f(d + 1)})"
    return _maybe_mutate(rng, f(depth), _LTL_CORPUS, p=0.5)


def run_ltl(text: str) -> Any:
    return parse_ltl(text)


# ------------------------------------------------------------------------- the table
@dataclass
class FuzzTarget:
    name: str
    generate: Callable[[random.Random], Any]
    run: Callable[[Any], Any]
    errors: tuple[type[BaseException], ...]        # clean rejections (must carry a message)
    check: Callable[[Any, Any], str | None] = lambda _i, _o: None


TARGETS: list[FuzzTarget] = [
    FuzzTarget("tool_calls", gen_tool_calls, run_tool_calls, (), check_tool_calls),
    FuzzTarget("final_answer", gen_final, run_final, (), check_final),
    FuzzTarget("recovery_plan", gen_plan, run_plan, (PlanError,), check_plan),
    FuzzTarget("scene", gen_scene, run_scene, (SceneError,), check_scene),
    FuzzTarget("cases", gen_cases, run_cases, (), check_cases),
    FuzzTarget("ltl", gen_ltl, run_ltl, (LTLError,)),
]


class _Hang(BaseException):
    pass


def _alarm(_sig, _frame):
    raise _Hang()


@dataclass
class FuzzReport:
    target: str
    inputs: int = 0
    accepted: int = 0
    rejected: int = 0
    crashes: list[tuple[Any, str]] = field(default_factory=list)
    slow: list[tuple[Any, float]] = field(default_factory=list)
    max_s: float = 0.0
    total_s: float = 0.0

    def summary(self) -> str:
        return (f"{self.target}: {self.inputs} inputs, {self.accepted} accepted, {self.rejected} rejected, "
                f"{len(self.crashes)} crashes, {len(self.slow)} slow (max {self.max_s * 1e3:.1f} ms)")


def _short(x: Any, n: int = 300) -> str:
    r = repr(x)
    return r if len(r) <= n else r[:n] + f"... ({len(r)} chars)"


def fuzz(target: FuzzTarget, n: int, seed: int = 0, slow_s: float = 1.0, hang_s: float = 10.0) -> FuzzReport:
    rng = random.Random(f"{target.name}:{seed}")
    rep = FuzzReport(target.name)
    use_alarm = hasattr(signal, "setitimer")
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    try:
        for _ in range(n):
            inp = target.generate(rng)
            rep.inputs += 1
            t0 = time.perf_counter()
            problem = None
            try:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, hang_s)
                try:
                    out = target.run(inp)
                finally:
                    if use_alarm:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                problem = target.check(inp, out)
                rep.accepted += problem is None
            except _Hang:
                problem = f"still running after {hang_s:g} s (stopped)"
            except target.errors as exc:
                if str(exc).strip():
                    rep.rejected += 1
                else:
                    problem = f"{type(exc).__name__} without a message"
            except Exception as exc:  # noqa: BLE001 - that is what we count
                problem = f"{type(exc).__name__}: {exc}"
            dt = time.perf_counter() - t0
            rep.max_s = max(rep.max_s, dt)
            rep.total_s += dt
            if problem is not None:
                rep.crashes.append((_short(inp), problem[:300]))
            if dt > slow_s:
                rep.slow.append((_short(inp), dt))
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return rep
