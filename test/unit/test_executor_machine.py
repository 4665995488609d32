"""The executor state machine with scripted ports: exact numbers of calls to detect,
plan_recovery and each skill per scenario, cancel between and inside steps, dead ports."""
from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest

from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports
from raider_ros.executor.mapping import ActionMapping
from raider_ros.executor.pddl_plan import load_named, plan
from raider_ros.recovery.plan import PlanError, parse_plan
from raider_ros.recovery.planner import RecoveryPlanner

NONE = DetectionOutcome("none")


def assistive_steps():
    """The four steps of the assistive plan, with PDDL names as queries (no scene ids)."""
    task = load_named("assistive")
    mapping = ActionMapping.load("", "assistive")
    mapping.objects = {}
    return mapping.bind(plan(task).actions, task)


class World:
    """Scripted ports. ``detections[query]`` is consumed in order (then NONE); ``skills[name]``
    likewise (then success); ``answers`` in order (then "ok")."""

    def __init__(self, detections=None, skills=None, answers=None, plans=None):
        self.detections = {k: list(v) for k, v in (detections or {}).items()}
        self.skills = {k: list(v) for k, v in (skills or {}).items()}
        self.answers = list(answers or [])
        self.plans = list(plans or [])           # plan texts (or exceptions) for plan_recovery
        self.calls = defaultdict(list)
        self.planner = RecoveryPlanner()

    def detect(self, query, context):
        self.calls["detect"].append((query, context))
        todo = self.detections.get(query)
        return todo.pop(0) if todo else NONE

    def plan_recovery(self, query, issue, explanation, holding):
        self.calls["plan_recovery"].append((query, issue, explanation, holding))
        if self.plans:
            item = self.plans.pop(0)
            if isinstance(item, BaseException):
                raise item
            return parse_plan(item)
        return self.planner.plan(query, issue, explanation, holding)

    def skill(self, name, args, cancel):
        self.calls["skill"].append((name, list(args)))
        todo = self.skills.get(name)
        result = todo.pop(0) if todo else (True, f"{name} done")
        return result(cancel) if callable(result) else result

    def ask(self, question, timeout):
        self.calls["ask"].append(question)
        return self.answers.pop(0) if self.answers else "ok"

    def say(self, text):
        self.calls["say"].append(text)

    def publish(self, index, query, issue, explanation, grounding):
        self.calls["publish"].append((index, query, issue, explanation, grounding))

    def feedback(self, index, step, stage, message):
        self.calls["feedback"].append((index, stage, message))

    def ports(self, **over):
        p = Ports(detect=self.detect, plan_recovery=self.plan_recovery, skill=self.skill, ask=self.ask,
                  say=self.say, publish_explanation=self.publish, feedback=self.feedback)
        for k, v in over.items():
            setattr(p, k, v)
        return p

    def skill_names(self):
        return [n for n, _ in self.calls["skill"]]


def run(world, steps=None, config=None, cancel=None, **ports):
    ex = Executor(world.ports(**ports), config or ExecutorConfig(cancel_grace_s=0.3))
    return ex.run(steps if steps is not None else assistive_steps(), cancel)


# --------------------------------------------------------------------------- scenarios
def test_no_issue_runs_every_step_once():
    w = World()
    out = run(w)
    assert out.status == "success" and out.steps_done == 4 == out.steps_total
    assert len(w.calls["detect"]) == 4
    assert len(w.calls["plan_recovery"]) == 0
    assert w.skill_names() == ["move_to", "pick", "move_to", "handover"]
    assert out.calls["detect"] == 4 and out.calls["skill"] == 4 and out.calls["plan_recovery"] == 0
    assert out.calls["skill:move_to"] == 2 and out.calls["skill:pick"] == 1 and out.calls["skill:handover"] == 1
    assert w.calls["ask"] == [] and w.calls["say"] == [] and w.calls["publish"] == []
    assert [c for c in w.calls["detect"]] == [("approach(medicine_counter)", ""), ("pick(medicine)", ""),
                                              ("approach(adriana)", ""), ("handover(medicine, adriana)", "")]


