"""English constraints to LTL: an offline rules translator and an LLM translator (ROS-free).

Both return a :class:`Translation` (the formula, its English reading, who translated it) or
raise :class:`TranslationError` with the reason ("cannot translate ...: ...").

* :class:`RulesTranslator` ("rules (no LLM)"): the sentence is normalised (contractions, modal
  verbs), matched against sentence patterns (never, always, before, after, until, while, only if,
  at most once, must ... when ..., at the same time, out of ...), and each clause is read into
  predicates with a verb table and a state-word table. All of it is data:
  ``data/safety/vocabulary.yaml``.
* :class:`LLMTranslator`: a few-shot prompt (``data/prompts/safety/nl_to_ltl.yaml``, the Safety
  Chip paper's Lang2LTL-with-predicates idea) sent to any object with
  ``complete(messages, *, deadline) -> LLMReply``; the reply is parsed (never executed) and the
  formula checked like any other (syntax, predicates, names of the world).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

from raider_ros.common.paths import data_dir
from raider_ros.common.text import singular
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.sim.scene import room_key

from . import ltl
from .english import to_english
from .ltl import Atom, Binary, Formula, LTLError, Not, conj, disj
from .predicates import PredicateError, SymbolicState, check_atom

RULES_LABEL = "rules (no LLM)"


class TranslationError(LTLError):
    """A sentence that cannot be translated; the message says why."""


@dataclass(frozen=True)
class Translation:
    sentence: str
    formula: Formula
    english: str
    source: str
    pattern: str = ""

    @property
    def ltl(self) -> str:
        return ltl.to_text(self.formula)


# --------------------------------------------------------------------------- vocabulary
@dataclass(frozen=True)
class _Verb:
    words: tuple[str, ...]
    predicate: str
    kind: str
    negated: bool = False
    with_place: bool = False
    particle: str | None = None
    object_after_preposition: bool = False


@dataclass
class Vocabulary:
    replacements: list[tuple[re.Pattern, str]]
    patterns: list[dict]
    verbs: list[_Verb]
    states: dict[str, tuple[str, bool]]
    action_as_state: dict[str, tuple[str, bool]]
    persons: list[str]
    no_persons: list[str]
    max_thing_words: int
    not_in_things: frozenset[str]
    robot: list[str]
    person_places: list[str]
    determiners: list[str]
    auxiliaries: list[str]
    anything: list[str]
    pronouns: list[str]
    prepositions: list[str]
    coordination: dict[str, str]
    inflections: dict[str, list[str]]
    doubled_consonant: bool
    irregular: dict[str, str]
    verb_words: frozenset[str] = field(default_factory=frozenset)


def _pred(entry: Any, where: str) -> tuple[str, bool]:
    if not isinstance(entry, dict) or not isinstance(entry.get("predicate"), str):
        raise TranslationError(f"vocabulary: {where}: expected {{predicate: name, negated: bool}}")
    return entry["predicate"], bool(entry.get("negated", False))


@lru_cache(maxsize=4)
def load_vocabulary(path: str | None = None) -> Vocabulary:
    doc, src = read_yaml_mapping(path or data_dir() / "safety" / "vocabulary.yaml",
                                 what="translator vocabulary", error=TranslationError)
    try:
        repl = [(re.compile(a), b) for a, b in doc["replacements"]]
        patterns = []
        for i, p in enumerate(doc["patterns"]):
            if not isinstance(p, dict) or "match" not in p or "formula" not in p:
                raise TranslationError(f"{src}: patterns[{i}]: needs 'match' and 'formula'")
            patterns.append({**p, "regex": re.compile(p["match"])})
        verbs = []
        for i, v in enumerate(doc["verbs"]):
            for ph in v["phrases"]:
                verbs.append(_Verb(tuple(str(ph).split()), v["predicate"], v.get("kind", "action"),
                                   bool(v.get("negated", False)), bool(v.get("with_place", False)),
                                   v.get("particle"), v.get("object") == "after_preposition"))
        verbs.sort(key=lambda v: -len(v.words))          # longest phrase first
        vocab = Vocabulary(
            replacements=repl, patterns=patterns, verbs=verbs,
            states={str(k): _pred(e, f"states.{k}") for k, e in doc["states"].items()},
            action_as_state={str(k): _pred(e, f"action_as_state.{k}") for k, e in doc["action_as_state"].items()},
            persons=sorted(doc["persons"], key=len, reverse=True),
            no_persons=sorted(doc["no_persons"], key=len, reverse=True),
            max_thing_words=int(doc["max_thing_words"]), not_in_things=frozenset(doc["not_in_things"]),
            robot=list(doc["robot"]),
            person_places=sorted(doc["person_places"], key=len, reverse=True),
            determiners=list(doc["determiners"]),
            auxiliaries=sorted(doc["auxiliaries"], key=len, reverse=True),
            anything=list(doc["anything"]), pronouns=list(doc["pronouns"]),
            prepositions=list(doc["prepositions"]), coordination=dict(doc["coordination"]),
            inflections={str(k): list(v) for k, v in doc["inflections"].items()},
            doubled_consonant=bool(doc.get("doubled_consonant", True)),
            irregular={str(k): str(v) for k, v in (doc.get("irregular") or {}).items()},
        )
    except (KeyError, TypeError, ValueError, re.error) as exc:
        raise TranslationError(f"{src}: malformed vocabulary: {exc}") from None
    for name in ("persons", "no_persons", "robot", "person_places", "determiners", "auxiliaries", "anything", "pronouns",
                 "prepositions"):
        bad = [x for x in getattr(vocab, name) if not isinstance(x, str)]
        if bad:  # YAML 1.1 reads unquoted on/off/yes/no as booleans
            raise TranslationError(f"{src}: {name}: {bad[0]!r} is not a word (quote it)")
    vocab.verb_words = frozenset(w for v in verbs for w in v.words[:1])
    return vocab


# --------------------------------------------------------------------------- rules translator
class _Context:
    def __init__(self, state: SymbolicState | None, mode: str | None):
        self.state = state
        self.mode = mode                 # 'state': read actions as the states they cause
        self.last_thing: str | None = None
        self.last_verb: str | None = None
        self.kinds: list[str] = []       # kind of each clause read (action | state)
        self.each = False                # "and" means each of them (a forbidden slot)


class RulesTranslator:
    """The offline translator, labelled "rules (no LLM)"."""

    name = RULES_LABEL

    def __init__(self, vocabulary: Vocabulary | None = None):
        self.v = vocabulary or load_vocabulary()
        # words that make a clause's subject the robot (not a thing): no passive reading then
        self._subjects = frozenset(r for r in self.v.robot if " " not in r) | {"i", "we"}

    def translate(self, sentence: str, state: SymbolicState | None = None) -> Translation:
        if not isinstance(sentence, str) or not sentence.strip():
            raise TranslationError(f"cannot translate {sentence!r}: not a sentence")
        text = self.normalise(sentence)
        reasons = []
        for p in self.v.patterns:
            m = p["regex"].match(text)
            if not m:
                continue
            try:
                f = self._apply(p, m, state)
            except TranslationError as exc:
                reasons.append(f"{p.get('name', p['match'])}: {exc}")
                continue
            for a in ltl.atoms(f):
                try:
                    check_atom(a, state)
                except PredicateError as exc:
                    raise TranslationError(f"cannot translate {sentence!r}: {exc}") from None
            return Translation(sentence, f, to_english(f), self.name, p.get("name", ""))
        why = reasons[-1] if reasons else "no sentence pattern matches"
        raise TranslationError(f"cannot translate {sentence!r}: {why}")

    def normalise(self, sentence: str) -> str:
        text = sentence.lower().strip()
        for rx, rep in self.v.replacements:
            text = rx.sub(rep, text)
        return text.strip()

    # ------------------------------------------------------------------ patterns
    def _apply(self, p: dict, m: re.Match, state: SymbolicState | None) -> Formula:
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        if "join" in p:
            joined = p["join"].format(**groups)
            groups = {"A": joined}
        slot_kinds: dict[str, str] = {}
        ctx = _Context(state, p.get("mode"))
        slots: dict[str, str] = {}
        for name in ("X", "Y"):
            if name in groups:
                slots[name] = self._thing(groups[name], ctx, role="thing")
        order = [p.get("first", "A")] + [k for k in ("A", "B") if k != p.get("first", "A")]
        clauses: dict[str, Formula] = {}
        for key in order:
            if key not in groups:
                continue
            text = groups[key]
            ctx.each = key in p.get("each", ())
            before = len(ctx.kinds)
            try:
                clauses[key] = self._clause(text, ctx)
            except _NoVerb:
                if p.get("ellipsis") == key and ctx.last_verb:
                    clauses[key] = self._clause(f"{ctx.last_verb} {text}", ctx)
                else:
                    raise TranslationError(f"no verb or state found in {text!r}") from None
            if len(ctx.kinds) > before:
                slot_kinds[key] = ctx.kinds[before]
        template = p["formula"]
        if "formula_state" in p and ctx.kinds and ctx.kinds[0] == "state":
            template = p["formula_state"]
        for alt in p.get("by_kinds") or ():
            if all(slot_kinds.get(k) == alt[k] for k in ("A", "B") if k in alt):
                template = alt["formula"]
                break
        return _fill(template, clauses, slots)

    # ------------------------------------------------------------------ clauses
    def _clause(self, text: str, ctx: _Context) -> Formula:
        v = self.v
        words = [w for w in re.sub(r"[,;:]", " ", text).split() if w not in ("must", "always")]
        text = " ".join(words)
        neg = False
        # a person near / in something
        persons = "|".join(re.escape(x) for x in v.persons)
        places = "|".join(re.escape(x) for x in v.person_places)
        nobody = "|".join(re.escape(x) for x in v.no_persons)
        m = re.match(rf"^(?:(?P<none>{nobody})|{persons}) (?:is |are |be |stands |gets |comes |stays )?(?P<neg>not )?"
                     rf"(?:{places}) (?P<X>.+)$", text)
        if m:
            arg = self._thing(m.group("X"), ctx, role="near")
            ctx.kinds.append("state")
            f: Formula = Atom("person_near", (arg,))
            return Not(f) if bool(m.group("neg")) != bool(m.group("none")) else f
        # a named person near / in something: person_near stands for any person (conservative)
        m = re.match(rf"^(?P<P>[a-z_0-9]+(?: [a-z_0-9]+)?) (?:is |are |stands |stays )(?P<neg>not )?"
                     rf"(?:{places}) (?P<X>.+)$", text)
        if m and self._person(m.group("P"), ctx) is not None:
            arg = self._thing(m.group("X"), ctx, role="near")
            ctx.kinds.append("state")
            f = Atom("person_near", (arg,))
            return Not(f) if m.group("neg") else f
        states = "|".join(re.escape(s) for s in sorted(v.states, key=len, reverse=True))
        # <thing> is / stays (not) <state>
        m = re.match(rf"^(?P<X>.+?) (?P<neg1>not )?(?:is|are|be|stays|stay|remains|remain|gets|get|becomes|"
                     rf"left|kept)(?P<neg2> not)? (?P<S>{states})(?: again| already| still)?$", text)
        if m and not self._starts_with_verb(m.group("X")):
            neg = bool(m.group("neg1") or m.group("neg2"))
            return self._state_atoms(m.group("X"), m.group("S"), neg, ctx)
        # a passive: <thing> is <done> [to / into ...]: "the knife be picked up", "the bottle be given to P"
        m = re.match(r"^(?P<X>.+?) (?P<neg1>not )?(?:is|are|be|gets|get|been)(?P<neg2> not)? (?P<V>[a-z]+)(?: (?P<R>.+))?$", text)
        subject = m.group("X").split() if m else []
        if m and not self._starts_with_verb(m.group("X")) and not (set(subject) & self._subjects):
            vwords = [m.group("V")] + (m.group("R") or "").split()
            verb, rest = self._verb(vwords)
            if verb is not None and m.group("V") not in v.states:
                ctx.last_verb = " ".join(verb.words)
                obj = m.group("X").split()
                f = self._verb_atoms(verb, obj + rest, ctx)
                return Not(f) if (m.group("neg1") or m.group("neg2")) else f
        # keep / leave / have <thing> <state>
        m = re.match(rf"^(?P<neg>not )?(?:keep|leave|have|let|keeping|leaving|having) (?P<X>.+?) (?P<S>{states})$", text)
        if m:
            return self._state_atoms(m.group("X"), m.group("S"), bool(m.group("neg")), ctx)
        # a verb phrase, after subjects and auxiliaries
        words = self._strip_front(text.split())
        if words and words[0] in ("not", "never"):
            neg = True
            words = self._strip_front(words[1:])
        verb, rest = self._verb(words)
        if verb is None:
            raise _NoVerb(text)
        ctx.last_verb = " ".join(verb.words)
        f = self._verb_atoms(verb, rest, ctx)
        return Not(f) if neg else f

    def _strip_front(self, words: list[str]) -> list[str]:
        aux = [a.split() for a in self.v.auxiliaries]
        changed = True
        while changed and words:
            changed = False
            for a in aux:
                if words[:len(a)] == a and len(words) > len(a):
                    words = words[len(a):]
                    changed = True
                    break
        return words

    def _starts_with_verb(self, text: str) -> bool:
        words = self._strip_front(text.split())
        return bool(words) and self._verb(words)[0] is not None

    def _lemmas(self, word: str) -> set[str]:
        out = {word}
        if word in self.v.irregular:
            out.add(self.v.irregular[word])
        for suffix, reps in self.v.inflections.items():
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                base = word[: -len(suffix)]
                for r in reps:
                    out.add(base + r)
                if self.v.doubled_consonant and len(base) > 2 and base[-1] == base[-2]:
                    out.add(base[:-1])
        return out

    def _verb(self, words: list[str]) -> tuple[_Verb | None, list[str]]:
        if not words:
            return None, words
        first = self._lemmas(words[0])
        for verb in self.v.verbs:
            n = len(verb.words)
            if verb.words[0] not in first or len(words) < n:
                continue
            if all(verb.words[k] in self._lemmas(words[k]) for k in range(1, n)):
                return verb, words[n:]
            # a separable particle after the thing: "pick it up", "turn the stove on"
            if n == 2 and verb.particle and verb.words[1] == verb.particle and words[-1] == verb.particle:
                return verb, words[1:-1]
        return None, words

    def _verb_atoms(self, verb: _Verb, rest: list[str], ctx: _Context) -> Formula:
        v = self.v
        text = " ".join(rest)
        if verb.particle and text.endswith(" " + verb.particle):
            text = text[: -len(verb.particle) - 1]
        place = None
        if verb.object_after_preposition:
            m = re.match(rf"^(?:(?P<obj>.*?) )?(?:{'|'.join(map(re.escape, v.prepositions))}) (?P<loc>.+)$", text)
            if not m:
                raise TranslationError(f"{' '.join(verb.words)} needs a place ('into the sink'), got {text!r}")
            if m.group("obj") and m.group("obj") not in v.anything:
                self._thing(m.group("obj"), ctx, role="thing")     # named for 'it' later
            text = m.group("loc")
        elif verb.predicate == "handover":
            m = re.match(r"^(?P<obj>.+?) (?:to|over to) (?P<who>.+)$", text)
            if m:
                text = m.group("obj")
                who = self._person(m.group("who"), ctx)
                if who is not None:      # a particular person: handover(thing, person)
                    thing = self._thing(text, ctx, role="thing")
                    ctx.kinds.append("action")
                    return Atom("handover", (thing, who))
        elif verb.with_place:
            m = re.match(r"^(?P<obj>.+?) (?:into|to|in|inside|through) (?P<loc>.+)$", text)
            if m:
                text, place = m.group("obj"), m.group("loc")
        if not text:
            raise TranslationError(f"{' '.join(verb.words)}: what? (no thing after the verb)")
        pred, negated, kind = verb.predicate, verb.negated, verb.kind
        if ctx.mode == "state" and verb.kind == "action" and pred in v.action_as_state:
            p2, n2 = v.action_as_state[pred]
            pred, negated, kind = p2, negated != n2, "state"
        ctx.kinds.append(kind)
        f = self._coordinated(text, ctx, lambda arg: Not(Atom(pred, (arg,))) if negated else Atom(pred, (arg,)))
        if place is not None:
            f = conj(f, Atom("agent_at", (self._thing(place, ctx, role="place"),)))
        return f

    def _state_atoms(self, things: str, state_word: str, neg: bool, ctx: _Context) -> Formula:
        pred, negated = self.v.states[state_word]
        ctx.kinds.append("state")
        flip = negated != neg      # each thing in that state: "the fridge and the oven are closed"
        return self._coordinated(things, ctx, lambda arg: Not(Atom(pred, (arg,))) if flip else Atom(pred, (arg,)))

    def _coordinated(self, text: str, ctx: _Context, make) -> Formula:
        words = text.split()
        for word, op in self.v.coordination.items():
            if word in words:
                k = words.index(word)
                left, right = " ".join(words[:k]), " ".join(words[k + 1:])
                if left and right:
                    parts = [self._coordinated(left, ctx, make), self._coordinated(right, ctx, make)]
                    return conj(*parts) if op == "&" and not ctx.each else disj(*parts)
        return make(self._thing(text, ctx, role="thing"))

    # ------------------------------------------------------------------ things
    def _thing(self, text: str, ctx: _Context, role: str) -> str:
        v = self.v
        words = [w for w in text.split() if w]
        while words and words[0] in v.determiners:
            words = words[1:]
        phrase = " ".join(words)
        if not phrase:
            raise TranslationError(f"no thing named in {text!r}")
        if phrase in v.pronouns or phrase in ("it again",):
            if ctx.last_thing is None:
                raise TranslationError(f"{phrase!r} refers to nothing named before it")
            return ctx.last_thing
        if phrase in v.robot or text.strip() in v.robot:
            return "robot"
        if phrase in v.persons or text.strip() in v.persons:
            arg = "person"
        else:
            if len(words) > v.max_thing_words or v.not_in_things & set(words):
                raise TranslationError(f"{phrase!r} is not the name of a thing")
            arg = self._name(words, ctx.state)
        ctx.last_thing = arg
        return arg

    def _person(self, text: str, ctx: _Context) -> str | None:
        """A particular person (by name or id) of the world, or None (anyone, the person)."""
        words = [w for w in text.split() if w not in self.v.determiners]
        if ctx.state is None or not words or " ".join(words) in self.v.persons:
            return None
        name = "_".join(words)
        for t in ctx.state.people():
            if t.id.lower() == name or (t.name and t.name.lower() == " ".join(words)):
                return t.name or t.id
        return None

    @staticmethod
    def _name(words: list[str], state: SymbolicState | None) -> str:
        """The longest run of the words that names something of the world (full phrase first,
        then shorter runs from the end: "microwave door" -> "microwave"); without a state, the
        words joined by underscores."""
        cands = []
        n = len(words)
        for size in range(n, 0, -1):
            for start in range(n - size, -1, -1):
                cands.append(words[start:start + size])
        if state is None:
            return "_".join(singular(w) for w in words)
        for run in cands:
            for form in (run, run[:-1] + [singular(run[-1])]):
                arg = "_".join(form)
                try:
                    state.resolve_arg(arg)
                    return arg
                except PredicateError:
                    continue
        # the head word of one type's name: "the counter" -> MedicineCounter when no other type has it
        from raider_ros.common.text import split_words
        head = singular(words[-1])
        types = sorted({t.type for t in state.things.values() if head in split_words(t.type)})
        if len(types) == 1:
            return "_".join(split_words(types[0]))
        raise TranslationError(f"{' '.join(words)!r} names nothing in {state.source}")


class _NoVerb(Exception):
    pass


def _fill(template: str, clauses: dict[str, Formula], slots: dict[str, str]) -> Formula:
    """Parse the pattern's formula with clause placeholders standing in for sub-formulas."""
    text = template
    holders: dict[Atom, Formula] = {}
    for key, f in clauses.items():
        ph = Atom(f"slot_{key.lower()}")
        holders[ph] = f
        text = text.replace("{" + key + "}", ph.name)
    for key, arg in slots.items():
        text = text.replace("{" + key + "}", arg)
    return _substitute(ltl.parse(text), holders)


