"""Recovery plans without an LLM: :class:`RulesRecoveryWriter` writes, for each issue
category, the plan text an LLM would write (paper §3.5). The text goes through the same plan
interpreter as an LLM's (:class:`raider_ros.recovery.planner.RecoveryPlanner`).

Categories follow the benchmark (``IA``, ``IU1`` far, ``IU2`` obstructed, ``IU3`` absent,
``IU4`` wrong state, ``IU5`` wrong property, ``IU6`` robot) plus the person issues of the
assistive plan (paper §5.2): ``HU`` person not recognised, ``HG`` not looking at the robot,
``HH`` hands not free, ``HD`` too far for a handover. Without a category hint the category is
read from the issue and the explanation.

Learned lessons: a writer made with ``lessons`` (an object with ``lesson_plan(LessonQuery) ->
(plan_text, source) | None``, e.g. :class:`raider_ros.memory.advisor.MemoryAdvisor`) first asks
it for a stored lesson that matches the situation (a similar instruction, the same issue
category and action); when there is one, its plan (rebound to the current ids) is written
instead of the category's rule. ``last_source`` says which was used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from raider_ros.common.text import split_words
from raider_ros.recovery.plan import (
    ACTIONS, ALIASES, Literal, Plan, PlanError, PlanStep, Var, parse_plan,
)

CATEGORIES = ("IA", "IU1", "IU2", "IU3", "IU4", "IU5", "IU6", "HU", "HG", "HH", "HD")
FREE_TABLE, CURRENT_LOC = "free_table", "current_loc"

_ID = re.compile(r"\b[A-Z][A-Za-z]*_\d+\b")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Z][A-Za-z0-9]*")   # Mug_1, medicine_counter, Adriana
_CALL = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*\((.*)\)\s*[.?!]?\s*$", re.S)
# words of a natural-language query -> action
_VERBS = {
    "pick": "pick", "grab": "pick", "take": "pick", "get": "pick", "fetch": "pick", "lift": "pick",
    "place": "place", "put": "place", "drop": "place", "open": "open", "close": "close", "shut": "close",
    "slice": "slice", "cut": "slice", "chop": "slice", "hand": "handover", "give": "handover",
    "handover": "handover", "deliver": "handover", "move": "move_to", "go": "move_to",
    "approach": "move_to", "navigate": "move_to", "turn": None, "switch": None,
}
_VERB_TEXT = {
    "pick": "pick up", "place": "put down", "open": "open", "close": "close", "slice": "slice",
    "handover": "hand over", "move_to": "go to", "turn_on": "turn on", "turn_off": "turn off",
}
# obstacles a single-arm robot should not try to carry away
_FURNITURE = {"chair", "armchair", "sofa", "table", "desk", "cabinet", "shelf", "bed",
              "door", "counter", "fridge", "person", "trolley", "cart", "bin", "stool", "couch",
              "wardrobe", "dresser", "plant"}


@dataclass
class RecoveryHints:
    """Structured facts that sharpen the rules plan (all optional)."""
    category: str | None = None            # one of CATEGORIES
    grounding: Sequence[str] = ()          # what the query refers to; for IA the candidates
    blocking: Sequence[str] = ()           # objects in the way (IU2)
    holding: str | None = None             # the held object (overrides the holding argument)
    location: str | None = None            # where a missing object is, when known (IU3)
    can_move: bool = False                 # IU1: move closer instead of asking for help


@dataclass(frozen=True)
class LessonQuery:
    """The situation a stored lesson must match (passed to ``lessons.lesson_plan``)."""
    query: str
    issue: str
    explanation: str
    holding: str | None
    category: str
    action: str | None
    args: tuple[str, ...]
    instructions: tuple[str, ...] = ()     # what the person said, oldest first


@dataclass
class RecoveryRequest:
    action: str | None                     # a plan action name, or None when not recognised
    args: list[str]
    text: str


def read_request(query: str, grounding: Sequence[str] = ()) -> RecoveryRequest:
    """``pick(Medicine_1)``, ``approach medicine_counter`` or "Can you pick the apple?"."""
    q = query.strip()
    m = _CALL.match(q)
    if m:
        action = _canonical(m.group(1).replace(" ", "_"))
        args = [c for c in (_arg(a) for a in m.group(2).split(",")) if c]
        return RecoveryRequest(action, args, q)
    words = q.split()
    # "approach medicine_counter", "pick adrianas_medicine medicine_counter": an action and names
    # (ids, snake_case names); a sentence that starts with a verb ("Pick up the soap.") is read below
    names = [w.strip(",.?!") for w in words[1:]]
    if words and _canonical(words[0]) in ACTIONS and names and all(_NAME.fullmatch(w) for w in names):
        return RecoveryRequest(_canonical(words[0]), names, q)
    action = _verb_of(q)
    args = list(grounding) or _ID.findall(q) or ([_object_phrase(q)] if _object_phrase(q) else [])
    return RecoveryRequest(action, args, q)


_ARG_EDGES = re.compile(r"^[\s\"'`(\[{]+|[\s\"'`)\]}.?!;]+$")


def _arg(text: str) -> str:
    """One argument of a written call without quotes or stray brackets: 'Apple")' -> 'Apple'."""
    return _ARG_EDGES.sub("", text)


def _canonical(name: str) -> str | None:
    low = name.lower()
    low = ALIASES.get(low, low)
    return low if low in ACTIONS else None


def _verb_of(text: str) -> str | None:
    low = text.lower()
    if re.search(r"\b(turn|switch)\s+(\w+\s+){0,4}?on\b|\b(turn|switch)\s+on\b", low):
        return "turn_on"
    if re.search(r"\b(turn|switch)\s+(\w+\s+){0,4}?off\b|\b(turn|switch)\s+off\b", low):
        return "turn_off"
    for w in re.findall(r"[a-z_]+", low):
        if _VERBS.get(w):
            return _VERBS[w]
    return None


def _object_phrase(text: str) -> str:
    low = text.strip().rstrip("?.!")
    m = re.search(r"\b(?:pick|grab|take|get|fetch|open|close|slice|cut|give|hand|place|put|approach)"
                  r"(?:\s+up)?\s+(.*)", low, re.I)
    return (m.group(1) if m else "").strip()


def type_word(name: str) -> str:
    """'CoffeeMachine_1' -> 'coffee machine'; 'adrianas_medicine' -> 'adrianas medicine'."""
    words = [w for w in split_words(name) if not w.isdigit()]
    return " ".join(words) or name


def _list_or(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


# --------------------------------------------------------------------------- categories
def infer_category(issue: str, explanation: str, action: str | None) -> str:
    """The issue category from RAIDER's output when no structured hint is given."""
    if issue.strip().lower() == "ambiguity":
        return "IA"
    e = explanation.lower()
    if re.search(r"not (be )?recogni[sz]|unrecogni[sz]|unknown (person|user)|cannot identify", e):
        return "HU"
    if re.search(r"not looking|gaze|attention|looking away|facing away", e):
        return "HG"
    if re.search(r"hands? (is |are )?(not free|full|busy|occupied)|no free hand", e) and "robot" not in e:
        return "HH"
    if action == "slice" and re.search(r"knife", e) and \
            re.search(r"not holding|without|no knife|needs? a knife|requires? a knife", e):
        return "IU6"
    if re.search(r"\b(robot|gripper|arm)\b.*\b(holding|full|occupied)\b|already holding|hand is full|"
                 r"not holding|is holding|while holding", e):
        return "IU6"
    if re.search(r"block|obstruct|in the way|path .*not (free|clear)|not free|cannot be approached", e):
        return "IU2"
    if re.search(r"reach|too far|far away|beyond|distance|out of range", e):
        return "HD" if action == "handover" and re.search(r"person|human|user|\bher\b|\bhim\b", e) else "IU1"
    if re.search(r"not (be )?found|cannot find|can't find|absent|not (present|visible|in the scene|detected)|"
                 r"missing|does not exist|no \w+ (in|on|is)|there is no", e):
        return "IU3"
    if re.search(r"not (pickupable|sliceable|openable|toggleable|a receptacle|graspable|moveable)|"
                 r"cannot be (picked|sliced|opened|turned|switched|moved|closed|placed)|too heavy|"
                 r"does not have|no such property|is not something", e):
        return "IU5"
    if re.search(r"closed|\bopen\b|switched (on|off)|turned (on|off)|\bis (on|off)\b|already|sliced|dirty|"
                 r"filled|empty|broken|cooked", e):
        return "IU4"
    return "IU5"


