"""Pre-retrieval (EmbodiedRAG §4.2): from the instruction alone, without the scene, the
entities a task needs and, per entity, the attributes and relations that matter.

* :class:`RulesAbstractor` (offline): the rules reasoner's reading of the instruction
  (:func:`raider_ros.agent.backends.rules.query.parse_query`): head nouns, the references of
  spatial qualifiers, state qualifiers, the person a handover goes to, the instrument an action
  needs; per argument the attributes and neighbour relations its preconditions ask about (the
  checks of ``data/knowledge/preconditions.yaml``), and the member types of a category word
  ("fruit" -> apple, banana, ...; ``data/knowledge/categories.yaml``).
* :class:`LLMAbstractor`: the paper's two prompts (``data/prompts/retrieval/pre_retrieval.yaml``):
  a comma-separated list of objects, then per object the attributes that matter.
* :func:`mentioned_entities` (self-query): entities named in tool arguments or an LLM's
  thoughts, by id, name or a known type mentioned in the text.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from raider_ros.agent.backends.rules.knowledge import Knowledge, load_knowledge
from raider_ros.agent.backends.rules.query import NP, parse_query
from raider_ros.agent.llm import LLMError
from raider_ros.agent.prompt import fill
from raider_ros.common.paths import data_dir
from raider_ros.common.text import singular, split_words, word_key
from raider_ros.common.yamlfile import read_yaml_mapping

ATTRIBUTES = ("properties", "distance_m", "open", "switched_on", "sliced", "clean", "filled", "cooked",
              "broken", "looking_at_robot", "hands_free")
PERSON_ATTRIBUTES = ("distance_m", "looking_at_robot", "hands_free")
# check kind (preconditions.yaml) -> (attributes of the argument, relations X -> argument to follow)
CHECK_NEEDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "property": (("properties",), ()),
    "reachable": (("distance_m",), ()),
    "not_blocked": ((), ("blocking",)),
    "free_path": ((), ("blocking",)),
    "nothing_on_top": ((), ("on top of",)),
    "receptacle_free": ((), ("inside", "on top of")),
    "container_open": (("properties", "open"), ()),
    "person_distance": (("distance_m",), ()),
    "person_gaze": (("looking_at_robot",), ()),
    "person_hands": (("hands_free",), ()),
}


@dataclass
class EntityQuery:
    """One entity the task needs."""
    phrase: str                                   # what to look for: "mug", "coffee machine"
    role: str = "object"                          # object | location | reference | tool | person | mentioned
    types: tuple[str, ...] = ()                   # type keys a category word stands for
    attributes: tuple[str, ...] = ()              # metadata the task needs of it
    relations: tuple[str, ...] = ()               # X <relation> it: neighbours to bring in
    person: bool = False
    id_hint: str | None = None                    # an explicit id ("Mug_2")
    generic: bool = False                         # "thing", "object": found through its relations
    via: tuple[tuple[str, ...], ...] = ()         # (relation, ...) to a reference entity's phrase


@dataclass
class TaskAbstraction:
    task: str
    entities: list[EntityQuery] = field(default_factory=list)
    people: bool = False                          # the task involves people
    source: str = "rules"

    @property
    def phrases(self) -> list[str]:
        return [e.phrase for e in self.entities]


def _np_text(np: NP) -> str:
    return " ".join(np.words) or np.head_text.lower()


class RulesAbstractor:
    """Offline pre-retrieval from the rules reasoner's parse of the instruction."""
    name = "rules"

    def __init__(self, kb: Knowledge | None = None):
        self.kb = kb or load_knowledge()

    def abstract(self, task: str, context: str = "") -> TaskAbstraction:
        kb = self.kb
        out = TaskAbstraction(task=" ".join(f"{task} {context}".split()), source=self.name)
        try:
            pq = parse_query(task, context or "", kb)
        except Exception:  # noqa: BLE001 - an instruction the parser cannot read: words only
            pq = None
        if pq is None or not pq.args:
            out.entities = [EntityQuery(w) for w in _content_words(task, kb)]
            return out
        checks = kb.checks.get(pq.action or "", kb.checks.get("default", []))
        roles = list(pq.args)
        first = roles[0] if roles else "object"
        for role, np in pq.args.items():
            attrs: list[str] = []
            rels: list[str] = []
            for c in checks:
                if str(c.get("arg") or first) != role:
                    continue
                kind = str(c.get("check"))
                a, r = CHECK_NEEDS.get(kind, ((), ()))
                attrs += a
                rels += r
                if kind == "state":
                    attrs.append(str(c.get("key")))
            self._add_np(out, np, role, attrs, rels)
        for c in checks:
            if c.get("check") == "holding_tool":
                members = kb.type_lists.get(str(c.get("tools")), frozenset())
                out.entities.append(EntityQuery(str(c.get("tool_name") or "tool"), "tool", tuple(sorted(members))))
        if pq.person_hint:
            out.people = True
            out.entities.append(EntityQuery(f"person {pq.person_hint}", "person", person=True,
                                            attributes=PERSON_ATTRIBUTES))
        if pq.action == "handover" or any(e.person for e in out.entities):
            out.people = True
        return out

    def _add_np(self, out: TaskAbstraction, np: NP, role: str, attrs: list[str], rels: list[str]) -> None:
        kb = self.kb
        words = np.words
        person = bool(set(words) & kb.person_words) or role == "recipient" or np.raw.lower() in kb.person_pronouns
        cat = kb.category_of(words) if words else None
        members = kb.categories.get(cat, frozenset()) if cat else frozenset()
        generic = "*" in members or not words
        id_hint = np.raw.strip() if re.search(r"[_\d]", np.raw or "") else None
        attrs = attrs + [s.key for s in np.states]
        if any(s.nothing_inside for s in np.states):
            rels = rels + ["inside", "on top of"]
        if any(q.superlative and q.ref is None for q in np.quals):
            attrs.append("distance_m")
        via = tuple(q.relations for q in np.quals if q.ref is not None and q.relations)
        ent = EntityQuery(_np_text(np), "person" if person else role,
                          tuple(sorted(t for t in members if t != "*")), tuple(dict.fromkeys(attrs)),
                          tuple(dict.fromkeys(rels)), person, id_hint, generic and not person, via)
        if person:
            out.people = True
            ent.attributes = tuple(dict.fromkeys(ent.attributes + PERSON_ATTRIBUTES))
        out.entities.append(ent)
        for q in np.quals:
            if q.ref is not None:
                self._add_np(out, q.ref, "reference", [], [])


