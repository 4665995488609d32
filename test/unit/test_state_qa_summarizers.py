"""Summarizers: each module's ROS-free state to a StateSummary (no ROS, no LLM)."""
from __future__ import annotations

import numpy as np
import pytest

from raider_ros.agent.flow import AgentResult, ToolCallRecord
from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports
from raider_ros.executor.mapping import ExecStep
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.recovery.plan import parse_plan
from raider_ros.sim.scene import Robot
from raider_ros.state_qa.summarizers import (MAX_LISTED, summarize_dialogue, summarize_executor, summarize_generic,
                                             summarize_issue_check, summarize_people, summarize_recovery,
                                             summarize_robot, summarize_world_model)
from raider_ros.state_qa.trackers import DialogueLog, ExecutionTracker, SkillLog
from scene_graph_fixtures import TRUTH, kitchen_result, synthetic_result


@pytest.fixture(scope="module")
def snapshot():
    g = SceneGraph(clock=lambda: 100.0)
    g.update(kitchen_result(), TruthProvider(TRUTH))
    return g.snapshot()


def test_world_model_lists_objects_states_and_relations(snapshot):
    sm = summarize_world_model(snapshot, stamp=7.0)
    assert sm.module == "world_model" and sm.stamp == 7.0
    f = sm.facts_dict
    assert f["visible_objects"].startswith("7 object(s): ")
    for oid in ("Apple_1", "Mug_1", "CoffeeMachine_1", "CounterTop_1"):
        assert oid in f["visible_objects"] and f"object:{oid}" in f
    assert "Person_1" not in f["visible_objects"]            # people go to their own module
    assert "2 mug" in f["type_counts"] and "coffee machine" in f["type_counts"]
    assert "switched on" in f["object:CoffeeMachine_1"] and "dirty" in f["object:Mug_2"]
    assert f["relations:Apple_1"] == "on top of CounterTop_1, on the left of Mug_1, near Banana_1"
    assert "Knife_1" not in sm.render()                       # in the truth but never perceived


def test_world_model_counts_when_large():
    g = SceneGraph(clock=lambda: 1.0)
    g.update(synthetic_result(60, 300))
    sm = summarize_world_model(g.snapshot())
    f = sm.facts_dict
    assert f["visible_objects"].startswith("60 object(s)") and "and 45 more" in f["visible_objects"]
    assert "6 apple" in f["type_counts"]
    assert len(sm.facts_named("object")) == MAX_LISTED
    assert len(sm.render()) < 12_000


def test_people_names_gaze_and_hands(snapshot):
    sm = summarize_people(snapshot)
    f = sm.facts_dict
    assert f["people_visible"] == "2 person(s): Person_1 (Adriana), Person_2 (not recognised)"
    assert f["recognised_people"] == "Adriana"
    assert "not looking at me" in f["person:Person_1"] and "hands free" in f["person:Person_1"]
    assert "not recognised" in f["person:Person_2"] and "hands busy" in f["person:Person_2"]


def test_empty_snapshot_says_nothing_is_seen():
    snap = SceneGraph().snapshot()
    assert summarize_world_model(snap).facts_dict["visible_objects"] == "no objects"
    assert summarize_people(snap).facts_dict["people_visible"] == "nobody"


def test_issue_check_from_an_agent_result_and_from_the_executor_outcome():
    res = AgentResult(issue="unfeasibility", explanation="Medicine_1 is 1.23 m away, beyond reach.",
                      grounding=["Medicine_1"], backend="rules (no LLM)",
                      tool_calls=[ToolCallRecord("object_detection", [], True, ""),
                                  ToolCallRecord("dist_robot_to_obj", ["Medicine_1"], True, ""),
                                  ToolCallRecord("dist_robot_to_obj", ["Medicine_2"], True, "")])
    f = summarize_issue_check("pick(medicine)", res, context="the one by the plant").facts_dict
    assert f["last_query"] == "pick(medicine)" and f["query_context"] == "the one by the plant"
    assert f["verdict"].startswith("unfeasibility") and "beyond reach" in f["explanation"]
    assert f["tools_used"] == "object_detection, dist_robot_to_obj (3 call(s))" and f["grounding"] == "Medicine_1"
    err = summarize_issue_check("pick(cup)", AgentResult(status="error", error="time limit of 20 s reached"))
    assert err.facts_dict["verdict"].startswith("error") and "time limit" in err.facts_dict["check_error"]
    ok = summarize_issue_check("pick(cup)", DetectionOutcome("none", "", ["Cup_1"]))
    assert ok.facts_dict["verdict"] == "no issue (feasible)" and "explanation" not in ok.facts_dict


