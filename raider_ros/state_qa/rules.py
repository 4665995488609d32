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

import dataclasses
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Sequence

import numpy as np

from raider_ros.common.paths import data_dir
from raider_ros.common.text import singular, split_words, word_key
from raider_ros.common.yamlfile import read_yaml_mapping

from .modules import StateQAError, load_catalog, state_qa_dir
from .summary import StateSummary, SummaryHistory

NAME = "rules (no LLM)"
Encoder = Callable[[Sequence[str]], np.ndarray]
ID_RE = re.compile(r"\b[A-Z][A-Za-z0-9]*_\d+\b")
MAX_HISTORY_FACTS = 120   # earlier facts weighed for one question (those naming its things first)
EMBED_CHARS = 200         # a fact's sentence is compared by its beginning (its subject and kind)
MAX_FACT_VECTORS = 16384  # fact texts whose embeddings the answerer keeps (about 24 MB)
MAX_INDEXED_SUMMARIES = 4096   # summaries remembered as embedded (by module and facts)
LIST_SEP = " | "           # how the summarizers join the items of a list fact
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_']*")


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class FactTemplate:
    say: str
    about: str
    past: bool = False              # the fact tells what happened (history), not the state now
    object_state: bool = False      # the fact says where an object is or what became of it
    stale_marker: str = ""          # words by which the fact says it is a last sighting
    cause: bool = False             # the fact gives a reason or says what went wrong
    acted_on: bool = False          # the fact says what the robot itself did with an object
    issue_list: bool = False        # the value lists issues met, oldest first, joined by LIST_SEP


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
        out[str(k)] = FactTemplate(e["say"], e["about"], bool(e.get("past", False)),
                                   bool(e.get("object_state", False)), str(e.get("stale_marker") or ""),
                                   bool(e.get("cause", False)), bool(e.get("acted_on", False)),
                                   bool(e.get("issue_list", False)))
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
    past_markers: frozenset[str] = frozenset()
    past_subjects: frozenset[str] = frozenset()
    first_markers: tuple[str, ...] = ()
    latest_markers: tuple[str, ...] = ()
    cause_markers: tuple[str, ...] = ()
    part_links: tuple[tuple[str, ...], ...] = ()


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
    words = lambda key: tuple(str(x).lower() for x in (doc.get(key) or []))  # noqa: E731
    return Language(not_things, frozenset(str(x).lower() for x in doc.get("not_names", [])), units, numbers,
                    {k: frozenset(v) for k, v in things.items()}, min(max_ngram, 3),
                    frozenset(words("past_markers")), frozenset(words("past_subjects")), words("first_markers"),
                    words("latest_markers"), words("cause_markers"),
                    tuple(sorted((tuple(x.split()) for x in words("part_links")), key=len, reverse=True)))


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
    """What the summaries name. The same summaries give the same (shared, not to be changed)
    result: it is read three times per question and cached for the last few sets."""
    summaries = tuple(summaries)
    try:
        return _known_cached(summaries)
    except TypeError:            # an unhashable stand-in for a summary
        return _known_things(summaries)


@lru_cache(maxsize=8)
def _known_cached(summaries: tuple[StateSummary, ...]) -> Known:
    return _known_things(summaries)


def _known_things(summaries: Iterable[StateSummary]) -> Known:
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
    spans: list[tuple[int, int, Mention]] = []      # token span of each vocabulary thing
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
        spans.append((flat[j][0], flat[j + n - 1][0], Mention(surface, "thing", present, ids)))
        j += n
    out.extend(_parts_of_objects(spans, [t.lower() for t, _ in tokens], lang))
    return out