def test_one_issue_recovered_with_the_answer_as_context():
    w = World(detections={"pick(medicine)": [
        DetectionOutcome("ambiguity", "medicine could be Medicine_1 or Medicine_2", ["Medicine_1", "Medicine_2"]),
        DetectionOutcome("none", "", ["Medicine_1"]),
    ]}, answers=["It's the medicine closest to the plant."])
    out = run(w)
    assert out.success
    assert len(w.calls["detect"]) == 5
    assert len(w.calls["plan_recovery"]) == 1
    assert w.calls["plan_recovery"][0][:2] == ("pick(medicine)", "ambiguity")
    assert w.calls["ask"] == ["Which medicine should I pick up, Medicine_1 or Medicine_2?"]
    assert w.calls["detect"][2] == ("pick(medicine)", "It's the medicine closest to the plant.")
    # the recovery's pick(choice) is the step itself: the skill runs once, on the grounded id
    assert w.calls["skill"] == [("move_to", ["medicine_counter"]), ("pick", ["Medicine_1"]),
                                ("move_to", ["adriana"]), ("handover", ["medicine", "adriana"])]
    assert w.calls["publish"] == [(1, "pick(medicine)", "ambiguity", "medicine could be Medicine_1 or Medicine_2",
                                   ["Medicine_1", "Medicine_2"])]
    assert out.steps[1].recoveries == 1 and out.steps[1].status == "done"


@pytest.mark.parametrize("attempts", [0, 1, 3])
def test_issue_never_recovered_aborts_after_n_attempts(attempts):
    blocked = DetectionOutcome("unfeasibility", "the path to the counter is blocked by Chair_1")
    w = World(detections={"approach(medicine_counter)": [blocked] * 10})
    out = run(w, config=ExecutorConfig(max_recovery_attempts=attempts, cancel_grace_s=0.3))
    assert out.status == "aborted"
    assert len(w.calls["detect"]) == attempts + 1
    assert len(w.calls["plan_recovery"]) == attempts
    assert len(w.calls["ask"]) == attempts            # each recovery asks to move the chair
    assert w.calls["skill"] == []
    assert w.calls["say"] == ["I cannot carry out approach(medicine_counter): the path to the counter is "
                              "blocked by Chair_1"]
    assert f"not resolved after {attempts} recovery attempt(s)" in out.reason
    assert "blocked by Chair_1" in out.reason and "step 1" in out.reason
    assert out.steps_done == 0 and out.steps[0].status == "aborted" and len(out.steps) == 1


def test_default_bound_is_three():
    assert ExecutorConfig().max_recovery_attempts == 3


def test_skill_failure_is_treated_as_an_issue_and_recovered():
    w = World(skills={"pick": [(False, "Medicine_1 is 0.62 m away, beyond the reach of 0.5 m")]},
              answers=["Here you are, I moved it closer."])
    out = run(w)
    assert out.success
    assert len(w.calls["detect"]) == 5               # the failed step is checked again
    assert len(w.calls["plan_recovery"]) == 1
    q, issue, explanation, _ = w.calls["plan_recovery"][0]
    assert (q, issue) == ("pick(medicine)", "unfeasibility")
    assert "beyond the reach" in explanation
    assert w.skill_names() == ["move_to", "pick", "pick", "move_to", "handover"]
    assert out.calls["skill:pick"] == 2


def test_skill_that_keeps_failing_aborts_with_its_message():
    w = World(skills={"move_to": [(False, "Chair_1 blocks the path")] * 10})
    out = run(w, config=ExecutorConfig(max_recovery_attempts=2, cancel_grace_s=0.3))
    assert out.status == "aborted"
    assert len(w.calls["detect"]) == 3 and len(w.calls["plan_recovery"]) == 2
    assert out.calls["skill:move_to"] == 3
    assert "Chair_1 blocks the path" in out.reason


