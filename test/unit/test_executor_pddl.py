"""PDDL reading (errors with file, line and cause), planning with pyperplan (time limit,
unsolvable problems), ready plans, and action mappings."""
from __future__ import annotations

from pathlib import Path

import pytest

from raider_ros.common.paths import data_dir
from raider_ros.executor.mapping import ActionMapping, MappingError, parse_plan_lines
from raider_ros.executor.task import TaskError, parse_aliases, resolve_task
from raider_ros.executor.pddl_plan import GroundAction, PddlError, load_named, load_task, plan

DOMAIN = (data_dir() / "pddl" / "assistive" / "domain.pddl").read_text()
PROBLEM = (data_dir() / "pddl" / "assistive" / "problem.pddl").read_text()


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def error(domain=DOMAIN, problem=PROBLEM) -> PddlError:
    with pytest.raises(PddlError) as err:
        plan(load_task(domain, problem))
    return err.value


# --------------------------------------------------------------------------- planning
def test_assistive_plan_is_the_four_steps_of_the_paper():
    result = plan(load_named("assistive"))
    assert [str(a) for a in result.actions] == [
        "(approach start medicine_counter)", "(pick medicine medicine_counter)",
        "(approach medicine_counter adriana)", "(handover medicine adriana)"]


def test_kitchen_plan_puts_the_egg_down_fetches_the_knife_and_slices():
    result = plan(load_named("kitchen"))
    assert [str(a) for a in result.actions] == [
        "(place egg free_table start)", "(move_to start knife_corner)", "(pick knife counter_corner knife_corner)",
        "(move_to knife_corner board_side)", "(slice tomato knife cutting_board board_side)"]


@pytest.mark.parametrize("search", ["astar", "gbf", "bfs"])
def test_every_search_solves_both_domains(search):
    assert len(plan(load_named("assistive"), search=search).actions) == 4
    assert len(plan(load_named("kitchen"), search=search).actions) == 5


def test_files_and_inline_text_give_the_same_task(tmp_path: Path):
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    from_files = plan(load_task(tmp_path / "d.pddl", str(tmp_path / "p.pddl"))).actions
    assert from_files == plan(load_task(DOMAIN, PROBLEM)).actions


# --------------------------------------------------------------------------- malformed
def test_missing_parenthesis_points_at_the_unclosed_section():
    broken = DOMAIN.replace("(not (robot-at ?from))))", "(not (robot-at ?from)))")
    e = error(broken)
    assert e.line == line_of(DOMAIN, "(:action approach")
    assert "')' is missing" in str(e) and str(e).startswith("<domain>:")


def test_extra_closing_parenthesis():
    e = error(DOMAIN.replace("(hand-empty))", "(hand-empty)))", 1))     # closes (:action pick early
    assert "a ')' too many" in str(e) and e.line == line_of(DOMAIN, "(hand-empty))")
    e = error(PROBLEM + ")")
    assert "a ')' too many" in str(e) and e.line == line_of(PROBLEM, "(:goal")
    e = error(problem=") " + PROBLEM)
    assert "unmatched ')'" in str(e) and e.line == 1 and e.column == 1


def test_misspelt_keyword_gives_line_column_and_what_was_expected():
    e = error(DOMAIN.replace(":precondition (robot-at", ":precondtion (robot-at"))
    assert e.line == line_of(DOMAIN, ":precondition (robot-at") and e.column is not None
    assert "syntax error" in str(e) and "precondition" in str(e)


def test_unknown_predicate_in_an_action():
    e = error(DOMAIN.replace("(item-at ?i ?w) (hand-empty))", "(item-att ?i ?w) (hand-empty))"))
    assert "action pick: precondition: unknown predicate 'item-att'" in str(e)
    assert e.line == line_of(DOMAIN, "(item-at ?i ?w) (hand-empty))")


def test_wrong_number_of_arguments_and_undeclared_variable():
    e = error(DOMAIN.replace("(holding ?i) (robot-at ?p))", "(holding ?i ?p) (robot-at ?p))"))
    assert "(holding ...) takes 1 argument(s), got 2" in str(e)
    assert e.line == line_of(DOMAIN, "(holding ?i) (robot-at ?p))")
    e = error(DOMAIN.replace("(has ?p ?i) (hand-empty)", "(has ?q ?i) (hand-empty)"))
    assert "?q in (has ...) is not a parameter" in str(e) and e.line == line_of(DOMAIN, "(has ?p ?i) (hand-empty)")


def test_undeclared_type_is_found_in_the_text():
    e = error(DOMAIN.replace("?w - waypoint)\n    :pre", "?w - waypont)\n    :pre"))
    assert "waypont" in str(e) and e.line == line_of(DOMAIN, "(?i - item ?w - waypoint)")


