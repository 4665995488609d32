"""The recovery prompt, the rules planner per issue category, and the planner front end with
a fake LLM (retry with the rejection reason, token counts, errors)."""
from __future__ import annotations

import pytest

from raider_ros.agent.llm import LLMError, LLMReply
from raider_ros.recovery.plan import Literal, PlanError, Var, parse_plan
from raider_ros.recovery.prompt import PromptError, RecoveryPrompt, build_messages
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.recovery.rules_writer import (
    RecoveryHints, RulesRecoveryWriter, infer_category, read_request, type_word,
)


# --------------------------------------------------------------------------- prompt
def test_prompt_has_the_parts_of_fig_7():
    msgs = build_messages("pick(medicine)", "ambiguity", "medicine could be Medicine_1 or Medicine_2.", None)
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert [m["role"] for m in msgs] == ["system", "user"]
    for part in ("## Objective", "## Actions you may use", "## Notes", "## Examples"):
        assert part in system
    for action in ("ask(", "say(", "move_to(", "pick(", "place(", "open(", "close(", "turn_on(", "turn_off(",
                   "slice(", "handover("):
        assert action in system
    assert "free_table" in system and "current_loc" in system and "one arm" in system
    assert user == ("query: pick(medicine), issue: ambiguity, explanation: medicine could be Medicine_1 or "
                    "Medicine_2. robot holding: none\ncorrective actions:")


def test_prompt_examples_are_valid_plans():
    examples = RecoveryPrompt.load().system.split("## Examples", 1)[1]
    blocks = [b.split("corrective actions:", 1)[1] for b in examples.split("\nquery:")[1:]]
    assert len(blocks) >= 6
    for block in blocks:
        assert parse_plan("corrective actions:" + block).steps


def test_query_with_holding_and_context():
    q = RecoveryPrompt.load().query("slice(Tomato_1)", "unfeasibility", "no knife in hand", "Egg_1",
                                    context="It's in the drawer.")
    assert "robot holding: Egg_1" in q and "what the person said: \"It's in the drawer.\"" in q


def test_missing_prompt_part_is_named(tmp_path):
    for name in ("objective.md", "actions.md", "notes.md", "examples.md"):
        (tmp_path / name).write_text("x")
    with pytest.raises(PromptError, match="query.md: cannot read"):
        RecoveryPrompt.load(tmp_path)
    (tmp_path / "query.md").write_text("query: {action}")
    with pytest.raises(PromptError, match="lacks {issue}"):
        RecoveryPrompt.load(tmp_path)