# --------------------------------------------------------------------------- the writer
class RulesRecoveryWriter:
    """Writes plan text per issue category (no LLM)."""

    name = "rules (no LLM)"

    def __init__(self, lessons: Any = None):
        if lessons is not None and not callable(getattr(lessons, "lesson_plan", None)):
            raise ValueError(f"{lessons!r} has no lesson_plan(LessonQuery) method")
        self.lessons = lessons
        self.last_source = self.name

    def write(self, query: str, issue: str, explanation: str, holding: str | None = None,
              hints: RecoveryHints | None = None, *, instructions: Sequence[str] = ()) -> str:
        h = hints or RecoveryHints()
        if issue.strip().lower() == "unsafe":      # a corrective re-prompt of the Safety Chip
            return self._corrective(query, explanation)
        holding = h.holding if h.holding is not None else holding
        if holding in ("", "none", "None", "null"):
            holding = None
        if holding is None:   # "... but it is holding Egg_1": the explanation knows better
            m = re.search(r"(?:is|robot|already|it's|still) holding (?:the |an? )?([A-Z][A-Za-z]*_\d+)", explanation)
            holding = m.group(1) if m else None
        q = read_request(query, () if h.category == "IA" else h.grounding)
        category = (h.category or infer_category(issue, explanation, q.action)).upper()
        if category not in CATEGORIES:
            raise PlanError(f"unknown issue category {category!r}; expected one of {', '.join(CATEGORIES)}")
        self.last_source = self.name
        if self.lessons is not None:
            found = self.lessons.lesson_plan(LessonQuery(
                query=query, issue=issue, explanation=explanation, holding=holding, category=category,
                action=q.action, args=tuple(q.args), instructions=tuple(i for i in instructions if i)))
            if found:
                text, self.last_source = found
                return text
        b = _Builder(q, explanation, holding, h)
        getattr(b, f"plan_{category.lower()}")()
        if not b.steps:
            b.say_cannot()
        return Plan(tuple(b.steps)).to_code()


    def _corrective(self, query: str, prompt: str) -> str:
        """Steps that keep the violated constraints (raider_ros/safety/replan.py), before the step."""
        from raider_ros.safety.replan import CorrectiveError, corrective_plan
        try:
            cp = corrective_plan(query, prompt)
        except CorrectiveError as exc:
            raise PlanError(f"cannot read the corrective re-prompt: {exc}") from None
        self.last_source = f"{self.name}: corrective re-plan ({cp.note})"
        return Plan(tuple(PlanStep(a, tuple(Literal(x) for x in args)) for a, args in cp.steps)).to_code()


