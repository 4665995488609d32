"""The ``rules`` backend: an offline reasoner that follows the agent procedure (Ground, Ask &
Answer, Issue) without a language model, speaking the same text protocol as one.

Each call to :meth:`RulesReasoner.complete` re-reads the whole conversation, replays the
procedure on the tool results gathered so far and stops at the first step that still lacks
answers: it then writes that step's heading, a line of reasoning and the tool calls of the
round (``call_tool{...}`` lines, all of a round at once). When nothing is missing it writes
the final response JSON. It sees only the conversation: no scene file, no simulator truth.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from raider_ros.agent.llm import LLMError, LLMReply, Message
from raider_ros.common.text import split_words, word_key

from . import embedding
from .checks import CheckOutcome, Checker
from .grounding import CLEAR_SCORE, Grounder, Grounding, Pool, join_ids, person_phrase, role_words, use_description
from .knowledge import Knowledge, KnowledgeError, load_knowledge, say_type, type_words
from .lexicon import load_lexicon
from .query import NP, ParsedQuery, parse_np, parse_query
from .transcript import Conversation, Observations, entry_for, read_conversation

HOLD_ROLES_CHECK = "holding"       # a role checked with this must be the object in the gripper
PERSON_ROLES = ("recipient",)
PERSON_TOOLS = ("recognize_humans", "check_humans_around")
MAX_ALSO = 2                       # further failed preconditions named after the first
CLOSEST_NAMED = 3                  # a "not found" answer names this many of the closest ids in view
VERB_SIMILARITY = 0.70             # an unknown verb reads as an action this similar (sentence embedding) ...
VERB_MARGIN = 0.04                 # ... when no other action comes this close


_POINTING = frozenset({"this", "that", "it", "this one", "that one", "these", "those", "them", ""})


def _drink_in_hand(np: NP, held: str, kb: Knowledge) -> bool:
    """A phrase that names a liquid or a drink (WordNet) while the gripper holds a vessel."""
    lex = load_lexicon()
    if not np.words or np.quals or not lex.under_any(np.words, [["liquid"], ["beverage"]]):
        return False
    words = type_words(held)
    return bool(words) and (words[-1] in kb.container_heads or bool(lex.is_a(words, ["vessel"]))
                            or bool(lex.is_a(words, ["container"])))


def _points_at_held(np: NP) -> bool:
    """A phrase that only points ("this", "that one", or nothing left after "that")."""
    return np.raw.strip().lower() in _POINTING and not np.quals and not np.states


def _in_gripper(held: str, fact: str) -> Grounding:
    """The object in the gripper, grounded for the reason ``fact`` says."""
    return Grounding.of([held], base=[held], how="held", facts=[fact])


def _other_ids(results: dict[str, Grounding], role: str) -> list[str]:
    """What the query's other arguments grounded to, one each (not where a pick starts from)."""
    return [x for r, o in results.items() if r not in (role, "source") and o.status == "one" for x in o.ids]


class _NeedCalls(Exception):
    """Raised at a step that still lacks tool answers."""

    def __init__(self, step: str, lines: list[str], calls: list[tuple[str, tuple[str, ...]]]):
        super().__init__(step)
        self.step, self.lines, self.calls = step, lines, calls


@dataclass
class Decision:
    issue: str
    explanation: str
    grounding: list[str]
    lines: list[str] = field(default_factory=list)   # reasoning shown before the JSON


STEP_TITLES = {"ground": "Step 1 - Ground", "ask": "Step 2 - Ask", "answer": "Step 3 - Answer",
               "issue": "Step 4 - Issue"}