def _parts_of_objects(spans: Sequence[tuple[int, int, Mention]], tokens: Sequence[str],
                      lang: Language) -> list[Mention]:
    """A thing no summary reports, written as a part of one that a summary does report -
    "the fridge door", "the door of the fridge" - names that object: the mention becomes the
    object's (present, its ids), so the answer speaks of the fridge instead of "I don't know of
    any door"."""
    out = []
    for a, b, m in spans:
        if m.present:
            out.append(m)
            continue
        owner = None
        for a2, b2, m2 in spans:
            if not m2.present:
                continue
            if b2 == a - 1:                                   # "fridge door"
                owner = m2
            else:                                             # "door of the fridge"
                gap = tuple(tokens[b + 1:a2])
                if a2 > b + 1 and gap in lang.part_links:
                    owner = m2
            if owner is not None:
                break
        if owner is None:
            out.append(m)
        else:
            out.append(Mention(f"{m.surface} of {owner.surface}", "thing", True, owner.ids))
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


def is_past_question(question: str, lang: Language | None = None) -> bool:
    """Whether the question asks what happened ("why did you ...", "what happened ...", "you
    tried ..."): a word of ``past_markers``, a subject followed by a verb in -ed, or a question
    for a reason ("why could you not ...?": a cause comes before what it caused, so the
    history may hold it)."""
    lang = lang or load_language()
    toks = [t.lower() for t in _TOKEN.findall(question)]
    if set(toks) & lang.past_markers or asks_cause(question, lang):
        return True
    return any(a in lang.past_subjects and b.endswith("ed") and len(b) > 4 for a, b in zip(toks, toks[1:]))


def _has_phrase(question: str, phrases: Iterable[str]) -> bool:
    low = " ".join(_TOKEN.findall(question.lower()))
    return any(re.search(rf"\b{re.escape(m)}\b", low) for m in phrases)


def asks_first(question: str, lang: Language | None = None) -> bool:
    """Whether the question asks for the earliest report ("the first time", "at first")."""
    lang = lang or load_language()
    return _has_phrase(question, lang.first_markers)


def asks_cause(question: str, lang: Language | None = None) -> bool:
    """Whether the question asks for a reason ("why ...?", "what went wrong?")."""
    lang = lang or load_language()
    return _has_phrase(question, lang.cause_markers)


def asks_latest(question: str, lang: Language | None = None) -> bool:
    """Whether the question asks for the latest report ("what did you do last?"): then the
    history is not read (the latest summaries hold it)."""
    lang = lang or load_language()
    return _has_phrase(question, lang.latest_markers) and not asks_first(question, lang)


def age_text(stamp: float, now: float, just_now_s: float = 1.0) -> str:
    """How long ago ``stamp`` was, as said: "just now" below ``just_now_s``, then s, min, h."""
    d = now - stamp
    if d < just_now_s:
        return "just now"
    if d < 90:
        return f"{d:.0f} s ago"
    if d < 5400:
        return f"{d / 60:.0f} min ago"
    return f"{d / 3600:.1f} h ago"


_LAST_SEEN = re.compile(r"last seen (?:less than |about |over )?(\d+(?:\.\d+)?)\s*([a-z]+) ago")


def _about_objects(key: str, value: str, ids: Iterable[str], templates: dict) -> set[str]:
    """The objects of ``ids`` a fact is about: its subject, or named in the value of a fact that
    says where an object is (``object_state`` in facts.yaml)."""
    subject = key.partition(":")[2]
    t = templates.get(key.partition(":")[0])
    out = set()
    for i in ids:
        if subject == i or (t is not None and t.object_state and re.search(rf"\b{re.escape(i)}\b", value)):
            out.add(i)
    return out


@dataclass(frozen=True)
class ObjectFact:
    """One module's fact about an object with the time it tells about: when the module first
    reported it (from the history), or for a last sighting, when the object was last perceived."""
    obj: str
    module: str
    key: str
    value: str
    time: float
    stale: bool
    newest: bool = False