class _Builder:
    def __init__(self, q: RecoveryRequest, explanation: str, holding: str | None, hints: RecoveryHints):
        self.q, self.holding, self.hints = q, holding, hints
        self.explanation = explanation.strip().rstrip(".")
        self.steps: list[PlanStep] = []
        ids_in_expl = _ID.findall(explanation)
        self.target = (q.args[0] if q.args else None) or (ids_in_expl[0] if ids_in_expl else None)
        self.mentioned = ids_in_expl

    # helpers ------------------------------------------------------------------------
    def add(self, action: str, *args: str | Var, binds: str | None = None) -> None:
        self.steps.append(PlanStep(action, tuple(a if isinstance(a, Var) else Literal(str(a)) for a in args), binds))

    def word(self, name: str | None) -> str:
        return type_word(name) if name else "object"

    def verb(self) -> str:
        return _VERB_TEXT.get(self.q.action or "", "do that with")

    def original(self, replace: dict[int, Var] | None = None) -> None:
        """End with the original action, when it is a plan action with the right arguments."""
        action = self.q.action
        if action is None or action in ("ask", "say"):
            return
        args: list[str | Var] = list(self.q.args)
        if action == "handover" and len(args) == 1 and self.holding:
            args = [self.holding, args[0]]
        for i, v in (replace or {}).items():
            if i < len(args):
                args[i] = v
            elif i == len(args):
                args.append(v)
        args = args[:ACTIONS[action]]   # e.g. "pick medicine counter": the location is not an argument
        if len(args) != ACTIONS[action]:
            return
        self.add(action, *args)

    def say_cannot(self) -> None:
        what = f"{self.verb()} the {self.word(self.target)}" if self.target else "do that"
        self.add("say", f"I cannot {what}: {self.explanation or 'there is a problem I cannot solve'}.")

    def put_down_held(self, *, come_back: bool = True) -> None:
        if self.holding:
            self.add("move_to", FREE_TABLE)
            self.add("place", FREE_TABLE)
            self.holding = None
            if come_back:
                self.add("move_to", CURRENT_LOC)

    # categories ---------------------------------------------------------------------
    def plan_ia(self) -> None:
        candidates = list(self.hints.grounding) or self.mentioned
        people = bool(candidates) and all(c.lower().startswith("person") for c in candidates)
        if self.q.action == "handover" and people:
            obj = self.q.args[0] if self.q.args else self.holding
            self.add("ask", f"Who should I give the {self.word(obj)} to, {_list_or(candidates)}?", binds="person")
            self.original({1: Var("person")})
            return
        kinds = {self.word(c) for c in candidates}
        if len(kinds) > 1:   # different types: name them by type, as a person would
            noun, choices = "one", ", the " + _list_or(sorted(kinds)).replace(" or ", " or the ")
        else:
            noun = kinds.pop() if kinds else self.word(self.target)
            choices = f", {_list_or(candidates)}" if candidates else ""
        self.add("ask", f"Which {noun} should I {self.verb()}{choices}?", binds="choice")
        self.original({0: Var("choice")})

    def plan_iu1(self) -> None:
        if self.hints.can_move and self.target:
            self.add("move_to", self.target)
        else:
            self.add("ask", f"I cannot reach the {self.word(self.target)}. "
                            "Could you bring it closer to me, please?")
        self.original()

    def plan_iu2(self) -> None:
        targets = set(self.q.args) | set(self.hints.grounding)
        blockers = list(dict.fromkeys(self.hints.blocking or [m for m in self.mentioned if m not in targets]))
        goal = self.word(self.target)
        carry = [b for b in blockers if not (set(split_words(b)) & _FURNITURE)]
        needs_hand = self.q.action in ("place", "handover", "slice") and self.holding
        if not blockers or self.q.action == "move_to" or len(carry) < len(blockers) or needs_hand:
            words = list(dict.fromkeys(self.word(b) for b in blockers))     # Chair_1 and "chair": one chair
            what = f"The {_list_or(words)}" if words else "Something"
            verb = "is" if len(words) <= 1 else "are"
            it = "them" if len(words) > 1 else "it"
            self.add("ask", f"{what} {verb} in my way to the {goal}. Could you move {it} aside, please?")
        else:
            self.put_down_held()
            for b in blockers:
                self.add("pick", b)
                self.add("move_to", FREE_TABLE)
                self.add("place", FREE_TABLE)
                self.add("move_to", CURRENT_LOC)
        self.original()

    def plan_iu3(self) -> None:
        missing = self.target
        if self.hints.location:
            loc: str | Var = self.hints.location
        else:
            self.add("ask", f"I cannot find the {self.word(missing)}. Where is it?", binds="location")
            loc = Var("location")
        self.add("move_to", loc)
        self.original()

    def plan_iu4(self) -> None:
        e = self.explanation.lower()
        action = self.q.action
        others = [m for m in self.mentioned if m not in self.q.args]
        container = others[0] if others else self.target
        if "closed" in e and action in ("pick", "place") and container:
            if action == "pick":
                self.put_down_held()
            self.add("open", container)
            self.original()
        elif re.search(r"switched on|turned on|\bis on\b|running", e) and action in ("open", "pick", "place") \
                and container:
            self.add("turn_off", container)
            self.original()
        else:
            self.say_cannot()

    def plan_iu5(self) -> None:
        self.say_cannot()

    def plan_iu6(self) -> None:
        action, holding = self.q.action, self.holding
        obj = self.q.args[0] if self.q.args else None
        if action == "slice" and not (holding and "knife" in holding.lower()):
            self.put_down_held(come_back=False)
            self.add("ask", "Where can I find a knife?", binds="knife_location")
            self.add("move_to", Var("knife_location"))
            self.add("pick", "Knife")
            self.add("move_to", CURRENT_LOC)
            self.original()
        elif action == "handover" and obj and holding != obj:
            self._fetch(obj)
        elif action == "place" and (holding is None or "not holding" in self.explanation.lower()):
            wanted = [m for m in self.mentioned if m not in (holding, obj)]
            self._fetch(wanted[0] if wanted else "object")
        elif holding:
            self.put_down_held()
            self.original()
        else:
            self.say_cannot()

    def _fetch(self, obj: str) -> None:
        self.put_down_held(come_back=False)
        self.add("ask", f"Where is the {self.word(obj)}?", binds="location")
        self.add("move_to", Var("location"))
        self.add("pick", obj)
        self.add("move_to", CURRENT_LOC)
        self.original()

    def plan_hu(self) -> None:
        self.add("say", "I cannot recognise the person in front of me.")
        self.add("ask", "Could you tell me who you are, please?", binds="name")
        self.original()

    def plan_hg(self) -> None:
        obj = self.q.args[0] if self.q.action == "handover" and self.q.args else self.holding
        extra = f" I have your {self.word(obj)}." if obj else ""
        self.add("ask", f"Excuse me, could you look at me, please?{extra}")
        self.original()

    def plan_hh(self) -> None:
        obj = self.q.args[0] if self.q.args else self.holding
        self.add("ask", f"Could you free one of your hands so I can give you the {self.word(obj)}?")
        self.original()

    def plan_hd(self) -> None:
        person = self.q.args[1] if self.q.action == "handover" and len(self.q.args) > 1 else None
        person = person or next((m for m in self.mentioned if m.lower().startswith("person")), None)
        if person:
            self.add("move_to", person)
        else:
            self.add("ask", "Could you come a little closer, please?")
        self.original()