class RulesReasoner:
    """``LLM`` protocol backend without a model (labelled "rules (no LLM)").

    ``knowledge_dir`` overrides data/knowledge; ``use_embeddings`` allows the sentence-embedding
    fallback of grounding, and ``preload`` starts loading its model in the background right
    away (it takes seconds); after ``max_turns`` assistant turns the reasoner decides with what
    it has (missing answers count as unknown). ``model`` is accepted for symmetry with the
    other backends and ignored.
    """
    name = "rules (no LLM)"

    def __init__(self, knowledge_dir: str | None = None, use_embeddings: bool = True,
                 max_turns: int = 8, model: str | None = None, preload: bool = True,
                 reach_m: float = 1.1, handover_distance_m: float = 0.5):
        if not isinstance(max_turns, int) or max_turns < 2:
            raise ValueError(f"max_turns must be an integer >= 2, got {max_turns!r}")
        try:
            self.kb: Knowledge = load_knowledge(str(knowledge_dir) if knowledge_dir else None)
        except KnowledgeError as e:
            raise ValueError(str(e)) from None
        self.use_embeddings = bool(use_embeddings)
        self.max_turns = max_turns
        for name, v in (("reach_m", reach_m), ("handover_distance_m", handover_distance_m)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 100:
                raise ValueError(f"{name} must be a positive number of metres, got {v!r}")
        # the robot's limits come from configuration (the detector settings), never from the
        # prompt's wording; a distance result's own reach_m still wins over reach_m
        self.reach_m, self.handover_distance_m = float(reach_m), float(handover_distance_m)
        if self.use_embeddings and preload:
            embedding.start_loading()

    def warm_up(self) -> bool:
        """Load the embedding model now rather than during a query."""
        return self.use_embeddings and embedding.warm_up()

    def complete(self, messages: Sequence[Message], *, deadline: float) -> LLMReply:
        if time.monotonic() >= deadline:
            raise LLMError("the deadline passed before the rules reasoner started")
        try:
            conv = read_conversation(messages)
        except ValueError as e:
            raise LLMError(f"cannot read the conversation: {e}") from None
        if not conv.query:
            raise LLMError("the conversation holds no query (first user message is empty)")
        final = conv.turns >= self.max_turns - 1
        run = _Run(self, conv, Observations(conv, final=final), deadline)
        try:
            decision = run.decide()
        except _NeedCalls as need:
            return LLMReply(text=_calls_text(need), model=self.name)
        return LLMReply(text=_final_text(decision), model=self.name)


_PROTOCOL_WORD = re.compile(r"call[ _]?tool", re.I)


def _prose(line: str) -> str:
    """A line of the reasoner's own prose, which may quote labels the world wrote: nothing in
    it may read as a tool call or a final response (braces become parentheses)."""
    return _PROTOCOL_WORD.sub("call-tool", line).replace("{", "(").replace("}", ")")


def _calls_text(need: _NeedCalls) -> str:
    lines = [_prose(line) for line in need.lines]
    if need.step == "ask":
        lines.append(f"{STEP_TITLES['answer']}: I call the tools that answer these questions.")
    lines += [f'call_tool{_json_text({"tool": t, "args": list(a)})}' for t, a in need.calls]
    return "\n".join(lines)


_INNER_BRACKETS = str.maketrans({"{": "\\u007b", "}": "\\u007d", "(": "\\u0028", ")": "\\u0029"})


def _json_text(obj: dict) -> str:
    """A flat mapping of strings and lists of strings as JSON. When a string in it quotes
    something like a tool call (a label the world wrote), its braces and parentheses are
    written as \\u escapes, which json reads back unchanged: it never reads as a call."""
    body = json.dumps(obj)
    if not _PROTOCOL_WORD.search(body):
        return body
    return "{" + body[1:-1].translate(_INNER_BRACKETS) + "}"


def _final_text(d: Decision) -> str:
    body = _json_text({"final_response": d.issue, "explanation": d.explanation, "grounding": d.grounding})
    return "\n".join([*(_prose(line) for line in d.lines), body])


class _Run:
    """One replay of the procedure over the conversation so far."""

    def __init__(self, owner: RulesReasoner, conv: Conversation, obs: Observations, deadline: float):
        self.kb = owner.kb
        self.owner = owner
        self.conv = conv
        self.obs = obs
        self.deadline = deadline
        self.lines: list[str] = []
        self.people: dict[str, str | None] = {}

    # ------------------------------------------------------------------ plumbing
    def checkpoint(self, step: str, lines: list[str]) -> None:
        if self.obs.pending:
            raise _NeedCalls(step, self.lines + lines, list(self.obs.pending))

    def sentence(self, key: str, **values: Any) -> str:
        return self.kb.sentence("sentences", key, **values)

    @property
    def distance_tool(self) -> str | None:
        return next((t for t in ("dist_to_target", "dist_robot_to_obj") if self.obs.has(t)), None)

    # ------------------------------------------------------------------ the procedure
    def decide(self) -> Decision:
        kb, obs = self.kb, self.obs
        pq = parse_query(self.conv.query, " ".join(self.conv.context), kb, guess_verb=self._guess_verb)
        if not pq.args:
            return Decision("unfeasibility", self.sentence("no_action"), [],
                            [f"{STEP_TITLES['ground']}: I cannot find an action with an object in "
                             f"\"{self.conv.query}\"."])
        say = kb.actions[pq.action].say if pq.action in kb.actions else (pq.verb or "handle")
        action_text = f"the action is {say}" if pq.action else f"the action \"{pq.verb}\" is not one I know; I check it as a generic manipulation"
        args_text = "; ".join(f"{role}: \"{np.describe()}\"" for role, np in pq.args.items())
        intro = f"{STEP_TITLES['ground']}: {action_text} ({args_text})."
        if pq.result:
            intro += f" \"{pq.result}\" says what the action makes, not which object."
        if pq.purpose:
            intro += f" \"{pq.purpose}\" says what the action is for, not which object."
        if pq.later:
            intro += f" \"{pq.later}\" is a later step: I check the first action only."

        # ---- GROUND, round 1: what is in view, in the gripper, and who is around
        # (objects or the gripper listed in the first message are taken from there)
        needs_people = any(self._is_person_role(pq, r) for r in pq.args)
        hint = self.conv.objects_hint
        det = obs.get("object_detection") if hint is None else None
        held = obs.get("robot_holding") if not self.conv.held_known else None
        if needs_people:
            self._ask_people()
        self.checkpoint("ground", [intro + " First I list the objects in view and what the robot holds"
                                   + (", and the people around." if needs_people else ".")])
        objects = hint if det is None else ([str(x) for x in det.data] if det.ok and isinstance(det.data, list) else None)
        if objects is None:
            reason = det.error or "the tool is not available"
            return Decision("unfeasibility", self.sentence("no_perception", reason=reason), [],
                            [intro, f"{STEP_TITLES['issue']}: object detection gave no answer."])
        if held is None:
            held_id = self.conv.held_hint
        else:
            held_id = held.data if held.ok and isinstance(held.data, str) and held.data else None
        pool = Pool(objects, held_id, self._people())
        self.people = pool.people
        self.lines.append(f"{intro} In view: {', '.join(objects) or 'nothing'}; in the gripper: {held_id or 'nothing'}.")
        gr = Grounder(obs, kb, pool, deadline=self.deadline, use_embeddings=self.owner.use_embeddings,
                      distance_tool=self.distance_tool)
        self.grounder = gr
        gr.strict = pq.structured
        if pq.action == "place" and list(pq.args) == ["object"] and held_id and "location" in kb.actions["place"].roles \
                and not gr.match_name(pq.args["object"], [held_id])[0]:
            # place(CuttingTable) while holding the glass cutter: the held object goes onto the
            # one named, as the paper's place(object) puts down what the robot holds
            pq.args = {"object": parse_np(type_words(held_id), kb), "location": pq.args["object"]}
            self.lines.append(f"The robot holds {held_id}, which is not \"{pq.args['location'].describe()}\": "
                              f"I read it as where {held_id} goes.")
        if pq.action == "handover" and not any(obs.has(t) for t in PERSON_TOOLS):
            # no tool can see people ("bring the vase over", "pass me the salt"): check what can
            # be checked, fetching the object if it is not in hand
            pq.args.pop("recipient", None)
            obj = pq.args.get("object")
            if obj is not None and not (held_id and gr.match_name(obj, [held_id])[0]):
                pq.action, say = "pick", kb.actions["pick"].say
            self.lines.append(f"No tool here can check people, so I check the object only: the action becomes {say}.")

        # ---- GROUND, round 2: qualifiers of every argument
        hold_roles = {str(c.get("arg") or "object") for c in kb.checks.get(pq.action or "", [])
                      if c.get("check") == HOLD_ROLES_CHECK}
        results: dict[str, Grounding] = {}
        for role, np in pq.args.items():
            results[role] = self._ground_role(gr, pq, role, np, pool, role in hold_roles)
        pending = [r for r, g in results.items() if g.status == "pending"]
        self.checkpoint("ground", [f"{STEP_TITLES['ground']} (continued): " + "; ".join(
            self._pending_text(pq.args[r], results[r]) for r in pending) + "."])
        for role, g in results.items():
            # nothing matched, or a reference matched no object ("the mug right of Kenji"): people?
            if g.status == "none" and (self._is_person_role(pq, role) is None or g.missing_ref is not None) \
                    and not pool.people and self._ask_people():
                self.checkpoint("ground", [f"{STEP_TITLES['ground']} (continued): no object matches "
                                           f"\"{pq.args[role].describe()}\"; I look for people."])
        meant = kb.artifact_actions.get(pq.action or "")
        obj = results.get("object")
        if meant and obj is not None and obj.status == "one" and word_key(split_words(pq.verb)) != pq.action \
                and _artifact(obj.ids[0], kb):
            # "warm up the soldering iron": heating a thing made, not food, is switching it on
            say = kb.actions[meant].say
            self.lines.append(f"{obj.ids[0]} is a made thing, not food: to {pq.verb} it is to {say} it.")
            pq.action = meant
        for role, g in results.items():
            if g.facts:
                self.lines.append(f"{STEP_TITLES['ground']}: " + "; ".join(g.facts) + ".")
        if gr.notes:
            self.lines.append("Note: " + "; ".join(gr.notes) + ".")
        self._afford(pq, results, hold_roles)

        issue = self._grounding_issue(pq, results, pool, say, hold_roles)
        if issue is not None:
            return issue
        # a place the object is taken from only locates it: several such places are no ambiguity
        grounded = {role: g.ids[0] for role, g in results.items() if g.status == "one"}
        ground_text = ", ".join(f"\"{pq.args[r].describe()}\" is {i}" for r, i in grounded.items())
        self.lines.append(f"{STEP_TITLES['ground']}: {ground_text}.")

        # ---- ASK & ANSWER: the action's preconditions
        checker = Checker(obs, kb, action=pq.action or "default", say=say, grounded=grounded, pool=pool,
                          distance_tool=self.distance_tool, reach_m=self.owner.reach_m,
                          handover_m=self.owner.handover_distance_m, place_relation=pq.place_relation)
        specs = kb.checks.get(pq.action or "", kb.checks["default"])
        outcomes = [o for o in (checker.run(s) for s in specs) if o is not None]
        questions = " ".join(o.question for o in outcomes)
        self.checkpoint("ask", [f"{STEP_TITLES['ask']}: {questions}"])
        self.lines.append(f"{STEP_TITLES['ask']}: {questions}")
        return self._issue(outcomes, grounded, pq, say)

    def _guess_verb(self, phrase: str) -> str | None:
        """The action a verb the knowledge lacks means ("wipe" -> clean), by sentence embedding
        against the known verbs; None when unsure or without embeddings."""
        if not self.owner.use_embeddings:
            return None
        verbs = [(" ".join(v), a.name) for a in self.kb.actions.values() for v in a.verbs
                 if not v[-1].endswith("object") and (len(v) > 1 or v[0] not in self.kb.verb_index or
                                                       self.kb.verb_index[v[0]] == a.name)]
        sims = embedding.similarities(phrase, [v for v, _ in verbs], deadline=self.deadline)
        if sims is None:
            return None
        best: dict[str, float] = {}
        for (_, action), s in zip(verbs, sims):
            best[action] = max(best.get(action, -1.0), float(s))
        ranked = sorted(best.items(), key=lambda x: -x[1])
        if not ranked or ranked[0][1] < VERB_SIMILARITY or (len(ranked) > 1 and ranked[0][1] - ranked[1][1] < VERB_MARGIN):
            return None
        self.lines.append(f"\"{phrase}\" is not a verb I know; it reads like {self.kb.actions[ranked[0][0]].say} "
                          f"(similarity {ranked[0][1]:.2f}).")
        return ranked[0][0]

    # ------------------------------------------------------------------ grounding helpers
    def _is_person_role(self, pq: ParsedQuery, role: str) -> bool | None:
        """True: a person argument; None: may be a person (approach); False: an object."""
        np = pq.args[role]
        personish = self.grounder_personish(np)
        if role in PERSON_ROLES or personish:
            return True
        if np.words and np.words[-1] in self.kb.role_nouns and role_words(np, self.kb):
            return None                  # "the cook": a person, unless an object here is called so
        return None if role == "target" and pq.action == "approach" else False

    def grounder_personish(self, np: NP) -> bool:
        """A person is meant when the head word is a person word ("the guest"), not when one only
        modifies an object ("the guest book"), or a pronoun ("her")."""
        return person_phrase(np, self.kb)

    def _ask_people(self) -> bool:
        asked = False
        for tool in PERSON_TOOLS:
            if self.obs.has(tool):
                self.obs.get(tool)
                asked = True
        return asked

    def _people(self) -> dict[str, str | None]:
        people: dict[str, str | None] = {}
        for tool in ("check_humans_around", "recognize_humans"):
            key = (tool, ())
            o = self.conv.results.get(key)
            if o is None or not o.ok:
                continue
            if isinstance(o.data, dict):
                for pid, name in o.data.items():
                    people[str(pid)] = str(name) if isinstance(name, str) and name.strip() else people.get(str(pid))
            elif isinstance(o.data, list):          # ids, or (recognize_humans) names as ids
                for pid in map(str, o.data):
                    named = tool == "recognize_humans" and re.fullmatch(r"[A-Za-z][A-Za-z .'-]*", pid) \
                        and not re.fullmatch(r"(?i)person[ _]?\d*|none|unknown", pid)
                    people[pid] = pid if named else people.get(pid)
        return people

    def _ground_role(self, gr: Grounder, pq: ParsedQuery, role: str, np: NP, pool: Pool, must_hold: bool) -> Grounding:
        person = self._is_person_role(pq, role)
        if person:
            return gr.ground_person(np, pq.person_hint, pq.role_names)
        if np.held:                      # "what you're holding", "the bottle you've got"
            if not pool.held:
                if np.words and self.kb.category_of(np.words) != "thing":
                    # "put the timer you're holding on the desk" with an empty gripper: the one
                    # timer in view is what the request is about (named in the grounding, not
                    # held); of two bottles in view, neither is named
                    seen = gr.ground(np)
                    if seen.status == "pending":
                        return seen
                    return Grounding("none", how="held", base=list(seen.ids) if seen.status == "one" else [])
                return Grounding("none", how="held")
            if not np.words or gr.match_name(np, [pool.held])[0]:
                return _in_gripper(pool.held, f"the robot holds {pool.held}, which \"{np.describe() or 'what it holds'}\" names")
            close = gr.meaning_scores(np.words, [pool.held])
            if close and close[0][1] >= CLEAR_SCORE:
                # "give Tom the printer paper you're carrying" while holding the paper ream: what
                # the speaker says is in the gripper, named close enough, is what is held
                return _in_gripper(pool.held, f"the robot holds {pool.held}, the closest in meaning to \"{np.describe()}\"")
        if must_hold and not pool.held and _points_at_held(np):
            # "put it on the hot plate" with an empty gripper: "it" points at nothing in view
            return Grounding("none", how="held")
        if must_hold and pool.held and _points_at_held(np):
            # "give this to my flatmate", "hand that to Kenji": a bare pointing word for what must
            # be in the hand is the object in the hand
            return _in_gripper(pool.held, f"the robot holds {pool.held}, which \"{np.raw or 'that'}\" points at")
        if must_hold and pool.held and _drink_in_hand(np, pool.held, self.kb):
            # "give Arthur the water" while holding his cup: the drink is handed over in what holds it
            return _in_gripper(pool.held, f"the robot holds {pool.held}, which holds what \"{np.describe()}\" names")
        if must_hold and pool.held and gr.match_name(np, [pool.held])[0]:
            return _in_gripper(pool.held, f"the robot holds {pool.held}, which matches \"{np.describe()}\"")
        g = gr.ground(np, exclude_held=pq.action == "pick" and self._held_alternatives(gr, np, pool))
        if g.status == "none" and person is None and pool.people:
            p = gr.ground_person(np, pq.person_hint, pq.role_names)
            if p.status != "none" or p.unknown_person:   # a person is there, just not recognised
                return p
        return g

    def _afford(self, pq: ParsedQuery, results: dict[str, Grounding], hold_roles: set[str]) -> None:
        """Common sense among several candidates: only those the action can be done with
        ("turn off the thing left of the vase": the toggleable one), when any of them can."""
        specs = self.kb.checks.get(pq.action or "", [])
        first = next(iter(pq.args), None)
        words = self.kb.text["state_words"]
        asked: dict[str, tuple[list[str], list[tuple[str, bool]]]] = {}
        for role, g in results.items():
            mine = [c for c in specs if str(c.get("arg") or first) == role]
            props = [str(c["property"]) for c in mine if c.get("check") == "property"]
            states = [(str(c["key"]), bool(c["value"])) for c in mine if c.get("check") == "state" and not c.get("optional")]
            props = props if self.obs.has("get_obj_properties") else []
            states = states if self.obs.has("get_obj_state") else []
            if g.status != "several" or role in hold_roles or not (props or states):
                continue
            asked[role] = (props, states)
            for c in g.ids:
                if props:
                    self.obs.get("get_obj_properties", c)
                if states:
                    self.obs.get("get_obj_state", c)
        if not asked:
            return

        def need(props: list[str], states: list[tuple[str, bool]]) -> str:
            return " and ".join(props + [words.get(k, {}).get(str(v).lower(), k) for k, v in states])

        self.checkpoint("ground", [f"{STEP_TITLES['ground']} (continued): several candidates remain for " + "; ".join(
            f"\"{pq.args[r].describe()}\" ({join_ids(results[r].ids)}); I check which are {need(*ps)}"
            for r, ps in asked.items()) + "."])
        for role, (props, states) in asked.items():
            g = results[role]
            able = [c for c in g.ids if self._affords(c, props, states)]
            if props and not any(self._affords(c, props, []) for c in g.ids) and \
                    all(self._known_properties(c) for c in g.ids):
                # none of them can be <verb>ed: which one is meant does not change the answer
                self.lines.append(f"{STEP_TITLES['ground']}: none of {join_ids(g.ids, 'or')} is "
                                  f"{need(props, [])}, so whichever is meant the answer is the same; I check {g.ids[0]}.")
                results[role] = Grounding.of(g.ids[:1], base=g.base, how=g.how, facts=g.facts)
                continue
            if able and len(able) < len(g.ids):
                self.lines.append(f"{STEP_TITLES['ground']}: of {join_ids(g.ids)}, only {join_ids(able)} "
                                  f"{'is' if len(able) == 1 else 'are'} {need(props, states)}.")
                results[role] = Grounding.of(able, base=g.base, how=g.how, facts=g.facts)

    def _known_properties(self, c: str) -> bool:
        a = self.obs.get("get_obj_properties", c)
        entry = entry_for(a.data, "object", c) if a.ok else None
        return isinstance(entry, dict) and isinstance(entry.get("properties"), list)

    def _affords(self, c: str, props: list[str], states: list[tuple[str, bool]]) -> bool:
        if props:
            a = self.obs.get("get_obj_properties", c)
            entry = entry_for(a.data, "object", c) if a.ok else None
            have = entry.get("properties") if isinstance(entry, dict) else None
            if not (isinstance(have, list) and all(p in have for p in props)):
                return False
        if states:
            a = self.obs.get("get_obj_state", c)
            entry = entry_for(a.data, "object", c) if a.ok else None
            st = entry.get("state") if isinstance(entry, dict) else None
            if not (isinstance(st, dict) and all(st.get(k) is v for k, v in states)):
                return False
        return True

    @staticmethod
    def _held_alternatives(gr: Grounder, np: NP, pool: Pool) -> bool:
        """Picking: the object in hand is a candidate only when nothing in view matches."""
        if not pool.held:
            return False
        return bool(gr.match_name(np, [o for o in pool.objects if o != pool.held])[0])

    def _pending_text(self, np: NP, g: Grounding) -> str:
        base = join_ids(g.base, "or") if g.base else "nothing yet"
        quals = [q.phrase + (f" the {q.ref.describe()}" if q.ref else ("" if q.position else " the robot"))
                 for q in np.quals] + \
                [s.word for s in np.states]
        return f"\"{np.describe()}\" may be {base}; I check which {'is' if len(g.base) == 1 else 'are'} " \
               f"{' and '.join(quals) or 'meant'}"

    def _grounding_issue(self, pq: ParsedQuery, results: dict[str, Grounding], pool: Pool, say: str,
                         hold_roles: set[str]) -> Decision | None:
        order = pq.role_order(self.kb)
        for role in order:
            g, np = results[role], pq.args[role]
            if g.status == "none" and g.how == "held":
                # "put the bucket you're holding on the table": the answer names the bucket
                named = bool(np.words) and not self.kb.names_anything(np.words) and \
                    not any(w in self.kb.person_pronouns or w in self.kb.determiners for w in np.words)
                text = self.sentence("nothing_held_named", what=np.describe(), say=say) if named else \
                    self.sentence("nothing_held", say=say)
                return self._decide("unfeasibility", text,
                                    list(g.base or []) + _other_ids(results, role),
                                    "the gripper is empty and the object is only pointed at")
        for role in order:
            g, np = results[role], pq.args[role]
            if g.status != "none":
                continue
            what = np.describe()
            if self._is_person_role(pq, role) or g.unknown_person:
                if g.unknown_person:
                    unknown = [p for p, n in pool.people.items() if not n]
                    people = f" ({join_ids(unknown)} {'is' if len(unknown) == 1 else 'are'} not recognised)" if unknown else \
                        (f" ({', '.join(f'{n} ({p})' for p, n in pool.people.items())})" if pool.people else "")
                    text = self.sentence("person_unknown", name=g.unknown_person.title(), people=people)
                else:
                    text = self.sentence("nobody", say=say)
                return self._decide("unfeasibility", text, [], "the person cannot be identified")
            if role in hold_roles and g.base:
                continue          # visible but not held: the holding check explains it
            if g.missing_ref is not None:
                q = next((q for q in np.quals if q.ref is g.missing_ref), None)
                text = self.sentence("reference_missing", what=g.missing_ref.describe(),
                                     target=" ".join(np.words) or "object", relation=q.phrase if q else "near")
                return self._decide("unfeasibility", text, [], "a reference object is missing")
            if g.reasons:
                text = self.sentence("not_found_filtered", what=what, reasons="; ".join(g.reasons))
                return self._decide("unfeasibility", text, g.base if g.state_only else [],
                                    "no candidate meets the query's conditions")
            # name the few closest candidates, never every id in view
            near = self.grounder.closest(np, pool.objects, CLOSEST_NAMED) if pool.objects else []
            seen = self.sentence("closest_seen", ids=join_ids(near, "and")) if near else ""
            heldtxt = "" if not pool.held else f"; the robot is holding {pool.held}" + \
                (f", not the {what}" if role in hold_roles else "")
            wanted = use_description(np.words, self.kb, said=[w.lower() for w in split_words(np.text)])
            if wanted is None and np.alt is not None:     # "something stretchy ..., an elastic band, say"
                wanted = f"or {np.alt.describe()}"
            text = self.sentence("not_found", what=f"{what} ({wanted})" if wanted else what, seen=seen, held=heldtxt)
            return self._decide("unfeasibility", text, [], "the object is not present")
        # several candidates: the ambiguity comes first (for a handover even when none is in the gripper)
        for role in order:
            g, np = results[role], pq.args[role]
            if role in hold_roles and pool.held not in g.ids and \
                    (pq.action != "handover" or any(st.key == "colour" for st in np.states)):
                # placing needs what is in the gripper: whichever mug is meant, none is held; a handover
                # may start by fetching it, so which one matters first ("give Margaret her pills"),
                # unless a colour no tool could check named one ("the blue paint")
                continue
            if g.status == "several" and role != "source":
                text = self.sentence("ambiguity", what=f"candidates for \"{np.describe()}\"",
                                     cands=join_ids([self._label(i, np) for i in g.ids]))
                # the other arguments the query refers to stay in the grounding ("pass this receipt
                # book to the customer": the book, and both customers)
                return self._decide("ambiguity", text, _other_ids(results, role) + list(g.ids), "several candidates remain")
        for role in order:
            g, np = results[role], pq.args[role]
            if role in hold_roles and pool.held not in g.ids and (g.status == "several" or not g.ids):
                # must be in the gripper and is not: whichever candidate is meant, it is not held
                cands = g.ids or g.base
                hand = self.kb.sentence("hand", "busy", held=pool.held) if pool.held else self.kb.sentence("hand", "empty")
                text = self.sentence("not_held_any", what=np.describe(), hand=hand, cands=join_ids(cands),
                                     be="is" if len(cands) == 1 else "are", say=say)
                return self._decide("unfeasibility", text, list(cands), "the object to use is not in the gripper")
        return None

    def _decide(self, issue: str, text: str, grounding: list[str], why: str) -> Decision:
        return Decision(issue, text, grounding, self.lines + [f"{STEP_TITLES['issue']}: {why}."])

    # ------------------------------------------------------------------ ISSUE
    def _issue(self, outcomes: list[CheckOutcome], grounded: dict[str, str], pq: ParsedQuery, say: str) -> Decision:
        ids = [i for r, i in grounded.items() if r != "source"]
        failed = [o for o in outcomes if o.status == "fail"]
        unknown = [o for o in outcomes if o.status in ("unknown", "pending")]
        if failed:
            text = failed[0].text
            if len(failed) > 1:
                text += self.sentence("also") + " ".join(o.text for o in failed[1:1 + MAX_ALSO])
            return self._decide("unfeasibility", text, ids,
                                f"{len(failed)} of the {len(outcomes)} checked preconditions fail"
                                + (f", first {failed[0].check.replace('_', ' ')} of {failed[0].obj}"))
        passes = [o.text for o in outcomes if o.status == "pass"]
        links = dict(self.kb.text.get("role_links") or {})
        if pq.place_relation in (self.kb.text.get("place_links") or {}):
            links["location"] = self.kb.text["place_links"][pq.place_relation]
        names = " ".join(f"{links.get(r, 'and')} {self._label(i)}" if n else self._label(i)
                         for n, (r, i) in enumerate((r, i) for r, i in grounded.items() if r != "source"))
        text = self.sentence("none", say=say, objs=names, passes=", ".join(passes) or "nothing stands in the way")
        if unknown:
            text += self.sentence("none_unchecked", unchecked="; ".join(o.text for o in unknown))
        return self._decide("none", text, ids, "every precondition I could check holds"
                            if unknown else "every precondition holds")

    def _label(self, eid: str, np: NP | None = None) -> str:
        """'Mug_1', 'SampleBox_1 (sample box)'; with the phrase that named it, the kind is said in
        words whenever the phrase does not say it ("the baked goods": 'Cake_1 (cake)')."""
        if self.people.get(eid):
            return f"{self.people[eid]} ({eid})"
        t = say_type(eid)
        said = np is not None and set(type_words(eid)) <= set(np.words)
        if t.lower() in eid.lower().replace("_", " ") and (np is None or said):
            return eid
        return f"{eid} ({t})"


def _artifact(obj: str, kb: Knowledge) -> bool:
    """Whether WordNet calls the object's type an artifact and no food, and no food category of
    the knowledge lists it ("soldering iron", "kettle"; not "pizza", "milk")."""
    words = type_words(obj)
    lex = load_lexicon()
    return lex.under_any(words, [["artifact"]]) and not lex.under_any(words, [["food"], ["foodstuff"], ["beverage"]]) \
        and not kb.in_category(obj, "food")