# --------------------------------------------------------------------------- rules
RULES_CASES = [
    # query, issue, explanation, holding, hints, expected plan (one statement a line)
    ("pick(medicine)", "ambiguity", "medicine could be Medicine_1 or Medicine_2", None, None,
     ['choice = ask("Which medicine should I pick up, Medicine_1 or Medicine_2?")', "pick(choice)"]),
    ("pick the fruit left of the bowl", "ambiguity", "Apple_1 and Banana_1 are left of the bowl", None, None,
     ['choice = ask("Which one should I pick up, the apple or the banana?")', "pick(choice)"]),
    ("handover(Cup_1, person)", "ambiguity", "two people", "Cup_1",
     RecoveryHints(grounding=["Person_1", "Person_2"]),
     ['person = ask("Who should I give the cup to, Person_1 or Person_2?")', "handover(Cup_1, person)"]),
    ("pick(Medicine_1)", "unfeasibility", "Medicine_1 is 0.6 m away, beyond the reach of 0.5 m", None, None,
     ['ask("I cannot reach the medicine. Could you bring it closer to me, please?")', "pick(Medicine_1)"]),
    ("pick(Apple_1)", "unfeasibility", "too far", None, RecoveryHints(category="IU1", can_move=True),
     ["move_to(Apple_1)", "pick(Apple_1)"]),
    ("approach(MedicineCounter_1)", "unfeasibility", "the path is blocked by Chair_1", None, None,
     ['ask("The chair is in my way to the medicine counter. Could you move it aside, please?")',
      "move_to(MedicineCounter_1)"]),
    ("pick(Mug_1)", "unfeasibility", "CerealBox_1 is blocking Mug_1", None, None,
     ["pick(CerealBox_1)", "move_to(free_table)", "place(free_table)", "move_to(current_loc)", "pick(Mug_1)"]),
    ("pick(Mug_1)", "unfeasibility", "something is in the way", None,
     RecoveryHints(category="IU2", blocking=["Bowl_1", "Kettle_1"]),
     ["pick(Bowl_1)", "move_to(free_table)", "place(free_table)", "move_to(current_loc)",
      "pick(Kettle_1)", "move_to(free_table)", "place(free_table)", "move_to(current_loc)", "pick(Mug_1)"]),
    ("pick(Knife_1)", "unfeasibility", "there is no knife in the scene", None, None,
     ['location = ask("I cannot find the knife. Where is it?")', "move_to(location)", "pick(Knife_1)"]),
    ("pick(Milk_1)", "unfeasibility", "Milk_1 is inside Fridge_1, which is closed", None, None,
     ["open(Fridge_1)", "pick(Milk_1)"]),
    ("open(Microwave_1)", "unfeasibility", "Microwave_1 is switched on", None, None,
     ["turn_off(Microwave_1)", "open(Microwave_1)"]),
    ("slice(Apple_1)", "unfeasibility", "Apple_1 is already sliced", "Knife_1", None,
     ['say("I cannot slice the apple: Apple_1 is already sliced.")']),
    ("pick(Microwave_1)", "unfeasibility", "Microwave_1 is not pickupable, it is too heavy", None, None,
     ['say("I cannot pick up the microwave: Microwave_1 is not pickupable, it is too heavy.")']),
    ("pick(Mug_1)", "unfeasibility", "the robot is already holding Egg_1", "Egg_1", None,
     ["move_to(free_table)", "place(free_table)", "move_to(current_loc)", "pick(Mug_1)"]),
    ("slice(Tomato_1)", "unfeasibility", "the robot needs a knife in its hand, but it is holding Egg_1", None, None,
     ["move_to(free_table)", "place(free_table)", 'knife_location = ask("Where can I find a knife?")',
      "move_to(knife_location)", "pick(Knife)", "move_to(current_loc)", "slice(Tomato_1)"]),
    ("slice(Lettuce_1)", "unfeasibility", "the robot is not holding a knife", None, None,
     ['knife_location = ask("Where can I find a knife?")', "move_to(knife_location)", "pick(Knife)",
      "move_to(current_loc)", "slice(Lettuce_1)"]),
    ("place(Pan_1)", "unfeasibility", "the robot is not holding Tomato_1, it is holding Egg_1", "Egg_1", None,
     ["move_to(free_table)", "place(free_table)", 'location = ask("Where is the tomato?")', "move_to(location)",
      "pick(Tomato_1)", "move_to(current_loc)", "place(Pan_1)"]),
    ("approach(adriana)", "unfeasibility", "adriana is not recognised", None, None,
     ['say("I cannot recognise the person in front of me.")', 'name = ask("Could you tell me who you are, please?")',
      "move_to(adriana)"]),
    ("handover(Medicine_1, Person_1)", "unfeasibility", "Person_1 is not looking at the robot", "Medicine_1", None,
     ['ask("Excuse me, could you look at me, please? I have your medicine.")', "handover(Medicine_1, Person_1)"]),
    ("handover(Medicine_1, Person_1)", "unfeasibility", "Person_1's hands are not free", "Medicine_1", None,
     ['ask("Could you free one of your hands so I can give you the medicine?")', "handover(Medicine_1, Person_1)"]),
    ("handover(Medicine_1, Person_1)", "unfeasibility", "Person_1 is 1.8 m away, too far for a handover",
     "Medicine_1", None, ["move_to(Person_1)", "handover(Medicine_1, Person_1)"]),
    ("pick adrianas_medicine medicine_counter", "unfeasibility", "out of reach", None, None,
     ['ask("I cannot reach the adrianas medicine. Could you bring it closer to me, please?")',
      "pick(adrianas_medicine)"]),
]


@pytest.mark.parametrize("query,issue,explanation,holding,hints,expected", RULES_CASES,
                         ids=[c[2][:40] for c in RULES_CASES])
def test_rules_plan_per_category(query, issue, explanation, holding, hints, expected):
    text = RulesRecoveryWriter().write(query, issue, explanation, holding, hints)
    assert text.splitlines() == expected
    plan = RecoveryPlanner().plan(query, issue, explanation, holding, hints=hints)
    assert plan.to_code().splitlines() == expected      # the same interpreter as LLM plans


@pytest.mark.parametrize("issue,explanation,action,category", [
    ("ambiguity", "anything", "pick", "IA"),
    ("unfeasibility", "Apple_1 is 1.4 m away, out of reach", "pick", "IU1"),
    ("unfeasibility", "the path to the sofa is not free", "move_to", "IU2"),
    ("unfeasibility", "there is no spoon here", "pick", "IU3"),
    ("unfeasibility", "the fridge is closed", "pick", "IU4"),
    ("unfeasibility", "the bowl is not sliceable", "slice", "IU5"),
    ("unfeasibility", "the robot's gripper is full", "pick", "IU6"),
    ("unfeasibility", "Person_1 is not recognized", "move_to", "HU"),
    ("unfeasibility", "she is not looking at the robot", "handover", "HG"),
    ("unfeasibility", "her hands are busy", "handover", "HH"),
    ("unfeasibility", "the person is too far for a handover", "handover", "HD"),
    ("unfeasibility", "something odd", "pick", "IU5"),
])
def test_category_inference(issue, explanation, action, category):
    assert infer_category(issue, explanation, action) == category