def test_unsupported_features_are_named():
    neg = DOMAIN.replace(":precondition (robot-at ?from)", ":precondition (not (robot-at ?to))") \
        .replace(":typing", ":typing :negative-preconditions")
    e = error(neg)
    assert "negative conditions" in str(e) and "action approach" in str(e)
    e = error(problem=PROBLEM.replace("(:goal (has adriana medicine))",
                                      "(:goal\n  (or (has adriana medicine) (hand-empty)))"))
    assert "disjunctive-preconditions" in str(e) and e.line == line_of(PROBLEM, "(:goal") + 1


def test_problem_errors():
    e = error(problem=PROBLEM.replace("(item-at medicine medicine_counter)", "(item-at medicine kitchen)"))
    assert "undeclared object 'kitchen'" in str(e) and e.source == "<problem>"
    assert e.line == line_of(PROBLEM, "(item-at medicine")
    e = error(problem=PROBLEM.replace("(:domain assistive)", "(:domain kitchen)"))
    assert "for domain 'kitchen' but the domain is 'assistive'" in str(e)
    e = error(problem=PROBLEM.replace("(item-at medicine medicine_counter)", "(item-at adriana medicine_counter)"))
    assert "'adriana' is of type 'person', expected 'item'" in str(e)
    e = error(problem=PROBLEM.replace("(hand-empty))", "(hand-emty))"))
    assert "unknown predicate 'hand-emty'" in str(e)


def test_empty_missing_and_garbage_input():
    assert "the text is empty" in str(error(""))
    with pytest.raises(PddlError, match="no such domain file"):
        load_task("/nonexistent/domain.pddl", PROBLEM)
    assert "expected define" in str(error("(hello world)"))
    with pytest.raises(PddlError, match="no PDDL domain named 'nope'.*known: assistive, house, kitchen"):
        load_named("nope")


def test_error_file_name_is_reported(tmp_path: Path):
    f = tmp_path / "broken.pddl"
    f.write_text(DOMAIN.replace("(item-at ?i ?w) (hand-empty))", "(item-att ?i ?w) (hand-empty))"))
    with pytest.raises(PddlError) as err:
        load_task(f, PROBLEM)
    assert str(err.value).startswith(f"{f}:{line_of(DOMAIN, '(item-at ?i ?w) (hand-empty))')}:")


def test_parser_state_does_not_leak_between_tasks():
    no_typing = "(define (domain t) (:requirements :strips) (:predicates (p) (q)) " \
                "(:action a :parameters () :precondition (p) :effect (q)))"
    prob = "(define (problem x) (:domain t) (:init (p)) (:goal (q)))"
    load_task(DOMAIN, PROBLEM)
    assert [str(a) for a in plan(load_task(no_typing, prob)).actions] == ["(a)"]
    assert len(plan(load_task(DOMAIN, PROBLEM)).actions) == 4


# --------------------------------------------------------------------------- unsolvable
def test_unsolvable_names_the_goal_that_cannot_be_reached():
    e = error(problem=PROBLEM.replace("(item-at medicine medicine_counter)\n", ""))
    assert "unsolvable" in str(e) and "(has adriana medicine)" in str(e)


def test_unsolvable_because_goals_conflict():
    dom = """(define (domain sw) (:requirements :strips)
      (:predicates (on) (off) (ready))
      (:action flip-on :parameters () :precondition (off) :effect (and (on) (not (off))))
      (:action flip-off :parameters () :precondition (on) :effect (and (off) (not (on)))))"""
    prob = "(define (problem p) (:domain sw) (:init (off)) (:goal (and (on) (off))))"
    e = error(dom, prob)
    assert "no action sequence reaches them all together" in str(e)


def test_time_limit():
    with pytest.raises(PddlError, match="no plan found within the time limit of 0 s"):
        plan(load_named("kitchen"), time_limit_s=0)


def test_unknown_search():
    with pytest.raises(PddlError, match="unknown search 'dfs'"):
        plan(load_named("kitchen"), search="dfs")


def test_too_many_ground_actions_is_refused():
    objs = " ".join(f"w{i}" for i in range(600))
    prob = f"(define (problem big) (:domain assistive) (:objects {objs} - waypoint medicine - item " \
           "adriana - person) (:init (robot-at w0) (item-at medicine w1) (hand-empty)) (:goal (has adriana medicine)))"
    with pytest.raises(PddlError, match="too many ground actions"):
        plan(load_task(DOMAIN, prob))


# --------------------------------------------------------------------------- ready plans
def test_ready_plan_lines_are_checked_against_the_domain():
    task = load_named("assistive")
    steps = parse_plan_lines(["(approach start medicine_counter)", "(PICK medicine medicine_counter)"], task)
    assert steps[1] == GroundAction("pick", ("medicine", "medicine_counter"))
    with pytest.raises(PddlError, match="the domain has no action 'fly'"):
        parse_plan_lines(["(fly start adriana)"], task)
    with pytest.raises(PddlError, match="pick takes 2 argument"):
        parse_plan_lines(["(pick medicine)"], task)
    with pytest.raises(PddlError, match="expected '\\(action arg ...\\)'"):
        parse_plan_lines(["pick medicine counter"], task)