def _substitute(f: Formula, holders: dict[Atom, Formula]) -> Formula:
    if isinstance(f, Atom):
        return holders.get(f, f)
    if isinstance(f, Not):
        return Not(_substitute(f.f, holders))
    if isinstance(f, ltl.Unary):
        return ltl.Unary(f.op, _substitute(f.f, holders))
    if isinstance(f, Binary):
        return Binary(f.op, _substitute(f.left, holders), _substitute(f.right, holders))
    return f


# --------------------------------------------------------------------------- LLM translator
@lru_cache(maxsize=4)
def load_prompt(path: str | None = None) -> dict:
    doc, src = read_yaml_mapping(path or data_dir() / "prompts" / "safety" / "nl_to_ltl.yaml",
                                 what="NL-to-LTL prompt", error=TranslationError)
    for key in ("system", "examples", "user"):
        if key not in doc:
            raise TranslationError(f"{src}: missing {key!r}")
    return doc


_LTL_LINE = re.compile(r"^\s*(?:LTL|ltl|Formula|formula)\s*:\s*(?P<f>.+?)\s*$", re.MULTILINE)
_CANNOT = re.compile(r"^\s*(?:CANNOT|cannot translate)\s*:?\s*(?P<why>.*)$", re.MULTILINE | re.IGNORECASE)