def object_timeline(ids: Iterable[str], latest: Iterable[StateSummary], history: SummaryHistory | None = None,
                    templates: dict | None = None, lang: Language | None = None) -> list[ObjectFact]:
    """Every module's current facts about the objects ``ids``, newest first per object; the
    newest fact that is no last sighting is marked ``newest`` (it wins), and last sightings are
    marked ``stale``. A fact's time: the start of the run of history summaries of its module
    reporting the same value (without a history, the summary's stamp); a last sighting's time:
    the last summary in which the fact did not carry the ``stale_marker``, else the summary's
    stamp less the "last seen ... ago" it states."""
    templates = templates if templates is not None else load_fact_templates()
    lang = lang or load_language()
    ids = list(ids)
    rows: list[ObjectFact] = []
    for s in latest:
        past = history.past(s.module) if history is not None else []
        for k, v in s.facts:
            objs = _about_objects(k, v, ids, templates)
            if not objs:
                continue
            t = templates.get(k.partition(":")[0])
            stale = bool(t is not None and t.stale_marker and t.stale_marker in v)
            when = s.stamp
            if stale:
                seen = [p.stamp for p in past if p.stamp < s.stamp and p.fact(k) is not None
                        and t.stale_marker not in (p.fact(k) or "")]
                m = _LAST_SEEN.search(v)
                if seen:
                    when = max(seen)
                elif m:
                    unit = lang.time_units.get(m.group(2)) or lang.time_units.get(m.group(2).rstrip("s"))
                    if unit:
                        when = s.stamp - float(m.group(1)) * unit
            else:
                for p in reversed([p for p in past if p.stamp <= s.stamp]):
                    if p.fact(k) != v:
                        break
                    when = p.stamp
            for o in objs:
                rows.append(ObjectFact(o, s.module, k, v, when, stale))
    out: list[ObjectFact] = []
    for o in ids:
        group = sorted((r for r in rows if r.obj == o), key=lambda r: -r.time)
        fresh = [r for r in group if not r.stale]
        if fresh and len({r.module for r in group}) > 1:
            best = fresh[0]
            group = [dataclasses.replace(r, newest=True) if r is best else r for r in group]
        out.extend(group)
    return out


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
                 question_word_boost: float = 0.1, recency_boost: float = 0.1,
                 history_penalty: float = 0.2, cause_boost: float = 1.0):
        self._encoder = encoder
        self.max_facts = max(1, int(max_facts))
        self.margin = float(margin)
        self.entity_boost = float(entity_boost)
        self.other_entity_penalty = float(other_entity_penalty)
        self.detail_penalty = float(detail_penalty)
        self.question_word_boost = float(question_word_boost)
        self.recency_boost = float(recency_boost)
        self.history_penalty = float(history_penalty)
        self.cause_boost = float(cause_boost)
        self.templates = load_fact_templates()
        self.texts = load_answer_texts()
        self.lang = load_language()
        self._indexed: OrderedDict = OrderedDict()   # (module, facts) of the summaries embedded
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()   # fact text -> its embedding
        self._vec_lock = threading.Lock()   # guards the two dicts, never held while the model runs

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

    def fact_texts(self, key: str, value: str) -> tuple[str, str]:
        """The two texts of a fact compared with a question: what it is about, its sentence."""
        return self.about(key), self.sentence(key, value)[:EMBED_CHARS]

    def fact_vectors(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        """Embeddings of fact texts from the answerer's store; texts not in it (a summary not
        indexed yet) are embedded once and kept. Bounded (least recently used goes first)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._vec_lock:
            found = {}
            for t in dict.fromkeys(texts):
                v = self._vectors.get(t)
                if v is not None:
                    self._vectors.move_to_end(t)
                    found[t] = v
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vecs = self._encode(missing, background=background)
            with self._vec_lock:
                for t, v in zip(missing, vecs):
                    self._vectors[t] = found[t] = v
                while len(self._vectors) > MAX_FACT_VECTORS:
                    self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts])

    def index(self, summaries: Iterable[StateSummary], *, background: bool = False) -> int:
        """Embed the summaries' facts ahead of the questions, once per summary: a node calls it
        when summaries enter its history (latest and earlier ones alike), so that answering -
        also a question about the past - only looks embeddings up. A summary indexed before
        (same module and facts) is skipped, and so is a fact text already embedded; returns the
        number of texts handed to the encoder. ``background``: nobody waits for it (questions
        get the model first)."""
        texts: list[str] = []
        with self._vec_lock:
            for s in summaries:
                key = (s.module, s.facts)
                if key in self._indexed:
                    self._indexed.move_to_end(key)
                    continue
                self._indexed[key] = None
                for k, v in s.facts:
                    if k != "facts_dropped":
                        texts += [t for t in self.fact_texts(k, v) if t not in self._vectors]
            while len(self._indexed) > MAX_INDEXED_SUMMARIES:
                self._indexed.popitem(last=False)
        texts = list(dict.fromkeys(texts))
        if texts:
            self.fact_vectors(texts, background=background)
        return len(texts)

    def answer(self, question: str, contexts: Sequence[StateSummary],
               known: Sequence[StateSummary] | None = None, *, history: SummaryHistory | None = None,
               now: float | None = None) -> RulesReply:
        """``contexts``: the selected modules' latest summaries; ``known``: every module's latest
        (for the things named, and for the facts about a named object from every module);
        ``history``: for questions about the past, earlier facts of the modules answering."""
        known = list(known if known is not None else contexts)
        all_known = known_things(known)
        mentions = find_mentions(question, all_known, self.lang)
        absent = [m for m in mentions if not m.present]
        past = is_past_question(question, self.lang) and not asks_latest(question, self.lang)
        now = max((s.stamp for s in known), default=0.0) if now is None else float(now)
        if absent:
            # common nouns are repeated ("any microwave"); ids and names are not, so the answer
            # never names a thing that no module reports
            things = [m.surface for m in absent if m.kind == "thing"]
            if things:
                text = fill(self.texts["absent"], things=" or ".join(dict.fromkeys(things)))
            else:
                text = self.texts["absent_name"]
            uses: tuple[FactUse, ...] = ()
            first = (self._first_issue(known, history, now)
                     if past and history is not None and asks_cause(question, self.lang) else None)
            if first is not None:
                # "why did you stop by the X?" with no X: say so, then the first issue that
                # stopped the robot - not every issue of the task
                uses = (first,)
                text = " ".join([text, first.sentence])
            elif past and history is not None:
                # "what happened by the X?" with no X: say so, then what did happen
                rest = [m for m in mentions if m.present]
                uses = self._best(question, contexts, known, rest, history, now, past=True, history_only=True)
                if uses:
                    text = " ".join([text, self.texts.get("absent_but", ""), *dict.fromkeys(u.sentence for u in uses)])
            return RulesReply(text.strip(), uses, tuple(m.surface for m in absent), tuple(mentions))
        uses = self._best(question, contexts, known, mentions, history, now, past=past)
        if not uses:
            titles = ", ".join(load_catalog().title(s.module) for s in contexts) or "modules"
            return RulesReply(fill(self.texts["no_fact"], modules=titles), (), (), tuple(mentions))
        text = " ".join(dict.fromkeys(u.sentence for u in uses))
        return RulesReply(text, uses, (), tuple(mentions))

    def _first_issue(self, known: Sequence[StateSummary], history: SummaryHistory,
                     now: float) -> FactUse | None:
        """The earliest issue any module listed (``issue_list`` facts: issues met, oldest first),
        with the time it was first reported; None when no module lists any."""
        titles = load_catalog()
        pool = sorted([*history.what_happened(None, None, None), *known], key=lambda s: s.stamp)
        for s in pool:
            for k, v in s.facts:
                t = self.templates.get(k.partition(":")[0])
                if t is None or not t.issue_list:
                    continue
                items = [x.strip() for x in v.split(LIST_SEP.strip()) if x.strip()]
                if not items:
                    continue
                item = items[0] if items[0].endswith((".", "!", "?")) else items[0] + "."
                return FactUse(s.module, k, items[0], fill(self.texts["first_issue"], age=age_text(s.stamp, now),
                                                           module_title=titles.title(s.module), item=item), 1.0)
        return None

    def _acted_on(self, mentions: Sequence[Mention], timeline: dict) -> tuple[set[str], set[str]]:
        """For a thing that names several objects ("the cup": Cup_1, Cup_2): those the robot
        acted on (a current ``acted_on`` fact: held, handed over, a skill's result) and the
        others - when it acted on some of them only."""
        acted: set[str] = set()
        others: set[str] = set()
        for m in mentions:
            if m.kind != "thing" or len(m.ids) < 2:      # a kind of object, not a name or an id
                continue
            a = {i for i in m.ids if any(r.obj == i and not r.stale and getattr(self.templates.get(
                r.key.partition(":")[0]), "acted_on", False) for r in timeline.values())}
            if a and len(a) < len(set(m.ids)):
                acted |= a
                others |= set(m.ids) - a
        return acted, others

    def _distinct(self, window: Sequence[int], cands: Sequence[tuple[str, str, str, float, str]]) -> dict[int, str]:
        """What is left to say of each candidate once each fact is quoted once, newest first:
        a list fact (items joined by LIST_SEP) keeps only the items no newer quoted fact of the
        same module and kind holds - a summary repeating a growing list adds nothing - and a
        fact repeated word for word is said once. Returns candidate index -> value to say."""
        said: dict[tuple[str, str], set[str]] = {}
        out: dict[int, str] = {}
        for j in sorted(window, key=lambda j: -cands[j][3]):      # stable: score order on ties
            m, k, v, _, _ = cands[j]
            group = (m, k)
            items = [x.strip() for x in v.split(LIST_SEP.strip())] if LIST_SEP in v else [v]
            have = said.setdefault(group, set())
            new = [x for x in items if x not in have]
            if not new:
                continue
            have.update(items)
            out[j] = v if len(new) == len(items) else LIST_SEP.join(new)
        return out

    def _best(self, question: str, contexts: Sequence[StateSummary], known: Sequence[StateSummary],
              mentions: Sequence[Mention], history: SummaryHistory | None, now: float, *, past: bool,
              history_only: bool = False) -> tuple[FactUse, ...]:
        titles = load_catalog()
        linked = {i for m in mentions for i in m.ids}
        names = {m.surface.lower() for m in mentions if m.kind in ("name", "thing")}
        # candidates: (module, key, value, stamp, kind) with kind now | object | earlier
        cands: list[tuple[str, str, str, float, str]] = []
        if not history_only:
            cands = [(s.module, k, v, s.stamp, "now") for s in contexts for k, v in s.facts if k != "facts_dropped"]
        seen = {(m, k, v) for m, k, v, _, _ in cands}
        timeline = {(r.module, r.key, r.value): r for r in object_timeline(linked, known, history, self.templates,
                                                                            self.lang)} if linked else {}
        if not history_only:
            for s in known:        # the facts about a named object from every module
                for k, v in s.facts:
                    if (s.module, k, v) in timeline and (s.module, k, v) not in seen:
                        cands.append((s.module, k, v, s.stamp, "object"))
                        seen.add((s.module, k, v))
        if past and history is not None:
            mods = {s.module for s in contexts} | {c[0] for c in cands}
            if history_only:
                mods |= {s.module for s in known}
            latest = {s.module: s.stamp for s in known}
            earlier: dict[tuple[str, str, str], float] = {}
            for s in history.what_happened(None, None, mods):
                if s.stamp >= latest.get(s.module, float("inf")):
                    continue
                for k, v in s.facts:
                    key = (s.module, k, v)
                    if k != "facts_dropped" and key not in seen and key not in earlier:
                        earlier[key] = s.stamp          # the first time it was reported
            rows = sorted(earlier.items(), key=lambda kv: (not self._names_it(kv[0][1], kv[0][2], linked, names),
                                                           -kv[1]))[:MAX_HISTORY_FACTS]
            cands += [(m, k, v, t, "earlier") for (m, k, v), t in rows]
        if not cands:
            return ()
        def say_it(m: str, k: str, v: str, t: float, kind: str, value: str) -> str:
            say = self.sentence(k, value)
            row = timeline.get((m, k, v))
            if kind == "earlier":
                say = fill(self.texts["earlier"], age=age_text(t, now), module_title=titles.title(m), sentence=say)
            elif row is not None and row.stale:
                say = f"{say} {fill(self.texts['stale'], age=age_text(row.time, now), module_title=titles.title(m))}"
            elif row is not None and row.newest:
                say = f"{say} {fill(self.texts['as_of'], age=age_text(row.time, now), module_title=titles.title(m))}"
            return say
        pairs = [self.fact_texts(k, v) for _, k, v, _, _ in cands]
        q = self._encode([question])[0]            # cached: the selector embedded it
        V = self.fact_vectors([a for a, _ in pairs] + [b for _, b in pairs])   # indexed when they arrived
        A, S = V[:len(cands)], V[len(cands):]
        scores = 0.6 * (A @ q) + 0.4 * (S @ q)
        for j, (_, k, v, _, _) in enumerate(cands):
            subject = k.partition(":")[2]
            about_it = self._names_it(k, v, linked, names)
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
        people = known_things(known).people
        why = asks_cause(question, self.lang)
        for j, (m, k, v, _, kind) in enumerate(cands):
            t = self.templates.get(k.partition(":")[0])
            if why and t is not None and t.cause:
                # "why ...?": explanations, errors, failures; one about the things the question
                # names is the answer, ahead of any state of those things
                named_cause = bool(linked or names) and self._names_it(k, v, linked, names)
                scores[j] += self.cause_boost if named_cause else self.question_word_boost
            if asks_who and k.partition(":")[0] != "person" and any(p in v for p in people):
                scores[j] += self.question_word_boost      # "who ...?": facts that name a person
            if asks_past and t is not None and t.past:
                scores[j] += self.question_word_boost      # "did you ...?": what happened
            row = timeline.get((m, k, v))
            if row is not None and row.newest:
                scores[j] += self.recency_boost            # the most recent fact about the object
            elif row is not None and row.stale and any(r.newest and r.obj == row.obj and r.time > row.time
                                                       for r in timeline.values()):
                scores[j] -= self.recency_boost            # a last sighting older than another report
        acted, others = self._acted_on(mentions, timeline)
        if acted:
            # "where is the cup?" with two cups, one of them handed over by the robot: the
            # facts about the one it acted on first, another's (stale) sighting after them
            for j, (m, k, v, _, _) in enumerate(cands):
                objs = _about_objects(k, v, acted | others, self.templates)
                row = timeline.get((m, k, v))
                if objs & acted and not (row is not None and row.stale):
                    scores[j] += self.entity_boost
                elif objs:
                    scores[j] -= self.other_entity_penalty
        first_asked = past and asks_first(question, self.lang)
        current = {(m, k): self._names_it(k, v, linked, names) for m, k, v, _, kind in cands if kind != "earlier"}
        for j, (m, k, v, _, kind) in enumerate(cands):
            # an earlier value of a fact the module still reports gives way to the current one,
            # unless it is the one about the things the question names, or the first is asked for
            if kind == "earlier" and (m, k) in current and not first_asked:
                if not (self._names_it(k, v, linked, names) and not current[(m, k)]):
                    scores[j] -= self.history_penalty
        if first_asked:
            # "the first time": the earliest report of each kind of fact wins over later ones
            first: dict[tuple[str, str], int] = {}
            for j, (m, k, _, t, _) in enumerate(cands):
                key = (m, k.partition(":")[0])
                if key not in first or t < cands[first[key]][3]:
                    first[key] = j
            for j in first.values():
                scores[j] += self.question_word_boost
        order = [int(j) for j in np.argsort(-scores)]
        best = float(scores[order[0]])
        window = [j for j in order if scores[j] >= best - self.margin]
        values = self._distinct(window, cands)           # each fact once, the newest kept
        chosen = [j for j in window if j in values][: self.max_facts]
        if history_only:
            chosen.sort(key=lambda j: -cands[j][3])      # quoted from the history: newest first
        return tuple(FactUse(cands[j][0], cands[j][1], cands[j][2], say_it(*cands[j], values[j]),
                             round(float(scores[j]), 4)) for j in chosen)

    @staticmethod
    def _names_it(key: str, value: str, linked: set[str], names: set[str]) -> bool:
        blob = f"{key} {value}".lower()
        return any(i.lower() in blob for i in linked) or any(n in blob for n in names)