def test_recovery_skills_use_aliases_current_location_and_track_holding():
    steps = ActionMapping.from_dict({"actions": {"pick": {"query": "pick({i})", "skill": "pick", "args": ["{i}"]}}}) \
        .bind(plan(load_named("assistive")).actions[1:2], load_named("assistive"))
    w = World(detections={"pick(medicine)": [DetectionOutcome("unfeasibility", "the robot is already holding Egg_1")]})
    cfg = ExecutorConfig(aliases={"free_table": "Table_9"}, start_location="Counter_1", initial_holding="Egg_1")
    out = run(w, steps=steps, config=cfg)
    assert out.success
    assert w.calls["plan_recovery"][0][3] == "Egg_1"
    assert w.calls["skill"] == [("move_to", ["Table_9"]), ("place", ["Table_9"]), ("move_to", ["Counter_1"]),
                                ("pick", ["medicine"])]
    assert len(w.calls["detect"]) == 2 and len(w.calls["plan_recovery"]) == 1


def test_answers_bound_to_variables_are_resolved_to_ids():
    w = World(detections={"approach(medicine_counter)": [DetectionOutcome("unfeasibility", "x")]},
              plans=['loc = ask("Where should I go?"), move_to(loc), say(loc), move_to(medicine_counter)'],
              answers=["next to the window"])
    out = run(w, resolve_name=lambda text: "Window_1" if "window" in text else text)
    assert out.success
    assert w.calls["skill"][0] == ("move_to", ["Window_1"])
    assert w.calls["say"] == ["next to the window"]
    assert len(w.calls["skill"]) == 5          # the recovery's move_to, then the 4 steps


def test_unanswered_question_ends_the_recovery_attempt():
    blocked = DetectionOutcome("unfeasibility", "the path is blocked by Chair_1")
    w = World(detections={"approach(medicine_counter)": [blocked, NONE]},
              plans=['ask("Could you move the chair?"), move_to(free_table), move_to(medicine_counter)'])
    w.answers = [None]
    out = run(w)
    assert out.success
    assert len(w.calls["ask"]) == 1
    assert w.skill_names()[0] == "move_to" and w.calls["skill"][0][1] == ["medicine_counter"]  # no free_table move
    assert any("no answer" in x for x in out.warnings)


def test_rejected_recovery_plans_count_as_attempts():
    blocked = DetectionOutcome("unfeasibility", "blocked by Chair_1")
    w = World(detections={"approach(medicine_counter)": [blocked] * 5},
              plans=[PlanError("imports are not allowed")] * 5)
    out = run(w, config=ExecutorConfig(max_recovery_attempts=2, cancel_grace_s=0.3))
    assert out.status == "aborted"
    assert len(w.calls["detect"]) == 3 and len(w.calls["plan_recovery"]) == 2
    assert sum("recovery plan was rejected" in x for x in out.warnings) == 2


# --------------------------------------------------------------------------- cancel
def test_cancel_between_steps():
    cancel = threading.Event()
    w = World()

    def feedback(index, step, stage, message):
        w.feedback(index, step, stage, message)
        if stage == "done" and index == 0:
            cancel.set()

    out = run(w, cancel=cancel, feedback=feedback)
    assert out.status == "cancelled"
    assert "step 2" in out.reason and "before the issue check" in out.reason
    assert len(w.calls["detect"]) == 1 and w.skill_names() == ["move_to"]
    assert out.steps_done == 1 and out.steps[1].status == "cancelled"


def test_cancel_inside_a_skill_that_honours_it():
    cancel = threading.Event()

    def slow_move(c):
        threading.Timer(0.1, cancel.set).start()      # the person presses cancel while the robot moves
        deadline = time.monotonic() + 5
        while not c.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        return (False, "cancelled") if c.is_set() else (True, "arrived")

    w = World(skills={"move_to": [slow_move]})
    t0 = time.monotonic()
    out = run(w, cancel=cancel)
    assert time.monotonic() - t0 < 3
    assert out.status == "cancelled" and "during move_to" in out.reason
    assert len(w.calls["skill"]) == 1 and len(w.calls["plan_recovery"]) == 0 and len(w.calls["detect"]) == 1