class LLMTranslator:
    """NL -> LTL with a language model (few-shot prompt as data). ``llm`` is any object with
    ``complete(messages, *, deadline) -> LLMReply``."""

    def __init__(self, llm: Any, *, timeout_s: float = 30.0, prompt: dict | None = None):
        self.llm = llm
        self.timeout_s = timeout_s
        self.prompt = prompt or load_prompt()
        self.name = f"llm:{getattr(llm, 'name', type(llm).__name__)}"

    def messages(self, sentence: str, state: SymbolicState | None) -> list[dict]:
        p = self.prompt
        names = _world_names(state)
        msgs = [{"role": "system", "content": p["system"].strip()}]
        for ex in p["examples"]:
            msgs.append({"role": "user", "content": p["user"].format(sentence=ex["sentence"],
                                                                    names=ex.get("names", "")).strip()})
            msgs.append({"role": "assistant", "content": ex["answer"].strip()})
        msgs.append({"role": "user", "content": p["user"].format(sentence=sentence, names=names).strip()})
        return msgs

    def translate(self, sentence: str, state: SymbolicState | None = None) -> Translation:
        from raider_ros.agent.llm import LLMError
        if not isinstance(sentence, str) or not sentence.strip():
            raise TranslationError(f"cannot translate {sentence!r}: not a sentence")
        try:
            reply = self.llm.complete(self.messages(sentence, state), deadline=time.monotonic() + self.timeout_s)
        except LLMError as exc:
            raise TranslationError(f"cannot translate {sentence!r}: the language model failed: {exc.reason}") from None
        text = getattr(reply, "text", None)
        if not isinstance(text, str):
            raise TranslationError(f"cannot translate {sentence!r}: the language model returned no text")
        m = _LTL_LINE.search(text)
        if not m:
            c = _CANNOT.search(text)
            why = c.group("why").strip() if c else f"no 'LTL:' line in the reply {text[:120]!r}"
            raise TranslationError(f"cannot translate {sentence!r}: {why or 'the language model declined'}")
        raw = m.group("f").strip().strip("`").strip()
        try:
            f = ltl.parse(raw)
        except LTLError as exc:
            raise TranslationError(f"cannot translate {sentence!r}: the model's formula {raw!r} does not parse: "
                                   f"{str(exc).splitlines()[0]}") from None
        for a in ltl.atoms(f):
            try:
                check_atom(a, state)
            except PredicateError as exc:
                raise TranslationError(f"cannot translate {sentence!r}: the model's formula {raw!r}: {exc}") from None
        return Translation(sentence, f, to_english(f), self.name, "llm")


