"""The rules answerer (no LLM): an answer built only from the selected summaries' facts.

1. Things the question names - ids (``Cup_2``), capitalised names ("Bob") and the household
   vocabulary of ``data/knowledge/categories.yaml`` (types, category words, synonyms) - are
   looked up in every summary. A thing no summary contains gets "I don't know of any ...":
   the answerer never confirms an object, person or event that no module reports.
2. Every fact of the selected summaries is scored against the question: sentence-embedding
   similarity of the question to what the fact is about (``data/state_qa/facts.yaml``) and to
   the fact's own sentence, raised for facts about the things the question names.
3. The best fact and those close to it (at most ``max_facts``) are said with their templates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Sequence

import numpy as np

from raider_ros.common.paths import data_dir
from raider_ros.common.text import singular, split_words, word_key
from raider_ros.common.yamlfile import read_yaml_mapping

from .modules import StateQAError, load_catalog, state_qa_dir
from .summary import StateSummary

NAME = "rules (no LLM)"
Encoder = Callable[[Sequence[str]], np.ndarray]
ID_RE = re.compile(r"\b[A-Z][A-Za-z0-9]*_\d+\b")
EMBED_CHARS = 200         # a fact's sentence is compared by its beginning (its subject and kind)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_']*")


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class FactTemplate:
    say: str
    about: str
    past: bool = False              # the fact tells what happened (history), not the state now


@lru_cache(maxsize=2)
def load_fact_templates(path: str | None = None) -> dict[str, FactTemplate]:
    doc, p = read_yaml_mapping(path or state_qa_dir() / "facts.yaml", what="fact templates", error=StateQAError)
    raw = doc.get("facts")
    if not isinstance(raw, dict) or not raw:
        raise StateQAError(f"{p}: facts: expected a mapping of fact names")
    out = {}
    for k, e in raw.items():
        if not isinstance(e, dict) or not isinstance(e.get("say"), str) or not isinstance(e.get("about"), str):
            raise StateQAError(f"{p}: facts.{k}: expected say and about (text)")
        out[str(k)] = FactTemplate(e["say"], e["about"], bool(e.get("past", False)))
    return out


@lru_cache(maxsize=2)
def load_answer_texts(path: str | None = None) -> dict[str, str]:
    doc, p = read_yaml_mapping(path or state_qa_dir() / "answers.yaml", what="answer templates", error=StateQAError)
    raw = doc.get("answers")
    need = ("empty", "not_text", "too_long", "refused", "unknown", "nothing_published", "absent", "absent_name",
            "no_fact")
    if not isinstance(raw, dict) or any(not isinstance(raw.get(k), str) for k in need):
        raise StateQAError(f"{p}: answers: expected text for each of {', '.join(need)}")
    return {str(k): str(v) for k, v in raw.items()}


def fill(template: str, **values: object) -> str:
    """``{name}`` placeholders replaced (values are untrusted text: no str.format)."""
    out = template
    for k, v in values.items():
        out = out.replace("{" + k + "}", str(v))
    return out


@dataclass(frozen=True)
class Language:
    not_things: frozenset[str]
    not_names: frozenset[str]
    time_units: dict[str, float]
    number_words: dict[str, float]
    # vocabulary word key -> the type keys it can name
    things: dict[str, frozenset[str]]
    max_ngram: int


@lru_cache(maxsize=2)
def load_language(path: str | None = None) -> Language:
    doc, p = read_yaml_mapping(path or state_qa_dir() / "language.yaml", what="question language",
                               error=StateQAError)
    things: dict[str, set[str]] = {}

    def add(phrase: str, types: Iterable[str]) -> None:
        key = word_key(singular(w) for w in split_words(phrase))
        if key:
            things.setdefault(key, set()).update(word_key(singular(w) for w in split_words(t)) for t in types)

    cats_path = data_dir() / "knowledge" / "categories.yaml"
    try:
        cats, _ = read_yaml_mapping(cats_path, what="category vocabulary", error=StateQAError)
    except StateQAError:
        cats = {}  # without the shared vocabulary only ids and names are checked
    for cat in (cats.get("categories") or {}).values():
        members = [m for m in cat.get("members", []) if m != "*"]
        for m in members:
            add(m, [m])
        if members:
            for a in cat.get("aliases", []):
                add(a, members)
    for word, types in (cats.get("synonyms") or {}).items():
        add(word, types)
        for t in types:
            add(t, [t])
    for t in cats.get("not_pickupable", []) or []:
        add(t, [t])
    not_things = frozenset(word_key(singular(w) for w in split_words(x)) for x in doc.get("not_things", []))
    for k in list(things):
        if k in not_things:
            del things[k]
    units = {str(k): float(v) for k, v in (doc.get("time_units") or {}).items()}
    numbers = {str(k): float(v) for k, v in (doc.get("number_words") or {}).items()}
    max_ngram = max((len(split_words(x)) for x in things), default=1)
    return Language(not_things, frozenset(str(x).lower() for x in doc.get("not_names", [])), units, numbers,
                    {k: frozenset(v) for k, v in things.items()}, min(max_ngram, 3))


# --------------------------------------------------------------------------- things
@dataclass(frozen=True)
class Mention:
    surface: str                    # as written in the question
    kind: str                       # id | name | thing
    present: bool
    ids: tuple[str, ...] = ()       # ids in the summaries it refers to


@dataclass
class Known:
    """What the summaries name: ids (with their type keys) and every word."""
    ids: dict[str, str]             # lower id -> id
    type_of: dict[str, str]         # id -> type key
    words: set[str]                 # singular lower words
    summaries: list[StateSummary]
    people: set[str] = field(default_factory=set)     # person ids and recognised names


def known_things(summaries: Iterable[StateSummary]) -> Known:
    ids: dict[str, str] = {}
    types: dict[str, str] = {}
    words: set[str] = set()
    summaries = list(summaries)
    for s in summaries:
        for text in (s.text, *(f"{k} {v}" for k, v in s.facts)):
            for i in ID_RE.findall(text):
                ids[i.lower()] = i
                types[i] = word_key(singular(w) for w in split_words(i.rsplit("_", 1)[0]))
            words.update(singular(w) for w in split_words(text))
            words.update(w.lower() for w in _TOKEN.findall(text))
    people: set[str] = set()
    for s in summaries:
        for k, v in s.facts:
            base, _, subject = k.partition(":")
            if base == "person" and subject:
                people.add(subject)
                m = re.match(r"recognised as ([^,]+)", v)
                if m:
                    people.add(m.group(1).strip())
    return Known(ids, types, words, summaries, people)


def find_mentions(question: str, known: Known, lang: Language) -> list[Mention]:
    tokens = [(m.group(0), m.start()) for m in _TOKEN.finditer(question)]
    out: list[Mention] = []
    used: set[int] = set()
    for idx, (tok, pos) in enumerate(tokens):
        if ID_RE.fullmatch(tok):
            real = known.ids.get(tok.lower())
            out.append(Mention(tok, "id", real is not None, (real,) if real else ()))
            used.add(idx)
    for idx, (tok, pos) in enumerate(tokens):
        if idx in used or not tok[0].isupper() or tok.lower() in lang.not_names:
            continue
        before = question[:pos].rstrip()
        if idx == 0 or before.endswith((".", "!", "?", ":", "\"")):
            continue                      # a capital that starts a sentence is no sign of a name
        key = word_key(singular(w) for w in split_words(tok))
        if key in lang.things or key in lang.not_things:
            continue                      # "Fridge" written with a capital is still the fridge
        present = tok.lower() in known.words
        ids = tuple(i for i in known.ids.values() if any(tok.lower() in v.lower() and i in f"{k} {v}"
                                                          for s in known.summaries for k, v in s.facts))
        out.append(Mention(tok, "name", present, ids))
        used.add(idx)
    out.extend(_indefinite_things(question, known, lang, out))
    words = [(i, [singular(w) for w in split_words(t)]) for i, (t, _) in enumerate(tokens) if i not in used]
    flat = [(i, w) for i, ws in words for w in ws]
    j = 0
    while j < len(flat):
        hit = None
        for n in range(min(lang.max_ngram, len(flat) - j), 0, -1):
            key = word_key(w for _, w in flat[j:j + n])
            if key in lang.things and key not in lang.not_things:
                hit = (n, key)
                break
        if hit is None:
            j += 1
            continue
        n, key = hit
        surface = " ".join(w for _, w in flat[j:j + n])
        cands = lang.things[key] | {key}
        ids = tuple(i for i, t in known.type_of.items() if t in cands or t.endswith(key))
        present = bool(ids) or all(w in known.words for _, w in flat[j:j + n])
        out.append(Mention(surface, "thing", present, ids))
        j += n
    return out


_INDEFINITE = re.compile(r"\b(?:a|an|any|another)\s+((?:[a-z][a-z'-]*\s+){0,2}?[a-z][a-z'-]*)"
                         r"(?=\s*(?:[?.!,;]|$|\s+(?:in|on|at|near|next|beside|by|from|to|with|under|over|behind|between|"
                         r"inside|of|for|that|which|and|or|here|there|anywhere|around|nearby|today|now)\b))", re.I)


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    return frozenset(ENGLISH_STOP_WORDS)


def _indefinite_things(question: str, known: Known, lang: Language, found: Sequence[Mention]) -> list[Mention]:
    """Things asked about with an indefinite article ("do you see a dog?", "is there any
    fruit?") that the vocabulary does not know: the head word of the phrase, when it is no
    function word, no -ing/-ed/-ly form and no word of ``not_things``. Known vocabulary is
    left to the vocabulary match."""
    out = []
    seen = {m.surface.lower() for m in found}
    for m in _INDEFINITE.finditer(question):
        head = m.group(1).split()[-1].lower().strip("'")
        key = singular(head)
        if (key in lang.things or key in lang.not_things or head in lang.not_things or head in _stop_words()
                or head.endswith(("ing", "ed", "ly")) or head in seen or len(head) < 3):
            continue
        present = key in known.words or head in known.words
        out.append(Mention(head, "thing", present, ()))
        seen.add(head)
    return out


def time_window_s(question: str, lang: Language | None = None) -> float | None:
    """Seconds of "in the last 5 minutes" / "during the past minute", else None."""
    lang = lang or load_language()
    m = re.search(r"\b(?:last|past|previous)\s+(?:(\d+(?:\.\d+)?|[a-z]+)\s+)?([a-z]+?)s?\b", question.lower())
    if not m:
        return None
    unit = lang.time_units.get(m.group(2))
    if unit is None:
        return None
    n = m.group(1)
    if n is None:
        count = 1.0
    elif n.replace(".", "", 1).isdigit():
        count = float(n)
    else:
        count = lang.number_words.get(n)
        if count is None:
            return None
    return count * unit


# --------------------------------------------------------------------------- answering
@dataclass(frozen=True)
class FactUse:
    module: str
    key: str
    value: str
    sentence: str
    score: float


@dataclass(frozen=True)
class RulesReply:
    text: str
    facts: tuple[FactUse, ...] = ()
    absent: tuple[str, ...] = ()
    mentions: tuple[Mention, ...] = ()


class RulesAnswerer:
    """``answer(question, contexts, known=...) -> RulesReply``; offline, deterministic."""
    name = NAME

    def __init__(self, *, encoder: Encoder | None = None, max_facts: int = 3, margin: float = 0.1,
                 entity_boost: float = 0.15, other_entity_penalty: float = 0.2, detail_penalty: float = 0.04,
                 question_word_boost: float = 0.1):
        self._encoder = encoder
        self.max_facts = max(1, int(max_facts))
        self.margin = float(margin)
        self.entity_boost = float(entity_boost)
        self.other_entity_penalty = float(other_entity_penalty)
        self.detail_penalty = float(detail_penalty)
        self.question_word_boost = float(question_word_boost)
        self.templates = load_fact_templates()
        self.texts = load_answer_texts()
        self.lang = load_language()
        self._indexed: dict = {}            # (module, facts) of summaries indexed, oldest first

    def _encode(self, texts: Sequence[str], background: bool = False) -> np.ndarray:
        from . import embedding
        if self._encoder is None:
            self._encoder = embedding.encode
        if background and self._encoder is embedding.encode:
            return np.asarray(embedding.encode(list(texts), background=True), dtype=np.float32)
        return np.asarray(self._encoder(list(texts)), dtype=np.float32)

    def sentence(self, key: str, value: str) -> str:
        base, _, subject = key.partition(":")
        t = self.templates.get(base)
        if t is None:
            return f"{key.replace('_', ' ').replace('.', ' ')}: {value}."
        return fill(t.say, value=value, subject=subject)

    def about(self, key: str) -> str:
        base, _, subject = key.partition(":")
        t = self.templates.get(base)
        text = t.about if t is not None else key.replace("_", " ").replace(".", " ")
        return f"{text} {subject}".strip()

    def index(self, summaries: Iterable[StateSummary], *, background: bool = False) -> int:
        """Embed the summaries' facts ahead of the questions (the embeddings are cached), as a
        node does when a summary arrives; returns the number of texts handed to the encoder.
        A summary whose facts were indexed before (same content) is skipped; ``background``:
        nobody waits for it (questions get the model first)."""
        texts = []
        for s in summaries:
            key = (s.module, s.facts)
            if key in self._indexed:
                continue
            for k, v in s.facts:
                texts += [self.about(k), self.sentence(k, v)[:EMBED_CHARS]]
            self._indexed[key] = None
        while len(self._indexed) > 256:
            self._indexed.pop(next(iter(self._indexed)))
        if texts:
            self._encode(texts, background=background)
        return len(texts)

    def answer(self, question: str, contexts: Sequence[StateSummary],
               known: Sequence[StateSummary] | None = None) -> RulesReply:
        all_known = known_things(known if known is not None else contexts)
        mentions = find_mentions(question, all_known, self.lang)
        absent = [m for m in mentions if not m.present]
        if absent:
            # common nouns are repeated ("any microwave"); ids and names are not, so the answer
            # never names a thing that no module reports
            things = [m.surface for m in absent if m.kind == "thing"]
            if things:
                text = fill(self.texts["absent"], things=" or ".join(dict.fromkeys(things)))
            else:
                text = self.texts["absent_name"]
            return RulesReply(text, (), tuple(m.surface for m in absent), tuple(mentions))
        cands = [(s.module, k, v) for s in contexts for k, v in s.facts if k != "facts_dropped"]
        if not cands:
            titles = ", ".join(load_catalog().title(s.module) for s in contexts) or "modules"
            return RulesReply(fill(self.texts["no_fact"], modules=titles), (), (), tuple(mentions))
        sentences = [self.sentence(k, v) for _, k, v in cands]
        abouts = [self.about(k) for _, k, _ in cands]
        E = self._encode([question, *abouts, *(x[:EMBED_CHARS] for x in sentences)])
        q, A, S = E[0], E[1:1 + len(cands)], E[1 + len(cands):]
        scores = 0.6 * (A @ q) + 0.4 * (S @ q)
        linked = {i for m in mentions for i in m.ids}
        names = {m.surface.lower() for m in mentions if m.kind in ("name", "thing")}
        for j, (_, k, v) in enumerate(cands):
            subject = k.partition(":")[2]
            blob = f"{k} {v}".lower()
            about_it = any(i.lower() in blob for i in linked) or any(n in blob for n in names)
            if linked or names:
                if about_it:
                    scores[j] += self.entity_boost
                elif subject:
                    scores[j] -= self.other_entity_penalty
            elif subject:
                scores[j] -= self.detail_penalty
        words = {w.lower() for w in _TOKEN.findall(question)}
        asks_who = bool(words & {"who", "whom", "whose"})
        asks_past = bool(words & {"did", "have", "has", "had", "were"})
        for j, (_, k, v) in enumerate(cands):
            t = self.templates.get(k.partition(":")[0])
            if asks_who and k.partition(":")[0] != "person" and any(p in v for p in all_known.people):
                scores[j] += self.question_word_boost      # "who ...?": facts that name a person
            if asks_past and t is not None and t.past:
                scores[j] += self.question_word_boost      # "did you ...?": what happened
        order = np.argsort(-scores)
        best = float(scores[order[0]])
        chosen = [int(j) for j in order[: self.max_facts] if scores[j] >= best - self.margin]
        uses = tuple(FactUse(cands[j][0], cands[j][1], cands[j][2], sentences[j], round(float(scores[j]), 4))
                     for j in chosen)
        text = " ".join(dict.fromkeys(u.sentence for u in uses))
        return RulesReply(text, uses, (), tuple(mentions))