def test_query_parsing_and_type_words():
    assert read_request("pick(Medicine_1)").args == ["Medicine_1"]
    assert read_request("handover(medicine, 'adriana')").args == ["medicine", "adriana"]
    assert read_request("approach medicine_counter").action == "move_to"
    q = read_request("Could you turn the stove on?")
    assert q.action == "turn_on"
    assert read_request("Can you grab the red mug?").action == "pick"
    assert type_word("CoffeeMachine_1") == "coffee machine"


def test_unknown_category_hint():
    with pytest.raises(PlanError, match="unknown issue category 'IU9'"):
        RulesRecoveryWriter().write("pick(a)", "unfeasibility", "x", None, RecoveryHints(category="IU9"))


def test_known_names_check_rules_plans():
    planner = RecoveryPlanner(known_names=["Medicine_1", "Medicine_2"])
    assert planner.plan("pick(Medicine_1)", "unfeasibility", "out of reach").steps
    with pytest.raises(PlanError, match="undefined name 'Spoon_1'"):
        planner.plan("pick(Spoon_1)", "unfeasibility", "out of reach")


# --------------------------------------------------------------------------- LLM backend
class FakeLLM:
    name = "fake-llm"

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen = []

    def complete(self, messages, *, deadline):
        self.seen.append([dict(m) for m in messages])
        item = self.replies.pop(0)
        if isinstance(item, BaseException):
            raise item
        return LLMReply(item, prompt_tokens=100, completion_tokens=20)


def test_llm_plan_is_parsed():
    llm = FakeLLM(['Here is the plan:\n```python\nitem = ask("Which medicine?")\npick(item)\n```'])
    planner = RecoveryPlanner(llm)
    plan = planner.plan("pick(medicine)", "ambiguity", "two medicines", None)
    assert plan.steps[1].args == (Var("item"),)
    assert planner.name == "fake-llm"
    assert llm.seen[0][1]["content"].startswith("query: pick(medicine), issue: ambiguity")
    assert planner.last.prompt_tokens == 100 and planner.last.completion_tokens == 20


def test_rejected_llm_plan_is_sent_back_once_with_the_reason():
    llm = FakeLLM(["import os\nos.system('x')", 'say("I cannot do that.")'])
    planner = RecoveryPlanner(llm)
    plan = planner.plan("pick(Microwave_1)", "unfeasibility", "too heavy", None)
    assert plan.steps[0].args == (Literal("I cannot do that."),)
    assert len(llm.seen) == 2
    retry = llm.seen[1]
    assert retry[-2] == {"role": "assistant", "content": "import os\nos.system('x')"}
    assert "imports are not allowed" in retry[-1]["content"]
    assert planner.last.errors and planner.last.prompt_tokens == 200


def test_llm_plan_rejected_twice_raises():
    planner = RecoveryPlanner(FakeLLM(["while True: pick(a)", "lambda: 0"]))
    with pytest.raises(PlanError):
        planner.plan("pick(a)", "unfeasibility", "x", None)
    assert len(planner.last.texts) == 2


def test_llm_errors_propagate():
    planner = RecoveryPlanner(FakeLLM([LLMError("HTTP 429 after 3 retries", retryable=True)]))
    with pytest.raises(LLMError, match="429"):
        planner.plan("pick(a)", "unfeasibility", "x", None)


def test_bad_backends():
    with pytest.raises(ValueError, match="unknown recovery backend 'gpt'"):
        RecoveryPlanner("gpt")
    with pytest.raises(ValueError, match="has no complete"):
        RecoveryPlanner(object())


def test_a_sentence_starting_with_a_verb_is_read_as_a_sentence_not_as_names():
    q = read_request("Pick up the soap.", ["Soap_1"])
    assert (q.action, q.args) == ("pick", ["Soap_1"])
    q = read_request("Give the glass of water to Maria.", ["WaterGlass_1", "Person_1"])
    assert (q.action, q.args) == ("handover", ["WaterGlass_1", "Person_1"])
    assert read_request("approach medicine_counter").args == ["medicine_counter"]
    plan = RulesRecoveryWriter().write("Pick up the soap.", "unfeasibility", "Cup_1 blocks Soap_1.",
                                       hints=RecoveryHints(category="IU2", grounding=("Soap_1",), blocking=("Cup_1",)))
    assert "pick(up)" not in plan and plan.rstrip().endswith("pick(Soap_1)")


@pytest.mark.parametrize("query, args", [
    ("pick(Apple))", ["Apple"]),
    ('pick("Apple"))', ["Apple"]),
    ("handover(Apple, Person_1))", ["Apple", "Person_1"]),
    ("place(Mug_1, \"Table_1\")", ["Mug_1", "Table_1"]),
    ("pick( [Apple] )", ["Apple"]),
])
def test_written_call_arguments_carry_no_quotes_or_stray_brackets(query, args):
    from raider_ros.recovery.rules_writer import read_request
    assert read_request(query).args == args
    plan = RecoveryPlanner().plan(query, "unfeasibility", "Person_1 is not looking at the robot", None)
    texts = [getattr(a, "value", getattr(a, "name", "")) for s in plan.steps if s.action != "say" for a in s.args]
    assert texts and all(")" not in t and '"' not in t for t in texts), texts
