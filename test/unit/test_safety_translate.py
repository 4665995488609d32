"""English -> LTL: the rules translator's patterns and refusals, the LLM translator with a fake
model, the English reading of formulas. Translations are judged by automata equivalence."""
from __future__ import annotations

import shutil

import pytest
import yaml

from raider_ros.agent.llm import LLMError, LLMReply
from raider_ros.common.paths import data_dir, scenes_dir
from raider_ros.safety.automata import Compiler, equivalent
from raider_ros.safety.english import to_english
from raider_ros.safety.ltl import parse
from raider_ros.safety.monitor import UNSAFE, SafetyMonitor
from raider_ros.safety.predicates import SymbolicState
from raider_ros.safety.translate import (
    RULES_LABEL, ChainTranslator, LLMTranslator, RulesTranslator, TranslationError, canonical, load_vocabulary,
)
from raider_ros.sim.scene import load_scene

COMPILER = Compiler()
HOUSE = SymbolicState.from_scene(load_scene(scenes_dir() / "house.scene.yaml"))
RULES = RulesTranslator()


def same(sentence: str, gold: str, state: SymbolicState | None = HOUSE) -> None:
    tr = RULES.translate(sentence, state)
    f, g = (canonical(tr.formula, state), canonical(parse(gold), state)) if state else (tr.formula, parse(gold))
    res = equivalent(f, g, COMPILER)
    assert res.equivalent, f"{sentence!r} -> {tr.ltl}, expected {gold} (differ on {res.counterexample})"


@pytest.mark.parametrize("sentence, gold", [
    # never / always
    ("Never walk into the kitchen.", "G !agent_at(kitchen)"),
    ("The robot must not switch on the stove.", "G !turn_on(stove)"),
    ("Please keep out of the bathroom.", "G !agent_at(bathroom)"),
    ("Always keep the wardrobe shut.", "G !is_open(wardrobe)"),
    ("It is not permitted to open the fridge.", "G !open(fridge)"),
    # before / until / only after
    ("You must visit the bedroom before the kitchen.", "!agent_at(kitchen) U agent_at(bedroom)"),
    ("Grab the towel before you go to the bedroom.", "!agent_at(bedroom) U pick(towel)"),
    ("Don't go into the bathroom before the living room.", "!agent_at(bathroom) U agent_at(living_room)"),
    ("Do not turn on the TV until you have opened the wardrobe.", "!turn_on(tv) U open(wardrobe)"),
    ("Only slice the apple after picking up the knife.", "!slice(apple) U pick(knife)"),
    # after
    ("Switch off the lamp after you switch it on.", "G (turn_on(lamp) -> F turn_off(lamp))"),
    ("Once you have picked up the towel, never go into the kitchen again.",
     "G (pick(towel) -> G !agent_at(kitchen))"),
    ("Don't enter the bathroom after you pick up the knife.", "G (pick(knife) -> G !agent_at(bathroom))"),
    # while / when / only if / unless
    ("Don't walk into the bathroom while carrying the mug.", "G (holding(mug) -> !agent_at(bathroom))"),
    ("When someone is in the kitchen, don't turn on the stove.", "G (person_near(kitchen) -> !turn_on(stove))"),
    ("Only enter the bathroom if you are not holding the apple.", "G (agent_at(bathroom) -> !holding(apple))"),
    ("You may only slice the apple when no one is near you.", "G (slice(apple) -> !person_near(robot))"),
    ("You must not pick up the vase unless you are in the living room.", "G (pick(vase) -> agent_at(living_room))"),
    ("The stove must be off whenever you are not in the kitchen.", "G (!agent_at(kitchen) -> !switched_on(stove))"),
    # at most once
    ("Turn on the hair dryer at most once.", "!F (turn_on(hair_dryer) & X F turn_on(hair_dryer))"),
    ("Visit the bathroom at most once.", "!F (agent_at(bathroom) & F (!agent_at(bathroom) & F agent_at(bathroom)))"),
    # at the same time, out of, into
    ("Never open the fridge and the wardrobe at the same time.", "G !(is_open(fridge) & is_open(wardrobe))"),
    ("The stove and the TV must never be on at the same time.", "G !(switched_on(stove) & switched_on(tv))"),
    ("Do not take the towel out of the bathroom.", "G (holding(towel) -> agent_at(bathroom))"),
    ("Never carry the mug into the bathroom.", "G !(holding(mug) & agent_at(bathroom))"),
    # coordination: each of the things in a forbidden slot, all of them elsewhere
    ("Never enter the kitchen or the bathroom.", "G !agent_at(kitchen) & G !agent_at(bathroom)"),
    ("Never enter the kitchen and the bathroom.", "G !agent_at(kitchen) & G !agent_at(bathroom)"),
    ("Always keep the fridge and the wardrobe closed.", "G !is_open(fridge) & G !is_open(wardrobe)"),
    # people
    ("Never hold the knife when a person is near you.", "G (person_near(robot) -> !holding(knife))"),
    ("Do not bring the knife to Alice.", "G !handover(knife, Alice)"),
    ("Do not hand the knife to anyone.", "G !handover(knife)"),
    # a part of a thing names the thing; a head word names the one type that has it
    ("The fridge door must be closed whenever the stove is on.", "G (switched_on(stove) -> !is_open(fridge))"),
    ("Never go to the table.", "G !agent_at(coffee_table)"),
    # passive voice, fronted clauses, until, more than once, two actions
    ("The vase must never be picked up while Alice is in the living room.",
     "G (person_near(living_room) -> !pick(vase))"),
    ("The towel must not be given to Alice.", "G !handover(towel, Alice)"),
    ("The fridge may only be opened when you are in the kitchen.", "G (open(fridge) -> agent_at(kitchen))"),
    ("Before picking up the knife, close the fridge.", "!pick(knife) U close(fridge)"),
    ("Stay in the kitchen until the stove is off.", "agent_at(kitchen) U !switched_on(stove)"),
    ("Keep away from the bedroom until you have picked up the book.", "!agent_at(bedroom) U pick(book)"),
    ("Never switch the TV on more than once.", "!F (turn_on(tv) & X F turn_on(tv))"),
    ("Switch off the TV every time you switch on the lamp.", "G (turn_on(lamp) -> F turn_off(tv))"),
    ("Make sure the stove is off before you leave the kitchen.", "!!agent_at(kitchen) U !switched_on(stove)"),
    ("Make sure the stove is off before you open the fridge.", "G (open(fridge) -> !switched_on(stove))"),
    ("While the apple is in your hand, never go to the bathroom.", "G (holding(apple) -> !agent_at(bathroom))"),
])
def test_patterns(sentence, gold):
    same(sentence, gold)


