"""The rules reasoner's knowledge base: data/knowledge/{language,categories,preconditions}.yaml
and the descriptions of common object types (object_types.yaml).

Loaded once per directory and validated; a missing file or a malformed entry raises
:class:`KnowledgeError` naming the file and the field.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import yaml

from raider_ros.common.paths import data_dir
from raider_ros.common.text import singular, split_words, word_key
from raider_ros.common.vocabulary import RELATIONS

_ID_SUFFIX = re.compile(r"[_\s-]*\d+$")


# the readings of verb_kinds (language.yaml): a verb of carrying with an object is picking it up
# ("lug the scale out to the yard"); one of making with a thing made from an object is cutting it
VERB_KINDS = ("carrying", "making")


class KnowledgeError(ValueError):
    """A knowledge file that cannot be used; the message names the file and the field."""


def knowledge_dir() -> Path:
    return data_dir() / "knowledge"


# --------------------------------------------------------------------------- word helpers
def type_of(entity_id: str) -> str:
    """'CoffeeMachine_1' -> 'CoffeeMachine', 'medicine1' -> 'medicine', 'plant' -> 'plant'."""
    return _ID_SUFFIX.sub("", entity_id) or entity_id


def type_words(name: str) -> list[str]:
    """Singular lower-case words of a type or id: 'CoffeeMachines_2' -> ['coffee', 'machine']."""
    return [singular(w) for w in split_words(type_of(name)) if not w.isdigit()]


def type_key(name: str) -> str:
    return word_key(type_words(name))


def say_type(name: str) -> str:
    """'CoffeeMachine_1' -> 'coffee machine'."""
    return " ".join(split_words(type_of(name))) or name


# --------------------------------------------------------------------------- model
@dataclass(frozen=True)
class RelationPhrase:
    phrase: tuple[str, ...]          # words
    relations: tuple[str, ...]       # check_obj_relationship names (any of them); () for superlatives
    inverse: bool = False
    superlative: str | None = None   # min | max


@dataclass(frozen=True)
class PositionPhrase:
    phrase: tuple[str, ...]
    relation: str                    # the candidate no other candidate is <relation>


@dataclass(frozen=True)
class StateWord:
    phrase: tuple[str, ...]
    key: str
    value: bool
    nothing_inside: bool = False


@dataclass(frozen=True)
class ActionInfo:
    name: str
    verbs: tuple[tuple[str, ...], ...]
    roles: tuple[str, ...]
    say: str


@dataclass
class Knowledge:
    actions: dict[str, ActionInfo]
    verb_index: dict[str, str]                    # compact verb -> action
    split_verbs: dict[str, dict[str, str]]
    place_prepositions: list[tuple[tuple[str, ...], str]]
    handover_prepositions: tuple[str, ...]
    relations: list[RelationPhrase]
    superlatives_to_robot: dict[str, str]
    end_phrases: dict[tuple[str, ...], str]       # "at the far end" -> max (distance to the robot)
    self_words: list[tuple[str, ...]]
    positions: list[PositionPhrase]
    instrument_words: frozenset[str]
    part_words: frozenset[str]
    container_heads: frozenset[str]
    personal_words: frozenset[str]
    states: list[StateWord]
    predicate_only_states: frozenset[str]
    predicate_markers: list[tuple[str, ...]]
    negations: frozenset[str]
    emptiness_phrases: list[str]
    person_words: frozenset[str]
    role_nouns: frozenset[str]          # person_nouns.txt (WordNet): "customer", "dentist"; weaker than person_words
    person_pronouns: frozenset[str]
    determiners: list[tuple[str, ...]]
    lead_fillers: list[tuple[str, ...]]
    trail_fillers: list[tuple[str, ...]]
    context_leads: list[tuple[str, ...]]
    identity_leads: list[tuple[str, ...]]
    categories: dict[str, frozenset[str]]         # category -> member type keys ("*" = any)
    category_aliases: dict[str, str]              # compact alias -> category
    not_pickupable: frozenset[str]
    single_item_receptacles: frozenset[str]
    type_lists: dict[str, frozenset[str]]
    checks: dict[str, list[dict]]
    text: dict[str, Any]                          # questions, failures, passes, sentences, ...
    known_types: frozenset[str] = field(default_factory=frozenset)
    type_descriptions: dict[str, str] = field(default_factory=dict)   # type key -> one-line description
    type_aliases: dict[str, list[list[str]]] = field(default_factory=dict)   # type key -> other names
    function_words: frozenset[str] = field(default_factory=frozenset)
    particles: frozenset[str] = field(default_factory=frozenset)
    result_phrases: list[tuple[str, ...]] = field(default_factory=list)
    clause_breaks: list[tuple[str, ...]] = field(default_factory=list)
    user_words: frozenset[str] = field(default_factory=frozenset)
    toward_user: tuple[tuple[str, ...], ...] = ()   # "my way", "this way": the object comes to the user
    remark_leads: list[tuple[str, ...]] = field(default_factory=list)
    contrast_leads: list[tuple[str, ...]] = field(default_factory=list)   # "..., leave the used one"
    want_verbs: list[tuple[str, ...]] = field(default_factory=list)       # "Maisie needs the ..., pass it over"
    motion_leads: list[tuple[str, ...]] = field(default_factory=list)     # "shift the table a bit ..."
    place_adverbs: list[tuple[str, ...]] = field(default_factory=list)    # "whatever's on up there"
    purpose_phrases: list[tuple[str, ...]] = field(default_factory=list)
    closing_parts: frozenset[str] = field(default_factory=frozenset)
    wordnet_verb_actions: tuple[str, ...] = ()  # actions an unknown verb may name by WordNet
    wordnet_verb_anchors: dict[str, tuple[str, ...]] = field(default_factory=dict)  # action -> more verbs to compare
    artifact_actions: dict[str, str] = field(default_factory=dict)  # action -> the action meant for an artifact
    verb_kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)  # carrying / making -> anchor verbs
    continuation_leads: list[tuple[str, ...]] = field(default_factory=list)  # "and the case ... too": no verb
    piece_counts: frozenset[str] = field(default_factory=frozenset)  # "into two", "in half": a division
    action_results: dict[str, tuple[str, bool]] = field(default_factory=dict)  # action -> state it leaves
    modal_clauses: list[tuple[str, ...]] = field(default_factory=list)
    colour_words: dict[str, str] = field(default_factory=dict)       # word -> colour name
    result_states: dict[str, str] = field(default_factory=dict)      # "flip it shut": word -> action
    state_adverbs: frozenset[str] = field(default_factory=frozenset)  # "that's still on"
    is_contractions: frozenset[str] = field(default_factory=frozenset)  # "whatever's" = "whatever is"
    time_possessives: frozenset[str] = field(default_factory=frozenset)  # "last night's pizza"
    time_leads: list[tuple[str, ...]] = field(default_factory=list)
    subject_pronouns: frozenset[str] = field(default_factory=frozenset)   # "the thing I cut with"
    state_meanings: list[tuple[str, bool, bool, str]] = field(default_factory=list)  # (key, value, nothing_inside, text)
    lacking_phrases: list[tuple[str, ...]] = field(default_factory=list)   # "with no water": empty
    partitive_words: frozenset[str] = field(default_factory=frozenset)   # "a slice of", "a couple of"
    not_again_verbs: frozenset[str] = field(default_factory=frozenset)   # "remove" is no move again
    tail_leads: frozenset[str] = field(default_factory=frozenset)   # "switch it off for now": the rest is no object
    colour_near: dict[str, frozenset[str]] = field(default_factory=dict)   # name -> names it also accepts
    colour_shades: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # survey word -> its RGB
    colour_refs: dict[str, tuple[float, float, float]] = field(default_factory=dict)    # basic name -> reference RGB
    category_properties: dict[str, str] = field(default_factory=dict)  # category -> property its members have

    def other_names(self, name: str) -> list[list[str]]:
        """The other names a type's description gives ("...; also called a torch"): word lists."""
        return self.type_aliases.get(type_key(name), [])

    def type_text(self, name: str) -> str:
        """'HairDryer_1' -> 'hair dryer: an electric device that blows hot air to dry hair'."""
        words = " ".join(type_words(name))
        desc = self.type_descriptions.get(type_key(name))
        return f"{words}: {desc}" if desc else words

    def action_for_verb(self, verb: str) -> str | None:
        return self.verb_index.get(word_key(split_words(verb)))

    def verbs_of(self, actions) -> dict[str, list[str]]:
        """Each of ``actions`` that the knowledge has, with its verbs as phrases ("pick up"): the
        anchors a verb the knowledge lacks is read against by WordNet (VerbSenses.action_of)."""
        return {a: [" ".join(v) for v in self.actions[a].verbs] for a in actions if a in self.actions}

    def category_of(self, words: list[str]) -> str | None:
        return self.category_aliases.get(word_key(singular(w) for w in words))

    def names_anything(self, words: list[str]) -> bool:
        """Whether the words name any object at all ("something", "a thing", "whatever")."""
        cat = self.category_of(words)
        return cat is not None and "*" in self.categories[cat]

    def in_category(self, name: str, category: str) -> bool:
        """A type belongs to a category when it, or its head word, is listed ("TableLamp": lamp)."""
        members = self.categories[category]
        words = type_words(name)
        return "*" in members or type_key(name) in members or bool(words and words[-1] in members)

    def sentence(self, group: str, key: str, **values: Any) -> str:
        template = (self.text.get(group) or {}).get(key)
        if not isinstance(template, str):
            raise KnowledgeError(f"preconditions.yaml: {group}.{key}: missing sentence")
        return template.format_map(_Defaults(values))