def _content_words(text: str, kb: Knowledge) -> list[str]:
    """Fallback: the words of an instruction that are not function words."""
    stop = {w for d in kb.determiners for w in d} | {"please", "can", "you", "could", "would", "the", "to",
                                                      "it", "and", "of", "in", "on", "with", "me", "i"}
    return [w for w in dict.fromkeys(singular(w) for w in split_words(text)) if w not in stop and len(w) > 2]


class LLMAbstractor:
    """The paper's LLM-guided abstraction: objects first, then each object's attributes."""
    name = "llm"

    def __init__(self, llm: Any, prompt_file: str | None = None, timeout_s: float = 20.0,
                 attributes: Sequence[str] = ATTRIBUTES):
        self.llm = llm
        path = prompt_file or str(data_dir() / "prompts" / "retrieval" / "pre_retrieval.yaml")
        doc, _ = read_yaml_mapping(path, what="pre-retrieval prompt file")
        for key in ("entities", "attributes"):
            if not isinstance(doc.get(key), str) or "{task}" not in doc[key]:
                raise ValueError(f"{path}: {key}: expected a prompt text with a {{task}} placeholder")
        self.prompts = doc
        self.timeout_s = timeout_s
        self.attributes = tuple(attributes)
        self.calls = 0

    def _ask(self, text: str, deadline: float) -> str:
        self.calls += 1
        reply = self.llm.complete([{"role": "user", "content": text}], deadline=deadline)
        return str(getattr(reply, "text", "") or "")

    def abstract(self, task: str, context: str = "") -> TaskAbstraction:
        deadline = time.monotonic() + self.timeout_s
        full = " ".join(f"{task} {context}".split())
        out = TaskAbstraction(task=full, source=self.name)
        try:
            names = split_list(self._ask(fill(self.prompts["entities"], {"task": full}), deadline))
        except LLMError:
            return RulesAbstractor().abstract(task, context)   # no LLM answer: the offline reading
        for name in names[:12]:
            attrs: list[str] = []
            try:
                raw = self._ask(fill(self.prompts["attributes"], {"task": full, "object": name,
                                                                  "attributes": ", ".join(self.attributes)}), deadline)
                attrs = [a for a in (x.replace(" ", "_") for x in split_list(raw)) if a in self.attributes]
            except LLMError:
                pass
            person = singular(name.split()[-1]) in ("person", "human", "man", "woman", "people")
            out.entities.append(EntityQuery(name, "person" if person else "object", attributes=tuple(attrs),
                                            person=person))
            out.people = out.people or person
        return out


def split_list(text: str) -> list[str]:
    """'Mug, the counter top and a knife.' -> ['mug', 'counter top', 'knife'] (LLM output is data)."""
    text = re.sub(r"(?i)^\s*(answer|objects?|attributes?)\s*:\s*", "", text.strip())
    parts = re.split(r",|;|\n|\band\b", text)
    out = []
    for p in parts:
        p = re.sub(r"^[\s\-*\u2022\d.)]+", "", p).strip(" .'\"`[]")
        p = re.sub(r"^(the|a|an|some)\s+", "", p, flags=re.I).lower()
        if p and len(p) <= 40 and p not in out:
            out.append(p)
    return out


def mentioned_entities(texts: Iterable[str], ids: Iterable[str], type_keys: Iterable[str],
                       names: dict[str, str] | None = None) -> list[EntityQuery]:
    """Self-query without a model: ids, people's names and known types that the texts mention
    (tool arguments, an LLM's thoughts)."""
    id_map = {i.lower(): i for i in ids}
    types = set(type_keys)
    names = {k.lower(): v for k, v in (names or {}).items()}
    max_words = 3
    out: list[EntityQuery] = []
    seen: set[str] = set()
    for text in texts:
        for tok in re.findall(r"[A-Za-z][A-Za-z0-9]*(?:_\d+)+", text or ""):
            i = id_map.get(tok.lower())
            if i and i not in seen:
                seen.add(i)
                out.append(EntityQuery(i, "mentioned", id_hint=i))
        words = [singular(w) for w in split_words(text or "") if not w.isdigit()]
        for n in range(max_words, 0, -1):
            for k in range(len(words) - n + 1):
                key = word_key(words[k:k + n])
                if key in types and key not in seen:
                    seen.add(key)
                    out.append(EntityQuery(" ".join(words[k:k + n]), "mentioned", types=(key,)))
                elif n == 1 and key in names and names[key] not in seen:
                    seen.add(names[key])
                    out.append(EntityQuery(f"person {key}", "mentioned", person=True, id_hint=names[key]))
    return out