def _world_names(state: SymbolicState | None) -> str:
    if state is None:
        return "(unknown)"
    rooms = ", ".join(r.name for r in state.rooms) or "none"
    types = ", ".join(sorted({t.type for t in state.things.values()}))
    people = ", ".join(f"{t.id} ({t.name})" if t.name else t.id for t in state.people()) or "none"
    return f"rooms: {rooms}; types: {types}; people: {people}"


# --------------------------------------------------------------------------- fallback chain
class ChainTranslator:
    """Try translators in order (e.g. the LLM, then the rules); the first answer wins."""

    def __init__(self, translators: Sequence[Any]):
        self.translators = list(translators)
        self.name = " + ".join(getattr(t, "name", type(t).__name__) for t in self.translators)

    def translate(self, sentence: str, state: SymbolicState | None = None) -> Translation:
        reasons = []
        for t in self.translators:
            try:
                return t.translate(sentence, state)
            except TranslationError as exc:
                reasons.append(str(exc))
        raise TranslationError(" / ".join(reasons) or f"cannot translate {sentence!r}: no translator")


def canonical(f: Formula, state: SymbolicState) -> Formula:
    """The formula with every argument in one spelling for this world (ids as they are, rooms,
    types and person names by key), so two translations can be compared by their automata."""
    mapping: dict[Atom, Atom] = {}
    for a in ltl.atoms(f):
        args = []
        for arg in a.args:
            try:
                kind, val = state.resolve_arg(arg)
            except PredicateError:
                args.append(arg)
                continue
            if kind == "robot":
                args.append("robot")
            elif kind == "room":
                args.append("room_" + room_key(val))
            elif len(val) == 1 and next(iter(val)).lower() == arg.lower():
                args.append(next(iter(val)))
            elif len(val) == 1 and any(t.name and t.name.lower() == arg.lower() for t in state.things.values()):
                args.append(next(iter(val)))
            else:
                args.append("type_" + room_key(arg if not val else state.things[next(iter(val))].type))
        mapping[a] = Atom(a.name, tuple(args))
    return ltl.rename(f, mapping)