class _Defaults(dict):
    def __missing__(self, key: str) -> str:   # a template naming a value we lack: leave it out
        return ""


# --------------------------------------------------------------------------- loading
def _phrase(s: Any, where: str) -> tuple[str, ...]:
    if not isinstance(s, str) or not s.strip():
        raise KnowledgeError(f"{where}: expected a non-empty phrase, got {s!r}")
    return tuple(s.lower().split())


def _phrases(v: Any, where: str) -> list[tuple[str, ...]]:
    if not isinstance(v, list):
        raise KnowledgeError(f"{where}: expected a list of phrases, got {v!r}")
    out = [_phrase(s, f"{where}[{i}]") for i, s in enumerate(v)]
    return sorted(out, key=len, reverse=True)           # longest first


def _read(path: Path) -> dict:
    if not path.is_file():
        raise KnowledgeError(f"{path}: knowledge file is missing")
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise KnowledgeError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(doc, dict):
        raise KnowledgeError(f"{path}: expected a mapping at the top level")
    for key, value in doc.items():       # word lists: YAML reads a bare on/off/yes/no as a boolean
        if isinstance(value, list) and any(isinstance(w, bool) for w in value):
            bad = next(w for w in value if isinstance(w, bool))
            raise KnowledgeError(f"{path}: {key}: a word read as the boolean {bad!r}; quote it (\"on\", \"off\")")
    return doc


