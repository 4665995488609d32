"""The constraint-aware PDDL planner (raider_ros/executor/safe_plan.py): plan, check, and when the
plan is unsafe search the product of task states and constraint automata."""
from __future__ import annotations

import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.executor.mapping import ActionMapping
from raider_ros.executor.pddl_plan import PddlError, load_task
from raider_ros.executor.safe_plan import Look, PrefixLooker, plan_safely
from raider_ros.safety import SafetyMonitor, SymbolicState
from raider_ros.safety.automata import Compiler
from raider_ros.safety.planning import MonitorLooker
from raider_ros.safety.service import SafetyService
from raider_ros.sim.scene import load_scene

COMPILER = Compiler()
HOUSE = SymbolicState.from_scene(load_scene(scenes_dir() / "house.scene.yaml"))
DOMAIN = """(define (domain rooms) (:requirements :strips :typing) (:types room)
  (:predicates (at ?r - room))
  (:action go :parameters (?a - room ?b - room) :precondition (at ?a) :effect (and (at ?b) (not (at ?a)))))"""
PROBLEM = """(define (problem p) (:domain rooms) (:objects kitchen bedroom living_room bathroom - room)
  (:init (at kitchen)) (:goal (at bathroom)))"""
MAPPING = ActionMapping.from_dict({"actions": {"go": {"query": "move_to({b})", "skill": "move_to", "args": ["{b}"]}}})
PAPER = [{"text": "you have to enter living room before bathroom", "ltl": "!agent_at(bathroom) U agent_at(living_room)"},
         {"text": "you have to enter bedroom before going into living room",
          "ltl": "!agent_at(living_room) U agent_at(bedroom)"}]


def monitor(*items) -> SafetyMonitor:
    m = SafetyMonitor(HOUSE, compiler=COMPILER)
    m.add_many(list(items))
    return m


def test_a_safe_plan_is_kept_as_planned():
    res = plan_safely(load_task(DOMAIN, PROBLEM), MAPPING, MonitorLooker(monitor({"ltl": "G !agent_at(bedroom)"})))
    assert not res.replanned and res.skills == ["move_to(bathroom)"]


def test_the_papers_constraints_give_the_papers_plan():
    res = plan_safely(load_task(DOMAIN, PROBLEM), MAPPING, MonitorLooker(monitor(*PAPER)))
    assert res.replanned and res.skills == ["move_to(bedroom)", "move_to(living_room)", "move_to(bathroom)"]
    assert res.unsafe_plan == ["move_to(bathroom)"] and res.unsafe_step == 0
    assert res.violated == ["you have to enter living room before bathroom"] and res.pruned > 0


def test_the_same_search_through_a_check_plan_service():
    svc = SafetyService(monitor(*PAPER))

    def check(actions):
        v = svc.check_plan(actions)
        return Look(v.verdict, tuple(v.automaton_states), None, v.violated_text,
                    v.first_unsafe_step if v.first_unsafe_step >= 0 else None)
    res = plan_safely(load_task(DOMAIN, PROBLEM), MAPPING, PrefixLooker(check))
    assert res.skills == ["move_to(bedroom)", "move_to(living_room)", "move_to(bathroom)"]


def test_no_safe_plan_names_the_rule():
    with pytest.raises(PddlError, match='without breaking "Never enter the bathroom."'):
        plan_safely(load_task(DOMAIN, PROBLEM), MAPPING,
                    MonitorLooker(monitor({"ltl": "G !agent_at(bathroom)", "text": "Never enter the bathroom."})))


def test_an_open_obligation_is_met_when_a_plan_can_meet_it_else_kept_as_a_fallback():
    m = monitor({"ltl": "F agent_at(bedroom)", "text": "Look into the bedroom at some point."})
    res = plan_safely(load_task(DOMAIN, PROBLEM), MAPPING, MonitorLooker(m))
    assert res.replanned and res.skills == ["move_to(bedroom)", "move_to(bathroom)"] and not res.pending_at_end
    # ending in the bathroom can never meet "after the bathroom, the bedroom": the plan leaves it open
    m = monitor({"ltl": "G (agent_at(bathroom) -> F agent_at(bedroom))"})
    res = plan_safely(load_task(DOMAIN, PROBLEM), MAPPING, MonitorLooker(m))
    assert res.skills[-1] == "move_to(bathroom)" and res.pending_at_end