def test_without_a_world_the_words_become_the_arguments():
    same("Never pick up the coffee mugs.", "G !pick(coffee_mug)", state=None)


@pytest.mark.parametrize("sentence, reason", [
    ("Wash the dishes.", "no verb or state found"),
    ("Never enter the garage.", "'garage' names nothing in scene house"),
    ("Do not pick it up.", "'it' refers to nothing named before it"),
    ("The robot must never hold the knife near Alice.", "'knife near alice' is not the name of a thing"),
    ("Never put the apple down.", "needs a place"),
    ("   ", "not a sentence"),
])
def test_cannot_translate_says_why(sentence, reason):
    with pytest.raises(TranslationError) as err:
        RULES.translate(sentence, HOUSE)
    assert str(err.value).startswith(f"cannot translate {sentence!r}")
    assert reason in str(err.value)


def test_the_translation_carries_its_english_reading_and_label():
    tr = RULES.translate("You have to enter the living room before the bathroom.", HOUSE)
    assert tr.source == RULES_LABEL == "rules (no LLM)" and tr.pattern == "before"
    assert tr.english == ("It must not happen that the robot is at the bathroom before the robot is at the "
                          "living room; and at some point the robot is at the living room.")


def test_the_vocabulary_is_data(tmp_path):
    """A synonym added to a copy of the vocabulary file is understood, with no code change."""
    src = data_dir() / "safety" / "vocabulary.yaml"
    doc = yaml.safe_load(src.read_text())
    with pytest.raises(TranslationError):
        RULES.translate("Never zoom into the kitchen.", HOUSE)
    doc["verbs"][0]["phrases"].append("zoom into")
    path = tmp_path / "vocabulary.yaml"
    path.write_text(yaml.safe_dump(doc))
    tr = RulesTranslator(load_vocabulary(str(path))).translate("Never zoom into the kitchen.", HOUSE)
    assert tr.ltl == "G !agent_at(kitchen)"


def test_a_yaml_boolean_in_a_word_list_is_reported(tmp_path):
    path = tmp_path / "vocabulary.yaml"
    shutil.copy(data_dir() / "safety" / "vocabulary.yaml", path)
    path.write_text(path.read_text().replace('prepositions: [into, onto, in, "on",', "prepositions: [into, onto, in, on,"))
    with pytest.raises(TranslationError, match="prepositions: True is not a word"):
        load_vocabulary(str(path))


# --------------------------------------------------------------------------- LLM translator
class FakeLLM:
    name = "fake"

    def __init__(self, text: str | None = None, error: LLMError | None = None):
        self.text, self.error, self.seen = text, error, []

    def complete(self, messages, *, deadline):
        self.seen.append(messages)
        if self.error:
            raise self.error
        return LLMReply(self.text or "", 100, 10)