def _section(doc: Mapping, key: str, where: str, kind: type = dict) -> Any:
    v = doc.get(key)
    if not isinstance(v, kind):
        raise KnowledgeError(f"{where}: {key}: expected a {kind.__name__}, got {v!r}")
    return v


def _type_set(v: Any, where: str) -> frozenset[str]:
    if not isinstance(v, list):
        raise KnowledgeError(f"{where}: expected a list of types, got {v!r}")
    return frozenset("*" if t == "*" else type_key(str(t)) for t in v)


@lru_cache(maxsize=8)
def load_knowledge(directory: str | None = None) -> Knowledge:
    d = Path(directory) if directory else knowledge_dir()
    lang, cats, pre = (_read(d / f) for f in ("language.yaml", "categories.yaml", "preconditions.yaml"))
    lw, cw, pw = (str(d / f) for f in ("language.yaml", "categories.yaml", "preconditions.yaml"))
    descriptions = _descriptions(d / "object_types.yaml")

    actions: dict[str, ActionInfo] = {}
    verb_index: dict[str, str] = {}
    for name, spec in _section(lang, "actions", lw).items():
        where = f"{lw}: actions.{name}"
        if not isinstance(spec, dict):
            raise KnowledgeError(f"{where}: expected a mapping")
        verbs = tuple(_phrases(spec.get("verbs"), f"{where}.verbs"))
        roles = spec.get("args") or ["object"]
        if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
            raise KnowledgeError(f"{where}.args: expected a list of role names, got {roles!r}")
        actions[name] = ActionInfo(name, verbs, tuple(roles), str(spec.get("say") or name))
        for v in verbs:
            verb_index.setdefault(word_key(v), name)
        verb_index.setdefault(word_key(split_words(name)), name)

    relations: list[RelationPhrase] = []
    for i, r in enumerate(_section(lang, "relations", lw, list)):
        where = f"{lw}: relations[{i}]"
        if not isinstance(r, dict):
            raise KnowledgeError(f"{where}: expected a mapping")
        rel = r.get("relation", [])
        rels = tuple([rel] if isinstance(rel, str) else rel or [])
        for x in rels:
            if x not in RELATIONS:
                raise KnowledgeError(f"{where}.relation: {x!r} is not one of {', '.join(RELATIONS)}")
        sup = r.get("superlative")
        if sup not in (None, "min", "max"):
            raise KnowledgeError(f"{where}.superlative: expected min or max, got {sup!r}")
        if not rels and not sup:
            raise KnowledgeError(f"{where}: needs a relation or a superlative")
        for p in _phrases(r.get("phrases"), f"{where}.phrases"):
            relations.append(RelationPhrase(p, rels, bool(r.get("inverse", False)), sup))
    relations.sort(key=lambda x: len(x.phrase), reverse=True)

    states: list[StateWord] = []
    meanings: list[tuple[str, bool, bool, str]] = []
    for i, s in enumerate(_section(lang, "states", lw, list)):
        where = f"{lw}: states[{i}]"
        if not isinstance(s, dict) or not isinstance(s.get("key"), str) or not isinstance(s.get("value"), bool):
            raise KnowledgeError(f"{where}: expected {{words, key, value}}, got {s!r}")
        for p in _phrases(s.get("words"), f"{where}.words"):
            states.append(StateWord(p, s["key"], s["value"], bool(s.get("nothing_inside", False))))
        if s.get("means") is not None:
            if not isinstance(s["means"], str) or not s["means"].strip():
                raise KnowledgeError(f"{where}.means: expected a sentence, got {s['means']!r}")
            meanings.append((s["key"], s["value"], bool(s.get("nothing_inside", False)), s["means"].strip()))
    states.sort(key=lambda x: len(x.phrase), reverse=True)

    positions: list[PositionPhrase] = []
    for i, r in enumerate(lang.get("positions") or []):
        where = f"{lw}: positions[{i}]"
        if not isinstance(r, dict) or r.get("relation") not in RELATIONS:
            raise KnowledgeError(f"{where}: expected {{phrases, relation}} with a known relation, got {r!r}")
        positions += [PositionPhrase(p, r["relation"]) for p in _phrases(r.get("phrases"), f"{where}.phrases")]
    positions.sort(key=lambda x: len(x.phrase), reverse=True)

    place = []
    for rel, words in _section(lang, "place_prepositions", lw).items():
        if rel not in RELATIONS:
            raise KnowledgeError(f"{lw}: place_prepositions: {rel!r} is not a relation")
        place += [(p, rel) for p in _phrases(words, f"{lw}: place_prepositions.{rel}")]
    place.sort(key=lambda x: len(x[0]), reverse=True)

    split: dict[str, dict[str, str]] = {}
    for verb, parts in _section(lang, "split_verbs", lw).items():
        if not isinstance(parts, dict) or not all(a in actions for a in parts.values()):
            raise KnowledgeError(f"{lw}: split_verbs.{verb}: expected particle -> known action")
        split[str(verb)] = {str(k): str(v) for k, v in parts.items()}
    particles = frozenset(str(w) for w in lang.get("particles") or [])
    for a in actions.values():                  # "shut off" also reads "shut the kettle off"
        for v in a.verbs:
            if len(v) == 2 and v[1] in particles:
                split.setdefault(v[0], {}).setdefault(v[1], a.name)

    categories: dict[str, frozenset[str]] = {}
    aliases: dict[str, str] = {}
    properties: dict[str, str] = {}
    for name, spec in _section(cats, "categories", cw).items():
        where = f"{cw}: categories.{name}"
        if not isinstance(spec, dict):
            raise KnowledgeError(f"{where}: expected {{aliases, members}}")
        categories[name] = _type_set(spec.get("members"), f"{where}.members")
        if spec.get("property") is not None:
            if not isinstance(spec["property"], str) or not spec["property"].strip():
                raise KnowledgeError(f"{where}.property: expected a property name, got {spec['property']!r}")
            properties[name] = spec["property"].strip()
        for a in _phrases(spec.get("aliases") or [name], f"{where}.aliases"):
            aliases.setdefault(word_key(singular(w) for w in a), name)
    for word, members in (cats.get("synonyms") or {}).items():
        where = f"{cw}: synonyms.{word}"
        categories[f"synonym:{word}"] = _type_set(members, where)
        aliases.setdefault(word_key(singular(w) for w in _phrase(word, where)), f"synonym:{word}")
    type_lists = {k: _type_set(cats.get(k) or [], f"{cw}: {k}") for k in ("cutting_tools",)}
    known = frozenset(t for members in categories.values() for t in members if t != "*")
    nouns = _noun_words(d / "object_types.yaml", known, aliases, descriptions)

    checks = _section(pre, "actions", pw)
    for action, items in checks.items():
        if not isinstance(items, list) or not all(isinstance(c, dict) and isinstance(c.get("check"), str) for c in items):
            raise KnowledgeError(f"{pw}: actions.{action}: expected a list of {{check: ...}}")
    if "default" not in checks:
        raise KnowledgeError(f"{pw}: actions: a 'default' entry is required")
    text = {k: pre.get(k) or {} for k in ("questions", "failures", "passes", "hand", "property_words",
                                         "state_words", "done_words", "sentences", "role_links", "place_links")}

    def num(doc: Mapping, key: str, where: str, default: float) -> float:
        v = doc.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            raise KnowledgeError(f"{where}: {key}: expected a positive number, got {v!r}")
        return float(v)

    for k, v in (lang.get("end_phrases") or {}).items():
        if str(v) not in ("min", "max"):
            raise KnowledgeError(f"{lw}: end_phrases.{k}: expected min or max, got {v!r}")
    for a in lang.get("wordnet_verb_actions") or []:
        if str(a) not in actions:
            raise KnowledgeError(f"{lw}: wordnet_verb_actions: {a!r} is not an action of actions")
    for a, vs in (lang.get("wordnet_verb_anchors") or {}).items():
        if str(a) not in actions or not isinstance(vs, list) or not all(isinstance(v, str) for v in vs):
            raise KnowledgeError(f"{lw}: wordnet_verb_anchors.{a}: expected an action of actions -> a list of verbs")
    for k, vs in (lang.get("verb_kinds") or {}).items():
        if str(k) not in VERB_KINDS or not isinstance(vs, list) or not vs or not all(isinstance(v, str) for v in vs):
            raise KnowledgeError(f"{lw}: verb_kinds.{k}: expected one of {', '.join(VERB_KINDS)} -> a list of verbs")
    state_keys = {s.key for s in states}
    for a, kv in (lang.get("action_results") or {}).items():
        if str(a) not in actions or not isinstance(kv, list) or len(kv) != 2 or str(kv[0]) not in state_keys \
                or not isinstance(kv[1], bool):
            raise KnowledgeError(f"{lw}: action_results.{a}: expected an action of actions -> [a state key of "
                                 f"states, true|false], got {kv!r}")
    for k, v in (lang.get("artifact_actions") or {}).items():
        if str(k) not in actions or str(v) not in actions:
            raise KnowledgeError(f"{lw}: artifact_actions: {k!r} -> {v!r}: both must be actions of actions")
    return Knowledge(
        actions=actions, verb_index=verb_index, split_verbs=split, place_prepositions=place,
        handover_prepositions=tuple(str(p) for p in lang.get("handover_prepositions") or ["to"]),
        relations=relations,
        superlatives_to_robot={str(k): str(v) for k, v in (lang.get("superlatives_to_robot") or {}).items()},
        end_phrases={tuple(str(k).lower().split()): str(v) for k, v in (lang.get("end_phrases") or {}).items()},
        self_words=_phrases(lang.get("self_words") or [], f"{lw}: self_words"),
        positions=positions,
        instrument_words=frozenset(str(w) for w in lang.get("instrument_words") or []),
        part_words=frozenset(str(w) for w in lang.get("part_words") or []),
        container_heads=frozenset(str(w) for w in lang.get("container_heads") or []),
        partitive_words=frozenset(str(w).lower() for w in lang.get("partitive_words") or []),
        personal_words=frozenset(str(w) for w in lang.get("personal_words") or []),
        states=states,
        predicate_only_states=frozenset(str(w) for w in lang.get("predicate_only_states") or []),
        predicate_markers=_phrases(lang.get("predicate_markers") or [], f"{lw}: predicate_markers"),
        negations=frozenset(str(w) for w in lang.get("negations") or []),
        emptiness_phrases=sorted((str(p).lower() for p in lang.get("emptiness_phrases") or []), key=len, reverse=True),
        person_words=frozenset(singular(str(w)) for w in lang.get("person_words") or []),
        role_nouns=_person_nouns(d / "person_nouns.txt", nouns),
        person_pronouns=frozenset(str(w) for w in lang.get("person_pronouns") or []),
        determiners=_phrases(lang.get("determiners") or [], f"{lw}: determiners"),
        lead_fillers=_phrases(lang.get("lead_fillers") or [], f"{lw}: lead_fillers"),
        trail_fillers=_phrases(lang.get("trail_fillers") or [], f"{lw}: trail_fillers"),
        context_leads=_phrases(lang.get("context_leads") or [], f"{lw}: context_leads"),
        identity_leads=_phrases(lang.get("identity_leads") or [], f"{lw}: identity_leads"),
        categories=categories, category_aliases=aliases, category_properties=properties,
        not_pickupable=_type_set(cats.get("not_pickupable") or [], f"{cw}: not_pickupable"),
        single_item_receptacles=_type_set(cats.get("single_item_receptacles") or [], f"{cw}: single_item_receptacles"),
        type_lists=type_lists, checks=checks, text=text,
        known_types=known,
        type_descriptions=descriptions,
        type_aliases={k: also_called(d) for k, d in descriptions.items() if also_called(d)},
        function_words=frozenset(str(w) for w in lang.get("function_words") or []),
        particles=particles,
        result_phrases=_phrases(lang.get("result_phrases") or [], f"{lw}: result_phrases"),
        clause_breaks=_phrases(lang.get("clause_breaks") or [], f"{lw}: clause_breaks"),
        user_words=frozenset(str(w) for w in lang.get("user_words") or []),
        toward_user=tuple(sorted((tuple(str(p).split()) for p in lang.get("toward_user") or []), key=len, reverse=True)),
        remark_leads=_phrases(lang.get("remark_leads") or [], f"{lw}: remark_leads"),
        contrast_leads=_phrases(lang.get("contrast_leads") or [], f"{lw}: contrast_leads"),
        want_verbs=_phrases(lang.get("want_verbs") or [], f"{lw}: want_verbs"),
        motion_leads=_phrases(lang.get("motion_leads") or [], f"{lw}: motion_leads"),
        place_adverbs=_phrases(lang.get("place_adverbs") or [], f"{lw}: place_adverbs"),
        purpose_phrases=_phrases(lang.get("purpose_phrases") or [], f"{lw}: purpose_phrases"),
        modal_clauses=_phrases(lang.get("modal_clauses") or [], f"{lw}: modal_clauses"),
        closing_parts=frozenset(singular(str(w)) for w in lang.get("closing_parts") or []),
        wordnet_verb_actions=tuple(str(a) for a in lang.get("wordnet_verb_actions") or []),
        wordnet_verb_anchors={str(a): tuple(str(v) for v in vs) for a, vs in (lang.get("wordnet_verb_anchors") or {}).items()},
        artifact_actions={str(k): str(v) for k, v in (lang.get("artifact_actions") or {}).items()},
        verb_kinds={str(k): tuple(str(v) for v in vs) for k, vs in (lang.get("verb_kinds") or {}).items()},
        continuation_leads=_phrases(lang.get("continuation_leads") or [], f"{lw}: continuation_leads"),
        piece_counts=frozenset(str(w).lower() for w in lang.get("piece_counts") or []),
        action_results={str(a): (str(kv[0]), bool(kv[1])) for a, kv in (lang.get("action_results") or {}).items()},
        result_states={str(k).lower(): str(v) for k, v in (lang.get("result_states") or {}).items()},
        state_adverbs=frozenset(str(w).lower() for w in lang.get("state_adverbs") or []),
        is_contractions=frozenset(str(w).lower() for w in lang.get("is_contractions") or []),
        time_possessives=frozenset(str(w).lower() for w in lang.get("time_possessives") or []),
        time_leads=_phrases(lang.get("time_leads") or [], f"{lw}: time_leads"),
        subject_pronouns=frozenset(str(w).lower() for w in lang.get("subject_pronouns") or []),
        state_meanings=meanings,
        lacking_phrases=_phrases(lang.get("lacking_phrases") or [], f"{lw}: lacking_phrases"),
        tail_leads=frozenset(str(w).lower() for w in lang.get("tail_leads") or []),
        not_again_verbs=frozenset(str(w).lower() for w in lang.get("not_again_verbs") or []),
        **_colours(data_dir() / "perception" / "colour_names.yaml", data_dir() / "perception" / "colour_words.yaml",
                   nouns=nouns),
    )