def test_recovery_plan_and_rejected_plan():
    plan = parse_plan('choice = ask("Which medicine, Medicine_1 or Medicine_2?")\npick(choice)')
    f = summarize_recovery(plan, query="pick(medicine)", issue="ambiguity", explanation="two medicines",
                           backend="rules (no LLM)").facts_dict
    assert f["recovery_for"] == "pick(medicine) (ambiguity: two medicines)"
    assert f["recovery_actions"] == "ask, pick" and f["planned_questions"] == "Which medicine, Medicine_1 or Medicine_2?"
    assert 'pick(choice)' in f["recovery_plan"]
    bad = summarize_recovery(None, query="pick(x)", issue="unfeasibility", error="statement 1: imports are not allowed")
    assert "imports are not allowed" in bad.facts_dict["plan_rejected"] and "recovery_plan" not in bad.facts_dict


def _step(i: int, action: str, arg: str) -> ExecStep:
    return ExecStep(i, action, (arg,), f"{action}({arg})", action, {"x": arg}, ("{x}",), text=f"{action} the {arg}")


def test_executor_tracker_follows_a_run_with_an_issue_and_a_recovery():
    tracker = ExecutionTracker(clock=lambda: 10.0)
    skills = SkillLog(clock=lambda: 10.0)
    checks = iter([DetectionOutcome("none"), DetectionOutcome("unfeasibility", "Chair_1 blocks the path"),
                   DetectionOutcome("none")])
    ports = Ports(detect=lambda q, c: next(checks),
                  plan_recovery=lambda q, i, e, h: parse_plan('ask("Could you move the chair?")\nmove_to(Table_1)'),
                  skill=skills.wrap(lambda n, a, c: (True, f"{n} done")), ask=lambda q, t: "Sure.")
    steps = [_step(0, "pick", "Cup_1"), _step(1, "move_to", "Table_1")]
    tracker.start("demo", steps)
    assert "running" in summarize_executor(tracker).facts_dict["task_status"]
    out = Executor(tracker.attach(ports), ExecutorConfig()).run(steps)
    tracker.finish(out)
    f = summarize_executor(tracker).facts_dict
    assert f["task"] == "demo (2 steps)" and f["task_status"] == "finished successfully"
    assert f["steps_done"].startswith("2 of 2") and "move_to the Table_1" in f["task_plan"]
    assert "step 2: unfeasibility: Chair_1 blocks the path" in f["issues_met"]
    assert f["recoveries"] == "step 2: 1" and "move the chair" in f["recovery_plans_run"]
    assert [r.call for r in skills.records()] == ["pick(Cup_1)", "move_to(Table_1)"]


def test_idle_executor_says_it_has_no_task():
    assert "no task" in summarize_executor(ExecutionTracker()).text


def test_dialogue_questions_answers_and_silence():
    log = DialogueLog(clock=lambda: 3.0)
    ask = log.wrap_ask(lambda q, t: {"Which medicine?": "The one by the plant."}.get(q))
    say = log.wrap_say(lambda text: None)
    ask("Which medicine?", 5.0)
    say("I cannot recognise you.")
    ask("Who are you?", 5.0)
    log.add_line("WORLD: the person moved Chair_1")
    f = summarize_dialogue(log).facts_dict
    assert f["questions_asked"] == "2" and f["last_question"] == "Who are you?"
    assert f["last_answer"] == "The one by the plant." and f["unanswered_questions"] == "Who are you?"
    assert 'I said "I cannot recognise you."' in f["dialogue"] and "moved Chair_1" in f["person_changed_world"]
    lines = DialogueLog()
    lines.add_line("ROBOT: Where is the knife?")
    lines.add_line("PERSON: On the counter.")
    assert summarize_dialogue(lines).facts_dict["last_answer"] == "On the counter."
    assert summarize_dialogue(DialogueLog()).text == "Nobody has talked with me yet."