def test_llm_translation_of_a_recorded_reply():
    llm = FakeLLM("Reasoning: the bedroom comes first.\nLTL: !agent_at(living_room) U agent_at(bedroom)")
    tr = LLMTranslator(llm).translate("You have to enter the bedroom before going into the living room.", HOUSE)
    assert tr.ltl == "!agent_at(living_room) U agent_at(bedroom)" and tr.source == "llm:fake"
    msgs = llm.seen[0]
    assert msgs[0]["role"] == "system" and "agent_at(X)" in msgs[0]["content"]
    assert msgs[-1]["content"].endswith("Constraint: You have to enter the bedroom before going into the living room.")
    assert "rooms: kitchen, bedroom, living_room, bathroom" in msgs[-1]["content"]
    assert any(m["role"] == "assistant" and m["content"].startswith("LTL:") for m in msgs)   # few-shot


@pytest.mark.parametrize("reply, reason", [
    ("CANNOT: washing is a task, not a constraint", "washing is a task, not a constraint"),
    ("I think the robot should be careful.", "no 'LTL:' line"),
    ("LTL: G (agent_at(bathroom)", "does not parse"),
    ("LTL: G !levitate(robot)", "unknown predicate 'levitate'"),
    ("LTL: G !agent_at(garage)", "'garage' names no object"),
    ("LTL: __import__('os').system('true')", "does not parse"),
])
def test_llm_replies_that_are_no_formula_are_refused(reply, reason):
    with pytest.raises(TranslationError, match=reason):
        LLMTranslator(FakeLLM(reply)).translate("Never enter the garage.", HOUSE)


def test_llm_failure_is_a_translation_error():
    llm = FakeLLM(error=LLMError("HTTP 429 after 3 retries", retryable=True))
    with pytest.raises(TranslationError, match="the language model failed: HTTP 429"):
        LLMTranslator(llm).translate("Never enter the bathroom.", HOUSE)


def test_chain_falls_back_to_the_rules():
    chain = ChainTranslator([LLMTranslator(FakeLLM(error=LLMError("offline"))), RULES])
    assert chain.translate("Never enter the bathroom.", HOUSE).ltl == "G !agent_at(bathroom)"
    with pytest.raises(TranslationError, match="offline .* no verb"):
        chain.translate("Wash the dishes.", HOUSE)


def test_monitor_adds_sentences_through_its_translator():
    m = SafetyMonitor(HOUSE, compiler=COMPILER, translator=RULES)
    c = m.add(text="Never enter the bathroom.")
    assert c.ltl == "G !agent_at(bathroom)" and c.source == RULES_LABEL
    assert c.english == "It must never happen that the robot is at the bathroom."
    assert m.check_action("move_to(Toilet_1)").verdict == UNSAFE
    with pytest.raises(TranslationError, match="cannot translate 'Wash the dishes.'"):
        m.add(text="Wash the dishes.")
    assert len(m.constraints()) == 1


# --------------------------------------------------------------------------- English reading
@pytest.mark.parametrize("formula, english", [
    ("G !agent_at(bathroom)", "It must never happen that the robot is at the bathroom."),
    ("G (open(fridge) -> F close(fridge))",
     "Whenever the robot opens the fridge, then sooner or later the robot closes the fridge."),
    ("G (switched_on(stove) -> agent_at(kitchen))", "Whenever the stove is switched on, the robot is at the kitchen."),
    ("!F (pick(medicine) & X F pick(medicine))", "It happens at most once that the robot picks up the medicine."),
    ("G (pick(medicine) -> G !pick(bottle))",
     "Once the robot picks up the medicine, it must never again happen that the robot picks up the bottle."),
    ("F handover(medicine)", "At some point, the robot hands the medicine over."),
    ("G !is_open(CoffeeMachine_1)", "It must never happen that CoffeeMachine_1 is open."),
    ("person_near(robot) -> X !holding(knife)",
     "If a person is near the robot, then (at the next step the robot does not hold the knife)."),
    ("a W b", "A holds until b holds (or for ever)."),
])
def test_english_reading(formula, english):
    assert to_english(formula) == english


def test_canonical_spellings_of_one_world():
    f = canonical(parse("agent_at(livingroom) & agent_at(Living_Room) & holding(KNIFE) & holding(Knife_1)"), HOUSE)
    assert str(f) != "" and equivalent(
        f, canonical(parse("agent_at(living_room) & holding(knife) & holding(Knife_1)"), HOUSE), COMPILER)
