"""The recovery-plan interpreter: accepted forms, and an adversarial list of rejected ones,
each with the reason it must give."""
from __future__ import annotations

import pytest

from raider_ros.recovery.plan import (
    MAX_CHARS, MAX_STATEMENTS, Literal, Plan, PlanError, PlanStep, Var, parse_plan,
)


def codes(plan: Plan) -> list[str]:
    return plan.to_code().splitlines()


# --------------------------------------------------------------------------- accepted
def test_paper_style_comma_separated_plan_with_a_variable():
    p = parse_plan('knife_loc = ask("where is the knife?"), move_to(knife_loc), pick(knife), '
                   'move_to(current_loc),\nslice(lettuce)')
    assert [s.action for s in p.steps] == ["ask", "move_to", "pick", "move_to", "slice"]
    assert p.steps[0] == PlanStep("ask", (Literal("where is the knife?"),), binds="knife_loc")
    assert p.steps[1].args == (Var("knife_loc"),)
    assert p.steps[2].args == (Literal("knife"),)
    assert p.steps[1].resolve({"knife_loc": "the drawer"}) == ["the drawer"]


def test_fenced_plan_inside_prose_is_found():
    text = "Here is what I would do:\n```python\nmove_to(free_table)\nplace(free_table)\n```\nHope it helps."
    assert codes(parse_plan(text)) == ["move_to(free_table)", "place(free_table)"]


def test_prose_lines_around_a_numbered_plan_are_ignored():
    text = "Sure! I'll sort this out.\n1. move_to(free_table)\n2. place(egg)\nThat's it."
    assert codes(parse_plan(text)) == ["move_to(free_table)", "place(egg)"]


def test_step_labels_and_inline_backticks():
    text = "To fix this:\nStep 1: `move_to(free_table)`\nStep 2: place(free_table)\n- `say(\"done\")`"
    assert codes(parse_plan(text)) == ["move_to(free_table)", "place(free_table)", 'say("done")']


def test_text_after_the_corrective_actions_marker():
    text = "query: place(Pan_1)\ncorrective actions:\n move_to(free_table), place(free_table)"
    assert codes(parse_plan(text)) == ["move_to(free_table)", "place(free_table)"]


def test_semicolons_aliases_and_case():
    p = parse_plan("TurnOn(Stove_1); turnoff(Stove_1); Approach(Table_1)")
    assert [s.action for s in p.steps] == ["turn_on", "turn_off", "move_to"]


def test_call_split_over_lines_and_separators_inside_strings():
    p = parse_plan('say("first, second; third (really)")\nmove_to(\n    free_table)')
    assert p.steps[0].args == (Literal("first, second; third (really)"),)
    assert codes(p)[1] == "move_to(free_table)"


def test_handover_takes_two_arguments():
    p = parse_plan('who = ask("Who gets it?"), handover(Medicine_1, who)')
    assert p.steps[1].args == (Literal("Medicine_1"), Var("who"))


def test_round_trip_quotes_what_needs_quoting():
    p = parse_plan('x = ask("which?")\npick("the red mug")\nsay(x)\npick(x)')
    again = parse_plan(p.to_code())
    assert again.steps == p.steps


def test_known_names_reject_undefined_bare_names():
    with pytest.raises(PlanError, match="undefined name 'Spoon_9'"):
        parse_plan("pick(Spoon_9)", known_names=["Apple_1"])
    assert parse_plan("pick(apple_1), move_to(free_table)", known_names=["Apple_1"]).steps