def _noun_words(types_file: Path, known: frozenset[str], aliases: dict[str, str],
                descriptions: dict[str, str]) -> frozenset[str]:
    """Every word that names a kind of object here: the words of the type names, category
    members and names, and the names types are "also called"."""
    words = set(known) | set(aliases)
    if types_file.is_file():
        words |= {w.lower() for name in (_read(types_file).get("types") or {}) for w in split_words(str(name))}
    words |= {w for d in descriptions.values() for phrase in also_called(d) for w in phrase}
    return frozenset(words)


def _person_nouns(path: Path, nouns: frozenset[str]) -> frozenset[str]:
    """The one-word nouns of person_nouns.txt (generated from WordNet: "customer", "dentist"),
    except those that name a kind of object here ("monitor", "server")."""
    if not path.is_file():
        return frozenset()
    words = (line.strip().lower() for line in path.read_text(encoding="utf-8").splitlines())
    return frozenset(w for w in words if w and not w.startswith("#") and " " not in w and w not in nouns)


def _colours(path: Path, more: Path | None = None, *, nouns: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The colour words a request may use, from the table perception names colours with, then the
    survey's colour names of ``more`` (colour_words.yaml: word -> one of the table's colours), but
    never a word that names a kind of object ("the butter dish", "the wine glass")."""
    if not path.is_file():
        return {"colour_words": {}, "colour_near": {}, "colour_shades": {}, "colour_refs": {}}
    table = _read(path).get("colours")
    if not isinstance(table, dict):
        raise KnowledgeError(f"{path}: colours: expected a mapping")
    words: dict[str, str] = {}
    near: dict[str, frozenset[str]] = {}
    refs: dict[str, tuple[float, float, float]] = {}
    for name, spec in table.items():
        spec = spec if isinstance(spec, dict) else {}
        for w in spec.get("words") or [name]:
            words.setdefault(str(w).lower(), str(name))
        near[str(name)] = frozenset(str(n) for n in spec.get("near") or [])
        v = spec.get("rgb")
        if isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v):
            refs[str(name)] = (float(v[0]), float(v[1]), float(v[2]))
    survey = _read(more) if more is not None and more.is_file() else {}
    extra = survey.get("colour_words") or {}
    if not isinstance(extra, dict):
        raise KnowledgeError(f"{more}: colour_words: expected a mapping of word -> colour")
    basic = set(words)
    for w, c in extra.items():
        w, c = str(w).lower(), str(c)
        if c not in near:
            raise KnowledgeError(f"{more}: colour_words.{w}: {c!r} is not a colour of {path.name}")
        if w not in nouns and singular(w) not in nouns:
            words.setdefault(w, c)
    rgb = survey.get("colour_rgb") or {}
    shades: dict[str, tuple[float, float, float]] = {}
    for w, v in (rgb.items() if isinstance(rgb, dict) else ()):
        w = str(w).lower()
        if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in v)):
            raise KnowledgeError(f"{more}: colour_rgb.{w}: expected three numbers in 0..1, got {v!r}")
        if (w in words and w not in basic) or (" " in w and w.split()[-1] in words):
            # "mauve", "celadon", "olive green", "mustard yellow": a shade of its own
            shades[w] = (float(v[0]), float(v[1]), float(v[2]))
    return {"colour_words": words, "colour_near": near, "colour_shades": shades, "colour_refs": refs}


def _descriptions(path: Path) -> dict[str, str]:
    """object_types.yaml: type -> one-line description (optional file)."""
    if not path.is_file():
        return {}
    doc = _read(path)
    types = doc.get("types")
    if not isinstance(types, dict):
        raise KnowledgeError(f"{path}: types: expected a mapping of type -> description")
    out: dict[str, str] = {}
    for name, desc in types.items():
        if not isinstance(desc, str) or not desc.strip():
            raise KnowledgeError(f"{path}: types.{name}: expected a one-line description, got {desc!r}")
        out[type_key(str(name))] = " ".join(desc.split())
    return out


_ALSO = re.compile(r"\balso called\s+(.*)$", re.I)
_ARTICLES = {"a", "an", "the", "some"}


def also_called(description: str) -> list[list[str]]:
    """"a small portable light; also called a torch or a hand lamp" -> [[torch], [hand, lamp]]."""
    m = _ALSO.search(description)
    if not m:
        return []
    out = []
    for part in re.split(r",|\bor\b|\band\b", m.group(1)):
        words = [singular(w) for w in split_words(part) if w.lower() not in _ARTICLES]
        if words:
            out.append(words)
    return out