def test_cancel_inside_a_skill_that_ignores_it():
    cancel = threading.Event()
    def deaf_move(c):
        threading.Timer(0.05, cancel.set).start()
        time.sleep(3)
        return True, "arrived"

    w = World(skills={"move_to": [deaf_move]})
    t0 = time.monotonic()
    out = run(w, cancel=cancel, config=ExecutorConfig(cancel_grace_s=0.2))
    assert time.monotonic() - t0 < 2
    assert out.status == "cancelled" and "did not stop within 0.2 s" in out.reason


def test_cancel_during_a_recovery_question():
    cancel = threading.Event()
    blocked = DetectionOutcome("unfeasibility", "blocked by Chair_1")
    w = World(detections={"approach(medicine_counter)": [blocked]})

    def ask(question, timeout):
        w.calls["ask"].append(question)
        cancel.set()
        return "sure"

    out = run(w, cancel=cancel, ask=ask)
    assert out.status == "cancelled" and "after asking" in out.reason
    assert len(w.calls["detect"]) == 1 and w.calls["skill"] == []


# --------------------------------------------------------------------------- dead ports
def test_skill_port_that_raises_aborts_with_the_reason():
    def boom(c):
        raise ConnectionError("execute_skill action server is not available")

    w = World(skills={"move_to": [boom]})
    out = run(w)
    assert out.status == "aborted"
    assert "the skill port failed: ConnectionError: execute_skill action server is not available" in out.reason
    assert len(w.calls["plan_recovery"]) == 0


def test_skill_port_that_hangs_times_out():
    w = World(skills={"move_to": [lambda c: (time.sleep(2), (True, ""))[1]]})
    out = run(w, config=ExecutorConfig(skill_timeout_s=0.2, cancel_grace_s=0.3))
    assert out.status == "aborted" and "the skill port did not answer within 0.2 s" in out.reason


def test_a_port_that_hangs_is_named_by_what_serves_it():
    # a SIGKILLed server still looks alive to DDS for a while: the reason must name it
    w = World(skills={"move_to": [lambda c: (time.sleep(2), (True, ""))[1]]})
    names = {"skill": "the execute_skill action server", "detect": "the detect_issue service"}
    out = run(w, config=ExecutorConfig(skill_timeout_s=0.2, cancel_grace_s=0.3, port_names=names))
    assert out.status == "aborted"
    assert "the skill port (the execute_skill action server) did not answer within 0.2 s" in out.reason


def test_skill_port_with_a_malformed_answer():
    w = World(skills={"move_to": ["yes"]})
    out = run(w)
    assert out.status == "aborted" and "expected (success, message)" in out.reason


def test_detection_error_and_dead_detector():
    w = World(detections={"approach(medicine_counter)": [
        DetectionOutcome("", status="error", reason="LLM endpoint unreachable")]})
    out = run(w)
    assert out.status == "aborted" and "the issue check failed: LLM endpoint unreachable" in out.reason

    def dead(query, context):
        raise TimeoutError("no detector")

    out = run(World(), detect=dead)
    assert out.status == "aborted" and "the detect port failed: TimeoutError: no detector" in out.reason

    w2 = World(detections={"approach(medicine_counter)": [DetectionOutcome("maybe")]})
    assert "expected none, ambiguity, unfeasibility" in run(w2).reason


def test_recovery_planner_failure_aborts():
    blocked = DetectionOutcome("unfeasibility", "blocked")
    w = World(detections={"approach(medicine_counter)": [blocked]}, plans=[RuntimeError("LLM HTTP 429")])
    out = run(w)
    assert out.status == "aborted" and "plan_recovery port failed: RuntimeError: LLM HTTP 429" in out.reason


def test_feedback_and_publish_failures_are_only_warnings():
    def bad(*a):
        raise RuntimeError("publisher gone")

    blocked = DetectionOutcome("unfeasibility", "blocked by Chair_1")
    w = World(detections={"approach(medicine_counter)": [blocked]})
    out = run(w, feedback=bad, publish_explanation=bad, say=bad)
    assert out.success
    assert any("feedback port failed" in x for x in out.warnings)
    assert any("publish_explanation port failed" in x for x in out.warnings)