# --------------------------------------------------------------------------- rejected
ADVERSARIAL = [
    ("__import__('os').system('ls')", "dunder access and attribute calls"),
    ("__import__('os')", "dunder names"),
    ("pick(__builtins__)", "dunder names"),
    ("pick(x.__class__)", "dunder attribute access"),
    ("x.__class__.__bases__[0].__subclasses__()", "dunder access and attribute calls"),
    ("os.system('rm -rf /')", "attribute calls"),
    ("pick(obj.name)", "attribute access"),
    ("pick(items[0])", "subscript"),
    ("pick(lambda: 0)", "lambda"),
    ("f = lambda: 0", "got a lambda"),
    ("pick([a for a in b])", "comprehension"),
    ("pick({a for a in b})", "comprehension"),
    ("pick((a for a in b))", "comprehension"),
    ("while True:\n    pick(a)", "loops (while)"),
    ("for x in things:\n    pick(x)", "loops (for)"),
    ("import os", "imports"),
    ("from os import system", "imports"),
    ("@decorator\ndef f():\n    pick(a)", "decorators"),
    ("def f():\n    pick(a)", "function definitions"),
    ("class C: pass", "class definitions"),
    ("if ready:\n    pick(a)", "conditionals"),
    ("with open(x) as f:\n    pick(f)", "'with' blocks"),
    ("try:\n    pick(a)\nexcept Exception:\n    pass", "try/except"),
    ("print('hi')", "unknown action 'print'"),
    ("exec('pick(a)')", "unknown action 'exec'"),
    ("eval('1')", "unknown action 'eval'"),
    ("getattr(x, 'y')()", "only actions may be called"),
    ("pick(object=apple)", "keyword arguments"),
    ("pick(**kw)", "keyword arguments"),
    ("pick(*args)", "starred argument"),
    ("pick(f'{x}')", "f-string"),
    ("pick(3)", "number"),
    ("pick(None)", "constant None"),
    ("pick(b'x')", "bytes"),
    ('say("a" + "b")', "BinOp"),
    ("pick(x := 1)", "assignment expression"),
    ("pick(a, b)", "pick() takes 1 argument"),
    ("handover(a)", "handover() takes 2 arguments"),
    ("pick()", "pick() takes 1 argument"),
    ("pick('')", "empty string"),
    # ask misuse
    ("ask()", "ask() takes 1 argument"),
    ("ask(question)", "ask() takes the question as a string literal"),
    ("ask('a', 'b')", "ask() takes 1 argument"),
    ("pick(ask('which one?'))", "nested call"),
    ("x = pick(apple)", "only ask() returns a value"),
    ("x = 'apple'", "only ask() returns a value"),
    ("x = y = ask('q')", "only the form name = ask"),
    ("x, y = ask('q')", "must be a call"),  # commas separate statements
    ("x += ask('q')", "only the form name = ask"),
    ("pick = ask('q')", "is an action name"),
    ("__x__ = ask('q')", "dunder names"),
    ("pick(item), item = ask('which?')", "used before ask() assigns it"),
    # not a plan
    ("", "no plan statements"),
    ("I'll ask the person what to do.", "no plan statements"),
    ("```python\nHello there, friend\n```", "not valid plan syntax"),
    ('say("unterminated', "unterminated string"),
    ("pick(apple", "never closed"),
    ("apple", "no plan statements"),
    ("```\napple\n```", "must be a call"),
    ("del x", "del statements"),
    ("return pick(a)", "return statements"),
    ("raise SystemExit", "raise statements"),
    ("global x", "global declarations"),
    ("x: int = ask('q')", "annotated assignments"),
]


@pytest.mark.parametrize("text,reason", ADVERSARIAL, ids=[t for t, _ in ADVERSARIAL])
def test_adversarial_input_is_rejected_with_its_reason(text, reason):
    with pytest.raises(PlanError) as err:
        parse_plan(text)
    assert reason in str(err.value)
    assert err.value.reason


def test_rejection_names_the_statement():
    with pytest.raises(PlanError) as err:
        parse_plan("move_to(free_table)\nplace(free_table)\nimport os")
    assert err.value.statement == 3
    assert str(err.value).startswith("statement 3 `import os`")


def test_oversized_input_is_refused_before_parsing():
    with pytest.raises(PlanError, match="too long"):
        parse_plan('say("' + "a" * 1_000_000 + '")')
    with pytest.raises(PlanError, match="too long"):
        parse_plan("(" * 100_000)


@pytest.mark.parametrize("text", [
    "(" * 100_000 + ")" * 100_000,
    "pick(" + "-" * 100_000 + "1)",
    "pick(" + "not " * 50_000 + "x)",
    "pick(a" + ".b" * 50_000 + ")",
    "pick(x" + "[0]" * 50_000 + ")",
    "pick(" + "1+" * 100_000 + "1)",
    "pick(" * 100_000 + ")" * 100_000,
    'say("' + "a" * 1_000_000 + '")',
    "say('" + "\\n" * 500_000 + "')",
])
def test_deep_nesting_and_huge_strings_do_not_crash_even_without_the_size_limit(text):
    with pytest.raises(PlanError) as err:
        parse_plan(text, max_chars=10_000_000)
    assert err.value.reason


def test_too_many_statements():
    with pytest.raises(PlanError, match="too many statements"):
        parse_plan(", ".join(["pick(a)"] * (MAX_STATEMENTS + 1)))


def test_nul_bytes_and_non_text():
    with pytest.raises(PlanError, match="NUL"):
        parse_plan("pick(a)\x00")
    with pytest.raises(PlanError, match="must be text"):
        parse_plan(b"pick(a)")  # type: ignore[arg-type]


def test_limit_constant_is_20_kb():
    assert MAX_CHARS == 20_000
    assert parse_plan("say('" + "a" * 400 + "')\n" + "#" * (MAX_CHARS - 420))


def test_one_closing_bracket_too_many_is_named_as_such():
    from raider_ros.recovery.plan import PlanError, parse_plan
    with pytest.raises(PlanError, match=r"'\)' on line 2 closes no bracket \(one closing bracket too many\)"):
        parse_plan('say("ok")\npick(Apple))')
    with pytest.raises(PlanError, match="a bracket is never closed"):
        parse_plan("pick((Apple)")