# --------------------------------------------------------------------------- mappings
def test_mapping_binds_queries_skills_and_grounding():
    task = load_named("assistive")
    mapping = ActionMapping.load("", "assistive")
    mapping.check(task)
    steps = mapping.bind(plan(task).actions, task)
    assert [s.query for s in steps] == ["approach(MedicineCounter_1)", "pick(medicine)", "approach(adriana)",
                                        "handover(medicine, adriana)"]
    assert [s.skill for s in steps] == ["move_to", "pick", "move_to", "handover"]
    assert steps[3].skill_args() == ["medicine", "adriana"]
    assert steps[3].skill_args(["Medicine_1", "Person_1"]) == ["Medicine_1", "Person_1"]
    assert steps[3].skill_args(["Medicine_1"]) == ["Medicine_1", "adriana"]
    natural = mapping.bind(plan(task).actions, task, natural=True)
    assert natural[1].query == "pick up the medicine from the MedicineCounter_1"


def test_mapping_objects_replace_pddl_names():
    task = load_named("kitchen")
    m = ActionMapping.load("kitchen")
    steps = m.bind(plan(task).actions, task)
    assert [s.query for s in steps] == ["place(Egg_1, FreeTable_1)", "move_to(Knife_1)", "pick(Knife_1)",
                                        "move_to(Tomato_1)", "slice(Tomato_1)"]
    assert steps[0].skill_args() == ["FreeTable_1"] and steps[0].skill_args(["Egg_1", "Table_2"]) == ["Table_2"]
    m.objects = {}
    assert m.bind(plan(task).actions, task)[0].query == "place(egg, free_table)"


def test_action_without_mapping_is_named():
    task = load_named("kitchen")
    m = ActionMapping.from_dict({"actions": {"pick": {"query": "pick({t})", "skill": "pick", "args": ["{t}"]}}},
                                "small.yaml")
    with pytest.raises(MappingError, match="no action mapping for PDDL action 'place' \\(step 1"):
        m.bind(plan(task).actions, task)


@pytest.mark.parametrize("doc,msg", [
    ({"actions": {"pick": {"query": "pick({x})", "skill": "pick", "args": ["{t}"]}}}, "{x} is not a parameter of pick"),
    ({"actions": {"pick": {"query": "pick({t})", "skill": "grab", "args": ["{t}"]}}}, "skill: expected one of"),
    ({"actions": {"pick": {"query": "pick({t})", "skill": "pick", "args": ["{t}", "{p}"]}}}, "takes 1 argument"),
    ({"actions": {"pick": {"query": "pick({t})", "skill": "pick", "args": ["{t}"], "ground": ["zz"]}}},
     "'zz' is not a parameter"),
    ({"actions": {"fly": {"query": "fly()", "skill": "move_to", "args": ["x"]}}}, "the domain has no action 'fly'"),
    ({"actions": {}}, "expected a mapping of PDDL action names"),
    ({"format": "other/2", "actions": {}}, "format"),
])
def test_bad_mappings(doc, msg):
    task = load_named("kitchen")
    with pytest.raises(MappingError, match=msg.replace("(", "\\(").replace(")", "\\)").replace("{", "\\{")
                       .replace("}", "\\}")):
        ActionMapping.from_dict(doc, "m.yaml").check(task)


def test_missing_mapping_file():
    with pytest.raises(MappingError, match="no such action mapping"):
        ActionMapping.load("nowhere")
    with pytest.raises(MappingError, match="no domain name"):
        ActionMapping.load("")


# --------------------------------------------------------------------------- task requests
def test_a_named_task_resolves_to_mapped_steps():
    steps, domain = resolve_task("assistive", "")
    assert domain == "assistive" and len(steps) == 4
    lines = [str(a) for a in plan(load_named("assistive")).actions]
    given, _ = resolve_task("assistive", "", lines[:2])          # a given plan is used as it is
    assert [str(s) for s in given] == [str(s) for s in steps[:2]]


def test_task_request_errors_are_named():
    with pytest.raises(TaskError, match="give a PDDL domain"):
        resolve_task("", "")
    with pytest.raises(TaskError, match="no_such_action"):
        resolve_task("assistive", "", ["(no_such_action x)"])


def test_aliases_are_read_and_bad_entries_named():
    assert parse_aliases(" free_table:FreeTable_1, shelf:Shelf_2 ,") == {"free_table": "FreeTable_1", "shelf": "Shelf_2"}
    with pytest.raises(ValueError, match="expected 'name:id' entries, got 'shelf'"):
        parse_aliases("shelf")