def test_robot_pose_holding_skills_and_failures():
    skills = SkillLog()
    skills.record("move_to", ["Table_1"], True, "moved to Table_1")
    skills.record("pick", ["Cup_1"], True, "picked Cup_1")
    skills.record("open", ["Fridge_1"], False, "cannot open Fridge_1: the robot's hand is full")
    sm = summarize_robot(Robot(x=1.0, y=2.0, yaw_deg=90.0, holding="Cup_1"), skills=["move_to", "pick", "open"],
                         skill_log=skills, surroundings=[("Table_1", 1.3, 2.0), ("Cup_1", 1.0, 2.1),
                                                         ("Sofa_1", 9.0, 9.0)])
    f = sm.facts_dict
    assert f["pose"] == "x 1.00 m, y 2.00 m, facing 90 deg" and f["holding"] == "Cup_1"
    assert f["near"] == "Table_1 (0.3 m)"                    # not the held cup, not the far sofa
    assert f["last_skill"] == "open(Fridge_1)" and f["last_skill_result"].startswith("failed: cannot open")
    assert f["picked_objects"] == "Cup_1" and "hand is full" in f["skill_failures"]
    empty = summarize_robot({"x": 0, "y": 0, "yaw_deg": 0, "holding": None})
    assert empty.facts_dict["holding"] == "nothing" and empty.facts_dict["last_skill"] == "none yet"


def test_generic_summary_for_the_safety_monitor():
    sm = summarize_generic("safety_monitor", {"constraints": ["never enter the bathroom", "keep 0.3 m from people"],
                                              "violations": [], "limits": {"speed_mps": 0.5, "armed": True}},
                           stamp=2.0)
    assert sm.facts_dict == {"constraints": "never enter the bathroom | keep 0.3 m from people", "violations": "none",
                             "limits.speed_mps": "0.5", "limits.armed": "yes"}
    assert "constraints" in sm.text
    with pytest.raises(TypeError, match="expected a mapping"):
        summarize_generic("safety_monitor", ["not", "a", "dict"])


def test_summaries_hold_no_numpy_values(snapshot):
    for sm in (summarize_world_model(snapshot), summarize_people(snapshot)):
        assert all(isinstance(v, str) and not isinstance(v, np.str_) for _, v in sm.facts)


def test_tracker_calls_on_change_after_every_change_with_the_state_already_updated():
    seen = []
    tracker = ExecutionTracker(clock=lambda: 10.0)
    tracker.on_change = lambda: seen.append(summarize_executor(tracker).facts_dict["task_status"])
    ports = Ports(detect=lambda q, c: DetectionOutcome("none"), plan_recovery=lambda *a: None,
                  skill=lambda n, a, c: (True, "ok"), ask=lambda q, t: None)
    steps = [_step(0, "pick", "Cup_1")]
    tracker.start("demo", steps)
    tracker.finish(Executor(tracker.attach(ports), ExecutorConfig()).run(steps))
    assert seen[0] == "running" and seen[-1] == "finished successfully" and len(seen) >= 4


def test_robot_says_who_it_handed_an_object_to_with_the_persons_name():
    from raider_ros.sim.world import SimWorld
    world = SimWorld()
    world.load_path("assistive_room")
    world.apply_setup({"people": {"Person_1": {"name": "Adriana"}}}, reset=False)
    log = SkillLog(clock=lambda: 5.0)
    log.record("pick", ["Medicine_1"], True, "picked Medicine_1")
    log.record("handover", ["Medicine_1", "Person_1"], True, "handed Medicine_1 over to Person_1")
    f = summarize_robot(world.scene.robot, skill_log=log, surroundings=world.scene).facts_dict
    assert f["handed_to:Medicine_1"] == "Person_1 (Adriana)"
    failed = SkillLog(clock=lambda: 5.0)
    failed.record("handover", ["Medicine_1", "Person_1"], False, "Person_1 is not looking at the robot")
    assert not summarize_robot(world.scene.robot, skill_log=failed).facts_named("handed_to")


def test_out_of_view_ages_change_in_coarse_steps_only():
    import networkx as nx
    from raider_ros.perception.scene_graph import SceneSnapshot

    def snap(now):
        g = nx.DiGraph()
        g.add_node("Cup_1", kind="object", type="Cup", visible=False, held=False, last_seen=100.0)
        return SceneSnapshot(g, {}, None, stamp=now, frame=1)

    assert summarize_world_model(snap(101.0), stamp=1.0) .facts == summarize_world_model(snap(108.0), stamp=1.0).facts
    assert "less than 10 s ago" in summarize_world_model(snap(101.0)).facts_dict["object:Cup_1"]
    assert "about 20 s ago" in summarize_world_model(snap(125.0)).facts_dict["object:Cup_1"]
    assert "about 3 min ago" in summarize_world_model(snap(290.0)).facts_dict["object:Cup_1"]


def test_world_model_at_house_scale_lists_few_and_counts_the_rest():
    import networkx as nx
    from raider_ros.perception.scene_graph import SceneSnapshot
    types = ["Apple", "Mug", "Bowl", "Chair", "Table", "Book", "Lamp", "Plant", "Cup", "Pan"]
    g = nx.DiGraph()
    for i in range(10_000):
        g.add_node(f"{types[i % 10]}_{i // 10 + 1}", kind="object", type=types[i % 10], visible=i < 200,
                   held=False, distance_m=float(i % 97), last_seen=50.0, state={}, properties=[])
    names = list(g.nodes)
    for i in range(20_000):
        g.add_edge(names[i % 10_000], names[(i * 7 + 1 + i // 10_000) % 10_000], relations={"near": {}})
    sm = summarize_world_model(SceneSnapshot(g, {}, None, stamp=100.0, frame=1))
    assert sm.facts_dict["visible_objects"].startswith("200 object(s)") and "and 185 more" in sm.text
    assert sm.facts_dict["type_counts"] == "20 apple, 20 book, 20 bowl, 20 chair, 20 cup, 20 lamp, 20 mug, " \
                                           "20 pan, 20 plant, 20 table"
    assert "9800 more known but out of view" in sm.text and "20000 spatial relation(s)" in sm.text
    assert len(sm.facts_named("object")) == MAX_LISTED and len(sm.render()) < 12_000


def test_the_safety_monitor_summary_holds_its_constraints_violations_and_refusals():
    from raider_ros.state_qa.summarizers import summarize_safety
    s = summarize_safety([("Never enter the bathroom.", "safe"), ("Never slice the bread.", "")],
                         violations=[], blocked=["move_to(Toilet_1) (breaks: Never enter the bathroom.)"], stamp=5.0)
    facts = dict(s.facts)
    assert s.module == "safety_monitor" and s.stamp == 5.0
    assert facts["constraints"] == "Never enter the bathroom. (safe) | Never slice the bread."
    assert facts["violations"] == "none"
    assert facts["blocked_actions"] == "move_to(Toilet_1) (breaks: Never enter the bathroom.)"
    assert "2 safety constraint(s)" in s.text and "last move_to(Toilet_1)" in s.text
    assert dict(summarize_safety([]).facts) == {"constraints": "none", "violations": "none", "blocked_actions": "none"}


def test_world_model_at_house_scale_gives_counts_not_ten_thousand_lines():
    from raider_ros.sim.house import generate_house, memory_entries
    house = generate_house(10_000, seed=3)
    g = SceneGraph(clock=lambda: 5000.0)
    g.update(kitchen_result(), TruthProvider(TRUTH))
    entries = memory_entries(house)
    unseen = g.remember(entries)            # ids the kitchen already has are left to what is seen
    assert unseen > 9900
    sm = summarize_world_model(g.snapshot())
    f = sm.facts_dict
    assert sm.text.startswith("I perceive 7 object(s) in view") and f"{unseen} more known but out of view" in sm.text
    assert f["unseen_objects"].endswith(f"and {unseen - (MAX_LISTED - 7)} more")
    # counts by room and by kind, most frequent first, bounded
    rooms = {a.get("room") for _, a in g.snapshot().graph.nodes(data=True) if a.get("memory")}
    by_room = f["unseen_by_room"]
    counted = [int(part.split()[0]) for part in by_room.split(", ") if not part.startswith("and ")]
    assert counted == sorted(counted, reverse=True)
    if len(rooms) > 12:
        assert f"and {len(rooms) - 12} more rooms" in by_room
    total = sum(counted) + (int(by_room.rsplit("(", 1)[1].split()[0]) if "more rooms" in by_room else 0)
    assert total == unseen
    assert "more kinds" in f["unseen_type_counts"]
    assert len(sm.facts_named("object")) == MAX_LISTED        # named one by one: 15, not 10,000
    assert len(sm.facts) < 40 and len(sm.render()) < 6000
