"""GROUND: link a noun phrase to the objects (or people) in view and in the gripper.

Names first (an id, the type, a longer phrase ending in the type, a typo, a category from
categories.yaml, then what the phrase means: its sentence embedding compared with each visible
type's name and one-line description from object_types.yaml, helped by the words the two share),
then the qualifiers the phrase carries, each answered
by a tool: spatial ones by ``check_obj_relationship`` ("X <relation> reference"), states by
``get_obj_state``, "closest to" by ``dist_between_objs`` (or the distance to the robot).
All calls of one phrase are asked for together; :class:`Grounding` ``pending`` means some
answers are still missing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from rapidfuzz import fuzz

from raider_ros.common.colour import colour_cost
from raider_ros.common.text import singular, split_words, word_key

from . import embedding
from .lexicon import load_lexicon, load_uses, load_verb_senses
from .knowledge import Knowledge, type_key, type_of, type_words
from .query import NP, StateQual, _is_person_noun
from .transcript import Observations, entry_for

FUZZY_CUTOFF = 85.0
MEANING_SCORE = 0.66             # a phrase names a type: embedding similarity (+ shared-word bonus) at least this
MEANING_MARGIN = 0.06            # ... and within this of the best type in view
WORD_BONUS = 0.30                # added when every content word of the phrase is in the type's name or description
CLAUSE_SCORE = 0.55               # a clause reads as a state (language.yaml "means"): similarity at least this
CLAUSE_MARGIN = 0.05             # ... and this far ahead of every other state
CLAUSE_WORD_BONUS = 0.1          # added in proportion to the clause's content words found in a meaning
PLURAL_FLOOR = 0.45              # a plural phrase may name several types: each at least this
PLURAL_MARGIN = 0.25             # ... and within this of the best
CLEAR_SCORE = 0.5                # below MEANING_SCORE, a type still counts when it is this high
CLEAR_MARGIN = 0.15              # ... and this far ahead of every other type in view
CATEGORY_SCORE = 0.55            # the same score for a type the categories do not list to belong to a category
SHADE_MAX = 0.35                 # a survey shade names a measured colour at most this far (common/colour.py)
SHADE_MARGIN = 0.10              # ... and every candidate within this of the nearest
BORDER_MARGIN = 0.05             # a colour reported as another counts when its measured RGB is this near the asked one
REF_SCORE = 0.40                 # a reference no name grounds: the kind closest in meaning, at least this
REF_MARGIN = 0.08                # ... and this far ahead of every other kind in view
TIE_M = 0.01                     # distances this close are a tie for "closest"


def lex_words(i: str) -> list[str]:
    """A type's words as WordNet should read them: as written when WordNet knows the plural on its
    own ("ReadingGlasses": glasses, spectacles, not glass), else made singular ("Headphones")."""
    raw = [w.lower() for w in split_words(type_of(i)) if not w.isdigit()]
    return raw if raw and raw[-1] != singular(raw[-1]) and load_lexicon().senses(raw[-1:]) else type_words(i)


@dataclass
class Pool:
    """What grounding can link to."""
    objects: list[str]                                   # visible object ids
    held: str | None = None
    people: dict[str, str | None] = field(default_factory=dict)   # person id -> recognised name

    @property
    def entities(self) -> list[str]:
        return self.objects + ([self.held] if self.held and self.held not in self.objects else [])


@dataclass
class Grounding:
    status: str                          # one | several | none | pending
    ids: list[str] = field(default_factory=list)
    base: list[str] = field(default_factory=list)        # matched by name, before the qualifiers
    how: str = ""                                        # id | type | fuzzy | category | kind | embedding | name | role
    reasons: list[str] = field(default_factory=list)     # why candidates were set aside
    facts: list[str] = field(default_factory=list)       # what the qualifiers established
    missing_ref: NP | None = None                        # a reference that matched nothing
    state_only: bool = False                             # only a state qualifier emptied the set
    unknown_person: str | None = None

    @classmethod
    def of(cls, ids: list[str], **kw) -> "Grounding":
        status = "none" if not ids else ("one" if len(ids) == 1 else "several")
        return cls(status, list(ids), **kw)


def join_ids(ids: list[str], conj: str = "and") -> str:
    ids = list(ids)
    if len(ids) <= 1:
        return "".join(ids)
    return f"{', '.join(ids[:-1])} {conj} {ids[-1]}"


def related_ids(data, obj: str) -> list[str] | None:
    entry = entry_for(data, "object", obj)
    if isinstance(entry, dict) and isinstance(entry.get("related"), list):
        return [str(x) for x in entry["related"]]
    if isinstance(entry, list):                      # a bare list of ids
        return [str(x) for x in entry]
    return None


class Grounder:
    def __init__(self, obs: Observations, kb: Knowledge, pool: Pool, *, deadline: float,
                 use_embeddings: bool = True, distance_tool: str | None = None):
        self.obs, self.kb, self.pool = obs, kb, pool
        self.deadline = deadline
        self.use_embeddings = use_embeddings
        # a structured query (pick(SolderSpool)) names a type: no other type stands in for it by
        # meaning alone (the soldering iron); names, categories and WordNet kinds still count
        self.strict = False
        self.distance_tool = distance_tool
        self.notes: list[str] = []                   # remarks for the reasoning text
        self.contents: dict[str, list[str]] = {}     # container -> what is inside it

    # ------------------------------------------------------------------ names
    def match_name(self, np: NP, ids: list[str]) -> tuple[list[str], str]:
        last = (split_words(np.raw) or [""])[-1].lower()
        hits, how = self._match(np.raw, np.words, ids, plural=np.partitive or (bool(np.words) and last != np.words[-1]),
                                contents=" of " in f" {np.text.lower()} ", said=np.text)
        if not hits and np.words and last != np.words[-1] and not self.strict:
            # "field glasses": a plural WordNet knows as a lemma of its own (binoculars), not the
            # plural of its singular ("field glass", a telescope)
            lex = load_lexicon()
            said = np.words[:-1] + [last]
            own = lex.senses(said, whole=True)
            if own and own != lex.senses(np.words, whole=True):
                kinds = [i for i in ids if lex.is_a(lex_words(i), said) or lex.shares_a_sense(type_words(i), said)]
                if kinds:
                    return kinds, "kind"
        if np.words and last != np.words[-1] and how in ("type", "fuzzy") and len(hits) > 1:
            # "my glasses": a plural WordNet knows on its own (spectacles, not drinking glasses)
            # keeps the types whose own plural name is that thing
            lex = load_lexicon()
            mine = set(lex.senses([last]))
            if mine and mine != set(lex.senses(np.words[-1:])):
                fits = [i for i in hits if mine & set(lex.senses(lex_words(i)))]
                if fits:
                    return fits, how
        return hits, how

    def _match(self, raw: str, words: list[str], ids: list[str], plural: bool = False,
               contents: bool = False, said: str = "") -> tuple[list[str], str]:
        """The ids a phrase names, and how ("id", "type", "fuzzy", "category", "embedding", "kind").
        ``contents``: the phrase was said as a container of what it holds ("the bottle of ear
        cleaner", read "ear cleaner bottle"); ``said``: the phrase as said, with what a use is done
        to ("something to tighten this screw with", whose words stop at the verb)."""
        if not ids:
            return [], ""
        rawc = word_key(split_words(raw))
        by_id = [i for i in ids if rawc and word_key(split_words(i)) == rawc]
        if by_id:
            return by_id, "id"
        if not words:
            return [], ""
        if not self.strict:
            tools = self._by_use(words, ids, [w.lower() for w in split_words(said)] if said else words)
            if tools:                    # "something to snip this thread with": the scissors
                return tools, "kind"
        levels: dict[int, list[str]] = {3: [], 2: [], 1: [], 0: []}
        for i in ids:
            tw = type_words(i)
            if not tw:
                continue
            if word_key(tw) == word_key(words):
                levels[3].append(i)
            elif tw[-1] == words[-1] or word_key(tw) == words[-1]:
                tmods, pmods = tw[:-1], words[:-1]
                if set(tmods) <= set(pmods) or word_key(tw) == words[-1]:
                    levels[2].append(i)
                elif not pmods:
                    levels[1].append(i)
            elif len(tw) > 1 and tw[-1] in self.kb.container_heads and word_key(tw[:-1]) == word_key(words):
                levels[0].append(i)                  # "the sugar": the SugarJar
            elif any(word_key(a) == word_key(words) or (len(a) == 1 and a[0] == words[-1] and
                                                       set(words[:-1]) <= set(tw))
                     for a in self.kb.other_names(i)):
                levels[2].append(i)                  # "the torch": a flashlight, also called a torch
        for q in (3, 2, 1, 0):
            if levels[q]:
                return levels[q], "type"

        phrase = " ".join(words)
        scores = {i: max(fuzz.ratio(phrase, " ".join(type_words(i))), fuzz.ratio(word_key(words), type_key(i)))
                  for i in ids}
        best = max(scores.values())
        if best >= FUZZY_CUTOFF:
            return [i for i, s in scores.items() if s >= best - 5 and s >= FUZZY_CUTOFF], "fuzzy"
        if len(words) > 1 and words[-1] in self.kb.part_words:        # "fridge door" -> the fridge
            hits, how = self._match("", words[:-1], ids)
            if hits:
                return hits, how

        if len(words) > 1 and (word_key(words) in self.kb.known_types or word_key(words) in self.kb.type_descriptions) \
                and self.kb.category_of(words[-1:]) is not None \
                and not any(sc >= MEANING_SCORE for _, sc in self.meaning_scores(words, ids)):
            # "the butter dish": the whole phrase names a kind of its own, nothing here is of that
            # kind or close to it ("coffee machine": the espresso machine is), and its head word's
            # category ("dish") would name other kinds
            return [], "type"
        for k in range(len(words)):
            cat = self.kb.category_of(words[k:])
            if cat is None:
                continue
            if "*" in self.kb.categories[cat]:
                return list(self.pool.objects) + ([self.pool.held] if self.pool.held in ids else []), "category"
            hits = [i for i in ids if self.kb.in_category(i, cat)]
            # types no category lists may belong too, by what they are (name and description)
            strangers = [i for i in ids if type_key(i) not in self.kb.known_types
                         and (type_words(i) or [""])[-1] not in self.kb.known_types]
            more = [i for i, s in self.meaning_scores(words[k:], strangers) if s >= CATEGORY_SCORE]
            more += [i for i in strangers if i not in more and self._kind_in(i, cat)]
            if k == 0:                   # the whole phrase names the category ("the tool", not "the guest book")
                more += [i for i in ids if i not in hits and i not in more and self._is_a(i, words)]
            found = [i for i in ids if i in hits or i in more]
            if k > 0 and len({type_key(i) for i in found}) > 1:
                # "the specimen container": the modifiers may single out one kind of the category
                ranked = self.meaning_scores(words, found)
                if ranked:
                    top = max(s for _, s in ranked)
                    keep = [i for i, s in ranked if s >= top - MEANING_MARGIN]
                    if top >= MEANING_SCORE and len(keep) < len(found):
                        return keep, "embedding"
            if k > 0 and found and not self.strict:
                # "the card machine": a kind in view named far better by the whole phrase (the
                # card reader) than any member of its head's category (the desk fan)
                ranked = self.meaning_scores(words, ids)
                if ranked:
                    best = max(s for _, s in ranked)
                    mine = max((s for i, s in ranked if i in found), default=0.0)
                    other = [i for i, s in ranked if i not in found and s >= best - MEANING_MARGIN]
                    if other and best >= MEANING_SCORE and best - mine >= MEANING_MARGIN:
                        return other, "embedding"
            if found:
                return found, ("category" if hits else "embedding")
            return [], "category"

        scores = self.meaning_scores(words, ids) if not self.strict else []
        if scores:
            top, second = _best_two(scores)
            hits = [i for i, s in scores if s >= MEANING_SCORE and s >= top - MEANING_MARGIN]
            # a phrase that is itself the name of a known kind ("pear") names that kind only
            whole_kind = word_key(words) in self.kb.type_descriptions or word_key(words) in self.kb.known_types
            own_kind = whole_kind or words[-1] in self.kb.type_descriptions or words[-1] in self.kb.known_types
            if plural and top >= PLURAL_FLOOR and not own_kind:
                # "the baked goods": a plural may name several kinds (the best may have had the
                # shared-word bonus, the others not)
                floor = max(PLURAL_FLOOR, top - PLURAL_MARGIN - (WORD_BONUS if top >= 1.0 else 0.0))
                hits = [i for i, s in scores if s >= floor]
            if not hits and top >= CLEAR_SCORE and top - second >= CLEAR_MARGIN and not whole_kind:
                first = [i for i, s in scores if s == top]     # one kind far ahead of every other; a
                # phrase whose head is a known kind names one of that kind ("the icing bag": the
                # piping bag), not another ("the bowling ball" is no bowling pin); nor one whose
                # contents the phrase names ("the bottle of ear cleaner" is no shampoo bottle)
                if not own_kind or (not contents and all((type_words(i) or [""])[-1] == words[-1] for i in first)):
                    hits = first
            if hits and len(words) == 1:
                # "the cheese": not the cheese knife, whose name only carries the word and which
                # WordNet says is no cheese; and every kind of cheese in view, the brie, the gouda
                kinds = [i for i in ids if self._is_a(i, words)]
                if kinds:
                    keep = [i for i in hits if not (words[0] in type_words(i)[:-1] and self._is_a(i, words) is False)]
                    hits = keep + [i for i in kinds if i not in keep]
            if hits:
                return hits, "embedding"
        kinds = [i for i in ids if self._is_a(i, words)]
        if kinds:                        # "the cloth": no name says it, but a rag is a kind of cloth
            return kinds, "kind"
        close = [i for i in ids if self._is_a(i, words, close=True)]
        if close:                        # "the biro": a kind of pen, the nearest the robot knows it by
            return close, "kind"
        if words and not any(w in self.kb.function_words for w in words):
            lex = load_lexicon()         # "the torch": a flashlight, in the word's third sense
            same = [i for i in ids if lex.shares_a_sense(type_words(i), words)]
            if same:
                return same, "kind"
        return self._by_head(words, ids), "kind"

    def _by_use(self, words: list[str], ids: list[str], said: list[str]) -> list[str]:
        """The types WordNet files under the instruments of a use: "something to snip this thread
        with", "the thing I write with", "a gadget for sharpening" name a cutting implement, a
        writing implement, a sharpener (instrument_nouns). Else the kinds WordNet defines as made
        for the use (wordnet_uses.tsv.gz: "broom: ... for sweeping"), or else for what the use is
        done to in ``said`` ("something to tighten this screw with": "screwdriver: ... for driving
        screws")."""
        verb = used_verb(words, self.kb)
        if verb is None:
            return []
        lex = load_lexicon()
        nouns, heads = instrument_nouns(verb, self.kb), agent_heads(verb, self.kb)
        found = [i for i in ids if (type_words(i) or [""])[-1] in heads or any(lex.is_a(lex_words(i), n) for n in nouns)]
        if found:
            return found
        if not done_with(said, verb):    # "something to eat": the food, not the cutlery
            return []
        # no instrument noun: the kinds WordNet defines as made for the use ("something to sweep
        # the floor with": "broom: a cleaning implement for sweeping"), the verb's own forms first
        uses = load_uses()
        for verbs in (_verb_forms(verb), _use_verbs(verb, self.kb)):
            found = [i for i in ids if uses.made_for(lex, lex_words(i), verbs)]
            if found:
                return found
        thing = use_object(said, verb, self.kb)
        if thing:                        # "something to tighten this screw with": "screwdriver: a
            #                              hand tool for driving screws", whatever the verb
            return [i for i in ids if uses.made_for_object(lex, lex_words(i), thing)]
        return []

    def _by_head(self, words: list[str], ids: list[str]) -> list[str]:
        """The last resort for a plain phrase: what its own words name by WordNet. The same sense
        as what a type holds or is made of ("a serviette": the napkin stack); and for a phrase whose
        modifiers nothing here has ("the change tray", "the little brass bell", "the cast iron
        pot"), the types with its head noun (the coin tray) or of its head's kind (the teapot).
        Nothing when the whole phrase is a kind WordNet knows ("the wine glass" is no tumbler),
        when its modifiers name a thing other than a substance ("the contact lens case" is no
        glasses case), nor for a container whose contents it names ("the bottle of ear cleaner")."""
        if not words or any(w in self.kb.function_words for w in words):
            return []
        lex = load_lexicon()
        same = [i for i in ids if len(type_words(i)) > 1 and lex.names_a_kind_of(type_words(i)[:-1], words, steps=0)]
        if same or len(words) < 2 or lex.senses(words, whole=True):
            return same
        named = lex.senses(words[:-1])
        if named and (words[-1] in self.kb.container_heads or not lex.is_a(words[:-1], ["substance"])):
            return []
        head = words[-1]
        hits = [i for i in ids if (type_words(i) or [""])[-1] == head]
        return hits or [i for i in ids if lex.is_a(type_words(i), [head])]

    def _is_a(self, i: str, words: list[str], close: bool = False) -> bool | None:
        """Whether WordNet says the id's type is a kind of what a plain noun phrase names ("the
        tool", "the cloth"; ``close``: the phrase names a close kind of the type, "the biro");
        None when it cannot say, or for a phrase with a purpose or a clause ("the thing for drying
        hair"), whose last word is not what it names."""
        if not words or any(w in self.kb.function_words for w in words):
            return None
        lex = load_lexicon()
        return lex.names_a_kind_of(lex_words(i), words) if close else lex.is_a(lex_words(i), words)

    def _kind_in(self, i: str, cat: str) -> bool:
        """Whether what a type's description says it is belongs to the category: "pruning shears:
        strong scissors for ..." -> scissors, a tool; "scone: a small baked cake" -> cake, food."""
        desc = self.kb.type_descriptions.get(type_key(i))
        if not desc:
            return False
        genus = _genus(" ".join(type_words(i)), f"x: {desc}").split()[1:]
        while len(genus) > 1 and genus[-1].endswith("ed"):
            genus = genus[:-1]           # "a small cake baked in a cup": the cake
        members = self.kb.categories[cat]
        heads = [singular(w) for w in split_words(" ".join(genus[-2:]))]
        return any(w in members or self.kb.category_aliases.get(w) == cat for w in heads[-1:]) or \
            (len(heads) > 1 and (word_key(heads) in members or self.kb.category_aliases.get(word_key(heads)) == cat))

    def closest(self, np: NP, ids: list[str], n: int = 3) -> list[str]:
        """The ``n`` ids whose types come closest to the phrase (by meaning, else by spelling)."""
        scores = self.meaning_scores(np.words, ids) or \
            [(i, fuzz.ratio(" ".join(np.words), " ".join(type_words(i))) / 100.0) for i in ids]
        return [i for i, _ in sorted(scores, key=lambda x: -x[1])[:n]]

    def meaning_scores(self, words: list[str], ids: list[str]) -> list[tuple[str, float]]:
        """How well a phrase names each id's type: the sentence-embedding similarity of the phrase
        to the type's name or to "<name>: <description>" (the higher), plus WORD_BONUS when every
        content word of the phrase occurs in that text ("something to write with" -> "pen: a
        writing instrument ..."). Empty when embeddings are off or not loaded in time."""
        if not self.use_embeddings or not ids or not words:
            return []
        types = sorted({type_of(i) for i in ids})
        names = [" ".join(type_words(t)) or t for t in types]
        texts = [self.kb.type_text(t) for t in types]
        phrase = " ".join(words)
        sims = embedding.similarities(phrase, names + texts, deadline=self.deadline)
        if sims is None:
            if embedding.unavailable_reason() is None:
                self.notes.append("no time to load the embedding model")
            return []
        by_type = {t: meaning_score(self.kb, words, names[n], texts[n], float(sims[n]), float(sims[len(types) + n]))
                   for n, t in enumerate(types)}
        return [(i, by_type[type_of(i)]) for i in ids]

    # ------------------------------------------------------------------ objects
    def ground(self, np: NP, *, exclude_held: bool = False) -> Grounding:
        ids = [i for i in self.pool.entities if not (exclude_held and i == self.pool.held)]
        base, how = self.match_name(np, ids)
        if not base and np.clause:       # "the cupboard where the chemicals are stored": the whole phrase
            base, how = self._match(np.raw, np.words + [singular(w) for w in split_words(np.clause)], ids)
        if not base and "of" in np.words[1:-1]:
            base, how = self._measure_of(np.words, ids)
        if not base and how == "category":
            base, waiting = self._by_property(np.words, ids)
            if waiting:
                return Grounding("pending", how="property")
            how = "property" if base else how
        dropped: list = []
        if not base and np.attributive:  # "the baked goods": the state word is part of the name
            words = [w for st in np.attributive for w in split_words(st.word)] + np.words
            base, how = self._match(" ".join(words), words, ids, plural=len(np.words) > 0 and
                                    (split_words(np.raw) or [""])[-1].lower() != np.words[-1])
            dropped = list(np.attributive) if base else []
        if not base and np.alt is not None:  # "open the pellets, the blue tub": the other name
            return self.ground(np.alt, exclude_held=exclude_held)
        if not base:
            return Grounding("none", how=how)
        cands = list(base)
        reasons: list[str] = []
        facts: list[str] = []
        pending = False

        for q in np.quals:
            if q.superlative or q.position or q.ref is None:
                continue
            ref = self.ground(q.ref)
            if ref.status == "none" and self.pool.people:     # "the mug on the right of Kenji"
                person = self.ground_person(q.ref)
                if person.status in ("one", "several"):
                    ref = person
            if ref.status == "pending":
                pending = True
                continue
            if ref.status == "none" and not self.pool.people and _names_someone(q.ref, self.kb):
                # "right of Kenji" with no person in view to measure from: it cannot narrow the choice
                note = f"\"{q.phrase} {q.ref.raw}\" was not checked: {q.ref.raw} is not among what is in view"
                if note not in self.notes:
                    self.notes.append(note)
                continue
            if ref.status == "none" and self._plain(q.ref):
                loose = self._loose_ref(q.ref, cands)
                if loose:                # "the lemon next to the hotplate": the griddle, by meaning
                    ref = Grounding.of(loose, how="embedding")
                    note = f"\"{q.ref.raw}\" was taken to be {join_ids(loose, 'or')}, the closest in meaning"
                    if note not in self.notes:
                        self.notes.append(note)
            named = [c for c in cands if q.ref.words and word_key(type_words(c)) == word_key(q.ref.words + np.words)]
            if named and (ref.status == "none" or set(ref.ids) <= set(named)):
                # "the shelf on the wall": a wall shelf, the place is in its name (the wall, if
                # found at all, is the shelf itself)
                facts.append(f"{join_ids(named)} {'is' if len(named) == 1 else 'are'} the {np.head_text} {q.phrase} "
                             f"the {q.ref.head_text}")
                cands = named
                continue
            if ref.status == "none":
                return Grounding("none", base=base, how=how, missing_ref=q.ref, reasons=ref.reasons)
            keep, waiting = self._relation_filter(cands, q.relations, ref.ids, q.inverse)
            if waiting:
                pending = True
                continue
            if keep is None:
                self.notes.append(f"could not check which candidates are {q.phrase} {join_ids(ref.ids, 'or')}")
                continue
            refs = join_ids(ref.ids, "or")
            rel_text = " or ".join(q.relations) if not q.inverse else q.phrase
            holds = [c for c in cands if c in keep]
            others = [c for c in cands if c not in keep]
            if q.negated:                # "not next to the bowl": those the relation does not hold for
                keep, dropped, yes, no = others, holds, "", "not "
            else:
                keep, dropped, yes, no = holds, others, "not ", ""
            if dropped:
                reasons.append(f"{join_ids(dropped)} {'is' if len(dropped) == 1 else 'are'} {yes}{rel_text} {refs}")
            if keep:
                facts.append(f"{join_ids(keep)} {'is' if len(keep) == 1 else 'are'} {no}{rel_text} {refs}")
            cands = keep

        before_states = list(cands)
        self.notes += [n for n in np.notes if n not in self.notes]
        states = [st for st in np.states if not any(st is d for d in dropped)]
        for st in [st for st in states if st.key == "colour" and st.value]:
            named = [c for c in cands if word_key(type_words(c)) == word_key(split_words(st.word) + np.words)]
            if named:                    # "the spruce wedge": the colour word is part of a type's name
                states.remove(st)
                cands = named
        guessed = self._clause_state(np) if np.clause and len(cands) > 1 else None
        if guessed is not None:
            states.append(guessed)
        elif np.clause:
            note = f"\"{np.clause}\" was not checked: no tool answers it"
            if note not in self.notes:
                self.notes.append(note)
        emptied_by = None
        for st in states:
            if st.key == "colour":
                keep, waiting, why = self._colour_filter(cands, st)
            else:
                keep, waiting, why = self._state_filter(cands, st)
            if waiting:
                pending = True
                continue
            if keep is None:
                continue
            reasons += why
            if not keep and cands:
                emptied_by = st.key
            if keep:
                shown = st.colour if st.key == "colour" and st.value else \
                    self.kb.text["state_words"].get(st.key, {}).get(str(st.value).lower(), st.word)
                facts.append(f"{join_ids(keep)} {'is' if len(keep) == 1 else 'are'} {shown}")
            cands = keep

        liquid = self._liquid_named(np) if len(cands) > 1 and not states else None
        if liquid is not None:           # "the cup of water": of several cups, the filled ones
            keep, waiting, _ = self._state_filter(cands, StateQual("filled", True, "filled", False))
            pending |= waiting
            if keep and len(keep) < len(cands):
                facts.append(f"{join_ids(keep)} {'is' if len(keep) == 1 else 'are'} filled (\"of {liquid}\")")
                cands = keep

        if (np.personal or np.owner) and len(cands) > 1 and self.obs.has("retrieve_user_information"):
            about = f"{np.owner}'s {np.head_text}" if np.owner else f"the user's {np.text}"
            a = self.obs.get("retrieve_user_information", about)
            pending |= a.pending
            answer = a.data.get("answer") if a.ok and isinstance(a.data, dict) else (a.data if a.ok else None)
            if isinstance(answer, str):
                said = {singular(w) for w in split_words(answer)}
                hits = [c for c in cands if set(type_words(c)) <= said]
                if hits and len(hits) < len(cands):
                    facts.append(f"what is known about the user (\"{answer.strip()}\") points to {join_ids(hits)}")
                    cands = hits

        for q in np.quals:
            if not q.position or len(cands) < 2:
                continue
            keep, waiting = self._position(cands, q.relations[0])
            if waiting:
                pending = True
            elif keep:
                facts.append(f"{join_ids(keep)} is the one {q.phrase}")
                cands = keep

        for q in np.quals:
            if not q.superlative:
                continue
            keep, waiting, fact = self._superlative(cands, q)
            if waiting:
                pending = True
                continue
            if keep is not None:
                cands = keep
                if fact:
                    facts.append(fact)

        if pending:
            return Grounding("pending", base=base, how=how)
        g = Grounding.of(cands, base=base, how=how, reasons=reasons, facts=facts)
        if not cands and before_states and emptied_by != "colour":
            # a state may change ("the clean mug": the mugs are all dirty); a colour does not: no
            # yellow paint here is something absent, not a paint in the wrong state
            g.state_only = True
            g.base = before_states
        return g

    def _liquid_named(self, np: NP) -> str | None:
        """"the cup of water", "the glass of juice": the liquid a vessel is named by (WordNet: a
        liquid, a fluid, a beverage or a solution), which says the vessel holds some; None otherwise ("the box of
        matches", "the bottle of ear cleaner" named so by its kind: only among several alike is
        the one filled taken)."""
        toks = split_words(np.text.lower())
        if "of" not in toks[1:-1]:
            return None
        liquid = [singular(w) for w in toks[toks.index("of") + 1:] if w not in self.kb.function_words]
        if not liquid or len(liquid) > 2:
            return None
        lex = load_lexicon()
        return " ".join(liquid) if lex.under_any(liquid, [["liquid"], ["fluid"], ["beverage"], ["solution"]]) else None

    def _by_property(self, words: list[str], ids: list[str]) -> tuple[list[str], bool]:
        """"the appliance that's running", "the gadget that's off": where no type in view is a
        listed member of the category, the objects perception reports the category's property for
        (categories.yaml ``property``: the kiln and the glass grinder are toggleable). (ids, still
        waiting for get_obj_properties)."""
        cat = self.kb.category_of(words)        # the whole phrase: not "the slushie machine"
        prop = self.kb.category_properties.get(cat or "")
        if prop is None or not self.obs.has("get_obj_properties"):
            return [], False
        keep, waiting = [], False
        for i in ids:
            if i in self.pool.people:
                continue
            a = self.obs.get("get_obj_properties", i)
            waiting |= a.pending
            entry = entry_for(a.data, "object", i) if a.ok else None
            props = entry.get("properties") if isinstance(entry, dict) else entry
            if isinstance(props, list) and prop in props:
                keep.append(i)
        return ([], True) if waiting else (keep, False)

    def _measure_of(self, words: list[str], ids: list[str]) -> tuple[list[str], str]:
        """"the slab of wax", "the strip of hide", "the can of switch cleaner": a piece, a length or
        a container of something, where the whole phrase names nothing here. Read as English also
        says it, the head after what it is of ("the wax slab", "the switch cleaner can"), else what
        it is of alone (any kind of it: "the frame of comb" is one of the honeycombs)."""
        k = words.index("of", 1)
        head, of = words[k - 1:k], words[k + 1:]
        if not of or "of" in of:
            return [], ""
        hits, how = self._match(" ".join(of + head), of + head, ids)
        if hits:
            return hits, how
        return self._match(" ".join(of), of, ids, plural=True)

    def _plain(self, ref: NP) -> bool:
        """A reference that is a plain noun phrase: no qualifier of its own, not a person."""
        return not ref.quals and bool(ref.words) and not self.is_personish(ref)

    def _loose_ref(self, ref: NP, cands: list[str]) -> list[str]:
        """A reference no name grounds ("next to the hotplate", "right of the cleaning tank"),
        read as a person would: the one kind of object in view, other than the candidates, that
        comes clearly closest in meaning (REF_SCORE, REF_MARGIN). The relation is still checked."""
        others = [i for i in self.pool.objects if i not in cands]
        scores = self.meaning_scores(ref.words, others)
        if not scores:
            return []
        top, second = _best_two(scores)
        if top < REF_SCORE or top - second < REF_MARGIN:
            return []
        return [i for i, s in scores if s == top]

    def _clause_state(self, np: NP) -> StateQual | None:
        """The state a clause no qualifier reads says: a state word in it ("that got dirty at
        lunch"), else by sentence embedding against each state's "means" (language.yaml;
        "needs washing": not clean); None when unsure."""
        toks = split_words(np.clause.lower())
        for k in range(len(toks)):
            sw = next((x for x in self.kb.states if tuple(toks[k:k + len(x.phrase)]) == x.phrase
                       and not (len(x.phrase) == 1 and x.phrase[0] in self.kb.predicate_only_states)), None)
            if sw is not None:
                neg = any(t in self.kb.negations or t.endswith("n't") for t in toks[max(0, k - 2):k])
                self.notes.append(f"\"{np.clause}\" says {' '.join(sw.phrase)}")
                return StateQual(sw.key, sw.value != neg, " ".join(sw.phrase), sw.nothing_inside)
        meanings = self.kb.state_meanings
        if not self.use_embeddings or not meanings:
            return None
        sims = embedding.similarities(np.clause, [m[3] for m in meanings], deadline=self.deadline)
        if sims is None or not len(sims):
            return None
        # the clause's own words in a meaning count too ("needs washing": "... needs washing")
        content = {w for w in split_words(np.clause.lower()) if w not in self.kb.function_words}
        if content:
            sims = [float(sims[k]) + CLAUSE_WORD_BONUS * len(content & set(split_words(meanings[k][3].lower())))
                    / len(content) for k in range(len(meanings))]
        order = sorted(range(len(meanings)), key=lambda k: -float(sims[k]))
        best = order[0]
        second = float(sims[order[1]]) if len(order) > 1 else -1.0
        if float(sims[best]) < CLAUSE_SCORE or float(sims[best]) - second < CLAUSE_MARGIN:
            return None
        key, value, nothing_inside, _ = meanings[best]
        word = self.kb.text["state_words"].get(key, {}).get(str(value).lower(), key)
        self.notes.append(f"\"{np.clause}\" reads as {word}")
        return StateQual(key, value, word, nothing_inside)

    def _relation_filter(self, cands: list[str], relations: tuple[str, ...], refs: list[str],
                         inverse: bool) -> tuple[list[str] | None, bool]:
        """(candidates that hold the relation, still waiting); None when no answer came."""
        waiting, answered = False, False
        if not inverse:
            related: set[str] = set()
            for r in refs:
                for rel in relations:
                    a = self.obs.get("check_obj_relationship", rel, r)
                    if a.pending:
                        waiting = True
                    elif a.ok and related_ids(a.data, r) is not None:
                        answered = True
                        related |= set(related_ids(a.data, r))
            if waiting:
                return None, True
            return ([c for c in cands if c in related] if answered else None), False
        keep = []
        for c in cands:
            if c == self.pool.held:
                continue
            hit = False
            for rel in relations:
                a = self.obs.get("check_obj_relationship", rel, c)
                if a.pending:
                    waiting = True
                elif a.ok and related_ids(a.data, c) is not None:
                    answered = True
                    hit = hit or bool(set(refs) & set(related_ids(a.data, c)))
            if hit:
                keep.append(c)
        if waiting:
            return None, True
        return (keep if answered else None), False

    def _position(self, cands: list[str], relation: str) -> tuple[list[str] | None, bool]:
        """The candidates no other candidate is <relation> (e.g. the leftmost)."""
        keep, waiting = [], False
        for c in cands:
            if c == self.pool.held:
                continue
            a = self.obs.get("check_obj_relationship", relation, c)
            waiting |= a.pending
            rel = related_ids(a.data, c) if a.ok else None
            if rel is not None and not set(rel) & (set(cands) - {c}):
                keep.append(c)
        return (None, True) if waiting else (keep, False)

    def _state_filter(self, cands: list[str], st) -> tuple[list[str] | None, bool, list[str]]:
        """(candidates in the state, still waiting, why the others are not)."""
        values: dict[str, bool | None] = {}
        waiting = False
        for c in cands:
            a = self.obs.get("get_obj_state", c)
            waiting |= a.pending
            entry = entry_for(a.data, "object", c) if a.ok else None
            state = entry.get("state") if isinstance(entry, dict) else None
            v = state.get(st.key) if isinstance(state, dict) else None
            values[c] = v if isinstance(v, bool) else None
            if st.nothing_inside and c != self.pool.held:
                b = self.obs.get("check_obj_relationship", "inside", c)
                waiting |= b.pending
                if b.ok:
                    self.contents[c] = related_ids(b.data, c) or []
        if waiting:
            return None, True, []
        if not st.nothing_inside and all(v is None for v in values.values()):
            self.notes.append(f"no state '{st.key}' is known for {join_ids(cands)}, so '{st.word}' was not checked")
            return None, False, []

        def holds(c: str) -> bool:
            if st.nothing_inside:
                return not self.contents.get(c) and values.get(c) is not True
            return values.get(c) is st.value

        keep = [c for c in cands if holds(c)]
        words = self.kb.text["state_words"].get(st.key, {})
        why = []
        for c in cands:
            if c in keep:
                continue
            if self.contents.get(c):
                why.append(f"{c} contains {join_ids(self.contents[c])}")
            elif values.get(c) is None:
                why.append(f"the state of {c} is unknown")
            else:
                why.append(f"{c} is {words.get(str(values[c]).lower(), st.key)}")
        return keep, False, why

    def _colour_filter(self, cands: list[str], st) -> tuple[list[str] | None, bool, list[str]]:
        """(candidates of the colour, still waiting, why the others are not): the colour perception
        measured (get_obj_properties "colour"); a near colour (colour_names.yaml) counts only when
        no candidate has the colour itself. A shade of the colour survey ("mauve", "celadon") is
        compared with the measured RGB itself, when every candidate reports one: the candidates
        nearest to the shade (within SHADE_MARGIN of the nearest), if that is near enough."""
        seen: dict[str, str | None] = {}
        rgb: dict[str, list[float]] = {}
        waiting = False
        for c in cands:
            a = self.obs.get("get_obj_properties", c)
            waiting |= a.pending
            entry = entry_for(a.data, "object", c) if a.ok else None
            colour = entry.get("colour") if isinstance(entry, dict) else None
            seen[c] = colour if isinstance(colour, str) and colour else None
            v = entry.get("rgb") if isinstance(entry, dict) else None
            if isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in v):
                rgb[c] = v
        if waiting:
            return None, True, []
        if all(v is None for v in seen.values()):
            self.notes.append(f"no colour is reported for {join_ids(cands)}, so '{st.word}' was not checked")
            return None, False, []
        said = st.word.split()
        shade = self.kb.colour_shades.get(" ".join(said[-2:])) or self.kb.colour_shades.get((said or [""])[-1])
        if shade is not None and len(rgb) == len(cands):
            cost = {c: colour_cost(rgb[c], shade) for c in cands}
            best = min(cost.values())
            near = [c for c in cands if best <= SHADE_MAX and cost[c] <= best + SHADE_MARGIN]
            keep = near if st.value else [c for c in cands if c not in near]
            word = " ".join(said[-2:]) if " ".join(said[-2:]) in self.kb.colour_shades else said[-1]
            why = [f"{c} is {seen[c] or 'of another colour'}, not {word}" if st.value else f"{c} is {word}"
                   for c in cands if c not in keep]
            return keep, False, why
        if st.value:
            keep = [c for c in cands if seen[c] == st.colour]
            if not keep:
                near = self.kb.colour_near.get(st.colour or "", frozenset())
                keep = [c for c in cands if seen[c] in near]
            ref = self.kb.colour_refs.get(st.colour or "")
            if not keep and ref is not None and len(rgb) == len(cands):
                # a close call of perception's naming ("orange" measured as red): the measured
                # colour is about as near the asked colour's reference as the reported one's
                keep = [c for c in cands if seen[c] in self.kb.colour_refs and colour_cost(rgb[c], ref)
                        <= colour_cost(rgb[c], self.kb.colour_refs[seen[c]]) + BORDER_MARGIN]
                for c in keep:
                    note = f"{c} was reported {seen[c]}, about as close to {st.colour}"
                    if note not in self.notes:
                        self.notes.append(note)
        else:
            keep = [c for c in cands if seen[c] is not None and seen[c] != st.colour]
        why = [f"{c} is {seen[c]}" if seen[c] else f"the colour of {c} is unknown" for c in cands if c not in keep]
        return keep, False, why

    def _superlative(self, cands: list[str], q) -> tuple[list[str] | None, bool, str]:
        dist: dict[str, float] = {}
        waiting = False
        if q.ref is None:
            tool = self.distance_tool
            if tool is None:
                return None, False, ""
            for c in cands:
                a = self.obs.get(tool, c)
                waiting |= a.pending
                d = distance_of(entry_for(a.data, "target", c)) if a.ok else None
                if d is not None:
                    dist[c] = d
            what = "the robot"
        else:
            ref = self.ground(q.ref)
            if ref.status == "pending":
                return None, True, ""
            if ref.status == "none":
                return None, False, ""
            for c in cands:
                for r in ref.ids:
                    if r == c:
                        continue
                    a = self.obs.get("dist_between_objs", r, c)
                    waiting |= a.pending
                    d = distance_of(a.data if not isinstance(a.data, list) else (a.data[0] if a.data else None)) if a.ok else None
                    if d is not None:
                        dist[c] = min(d, dist.get(c, d))
            what = join_ids(ref.ids, "or")
        if waiting:
            return None, True, ""
        if not dist:
            return None, False, ""
        best = (min if q.superlative == "min" else max)(dist.values())
        keep = [c for c in cands if c in dist and abs(dist[c] - best) <= TIE_M]
        others = ", ".join(f"{c} {dist[c]:.2f} m" for c in cands if c in dist and c not in keep)
        word = "closest to" if q.superlative == "min" else "farthest from"
        fact = f"{join_ids(keep)} is the one {word} {what} ({best:.2f} m{'; ' + others if others else ''})"
        return keep, False, fact

    # ------------------------------------------------------------------ people
    def is_personish(self, np: NP) -> bool:
        return person_phrase(np, self.kb)

    def ground_person(self, np: NP, person_hint: str | None = None,
                      role_names: dict[str, str] | None = None) -> Grounding:
        people = self.pool.people
        if not people:
            return Grounding("none", how="name")
        rawc = word_key(split_words(np.raw))
        by_id = [p for p in people if word_key(split_words(p)) == rawc]
        if by_id:
            return Grounding.of(by_id, base=by_id, how="id")
        name_words = [w for w in np.words if w not in self.kb.person_words and w not in self.kb.person_pronouns]
        if not name_words:
            ids = list(people)
            return Grounding.of(ids, base=ids, how="name")
        wanted = {word_key(name_words), *name_words}
        hits = []
        for pid, name in people.items():
            if not name:
                continue
            nw = [w.lower() for w in split_words(name)]
            forms = set(nw) | {singular(w) for w in nw}      # "Ines" is said "ines", read "ine"
            if word_key(nw) in wanted or forms & set(name_words) or \
                    max(fuzz.ratio(word_key(nw), w) for w in wanted) >= FUZZY_CUTOFF:
                hits.append(pid)
        if hits:
            return Grounding.of(hits, base=hits, how="name")
        role = role_words(np, self.kb)
        said = next((role_names[singular(w)] for w in reversed(role) if singular(w) in (role_names or {})), None)
        if said is not None:             # "Hana is the receptionist": the receptionist is whom face recognition calls Hana
            named = [p for p, n in people.items() if n and said in {w.lower() for w in split_words(n)}]
            if named:
                return Grounding.of(named, base=named, how="name",
                                    facts=[f"the user said the {' '.join(role)} is {said.capitalize()}: {join_ids(named)}"])
        if role:                         # "the customer", "the person waiting": a role, not a name;
            ids = list(people)           # face recognition gives names only, so anyone present
            return Grounding.of(ids, base=ids, how="role",
                                facts=[f"\"{' '.join(role)}\" is not a name face recognition gives; "
                                       f"the people present: {join_ids(ids)}"])
        unknown = [p for p, n in people.items() if not n]
        if person_hint and (person_hint in wanted or any(fuzz.ratio(person_hint, w) >= FUZZY_CUTOFF for w in wanted)) \
                and len(unknown) == 1:
            self.notes.append(f"{unknown[0]} is not recognised, but the person said they are {person_hint.capitalize()}")
            return Grounding.of(unknown, base=unknown, how="name",
                                facts=[f"{unknown[0]} identified themselves as {person_hint.capitalize()}"])
        return Grounding("none", how="name", unknown_person=" ".join(name_words))


_GENERIC_HEADS = frozenset({"something", "anything", "thing", "tool", "gadget", "device", "implement", "utensil",
                            "instrument", "contraption", "gizmo", "one"})
_INSTRUMENT_HEADS = ("implement", "tool", "device", "instrument", "machine")


def used_verb(words: list[str], kb: Knowledge) -> str | None:
    """The verb of a phrase that names a thing by its use, after a head that says nothing of what
    it is: "something to snip ...", "the thing I press the seams with", "a gadget for checking ...",
    "the thing that's projecting ..."."""
    if len(words) > 1 and words[0] in ("is", "s", "are") and words[1].endswith("ing") and len(words[1]) > 5:
        return words[1]                  # "the thing that's projecting onto the wall" (its head and
        #                                  "that" are left out of the words)
    if len(words) < 3 or singular(words[0]) not in _GENERIC_HEADS:
        return None
    k, nxt = words[1], words[2]
    if k in kb.subject_pronouns:         # "something I can turn the sausages with": past the auxiliary
        from .query import _AUX
        nxt = next((w for w in words[2:] if w not in _AUX), "")
    if k == "to" or k in kb.subject_pronouns:
        return nxt if nxt.isalpha() and nxt not in kb.function_words else None
    if k == "for" and nxt.endswith("ing") and len(nxt) > 5:
        return nxt
    return None


def instrument_nouns(verb: str, kb: Knowledge) -> list[list[str]]:
    """The nouns WordNet has for an instrument of a verb: "<verb>ing implement/tool/device/
    instrument" and the agent noun "<verb>er" ("cutting implement", "sharpener", "duster"), for
    the verb and for the knowledge's verbs of the action WordNet reads it as ("snip": a way to cut)."""
    lex = load_lexicon()
    out: list[list[str]] = []
    for v in _use_verbs(verb, kb):
        stem = [v, v[:-1]] if v.endswith("e") else [v, v + v[-1]]
        for g in dict.fromkeys(s + "ing" for s in stem):
            out += [[g, n] for n in _INSTRUMENT_HEADS if lex.senses([g, n], whole=True)]
        for a in _agent_nouns(v):
            if lex.senses([a], whole=True) and not lex.any_sense_under([a], [["person"]], senses=1):
                out.append([a])          # "sharpener", "duster"; not "writer", "sniper"
    return out


def agent_heads(verb: str, kb: Knowledge) -> set[str]:
    """The agent nouns of a use's verbs as a type's head may carry them, whatever WordNet's first
    sense of the word ("pizza cutter", "bottle opener", "pencil sharpener")."""
    return {a for v in _use_verbs(verb, kb) for a in _agent_nouns(v)}


def _agent_nouns(v: str) -> list[str]:
    """"cut" -> cuter, cutter; "slice" -> slicer; "project" -> projector, "generate" -> generator."""
    if v.endswith("e"):
        return [v + "r", v[:-1] + "or"]
    return list(dict.fromkeys([v + "er"] + ([v + v[-1] + "er"] if v[-1] not in "aeiouwxy" else []) + [v + "or"]))


_USE_END = frozenset({"with", "on", "in", "into", "onto", "off", "from", "at", "by", "to", "for", "over", "out", "up"})


def done_with(words: list[str], verb: str) -> bool:
    """Whether a use phrase names what the use is done with, not what it is done to: the verb has
    an object or a preposition after it ("something to sweep the floor with", "something I can
    drink out of"), not "something to eat", "something to ring"."""
    return verb in words and words.index(verb) + 1 < len(words)


def use_object(words: list[str], verb: str, kb: Knowledge) -> str | None:
    """The head noun of what a use is done to: "something to tighten this screw with" -> screw,
    "something to check the tyre pressure with" -> pressure; None when the verb takes nothing."""
    if verb not in words:
        return None
    after = []
    for w in words[words.index(verb) + 1:]:
        if w in _USE_END:
            break
        after.append(w)
    content = [w for w in after if w.isalpha() and w not in kb.function_words and w not in kb.determiners]
    return singular(content[-1]) if content else None


def _a(noun: str) -> str:
    """The noun with its indefinite article: "a broom", "an apron"."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _verb_forms(verb: str) -> list[str]:
    """The verb as said, or the base forms of one in -ing ("sweeping" -> sweep, sweepe)."""
    from .query import _verb_bases
    return _verb_bases(verb) if verb.endswith("ing") else [verb]


def _use_verbs(verb: str, kb: Knowledge) -> list[str]:
    """The verb (its base forms for one in -ing) and the one-word verbs of the action the
    knowledge or WordNet reads it as ("snip" -> cut, slice, chop ...)."""
    senses = load_verb_senses()
    bases = [b for b in _verb_forms(verb) if senses.sense(b) or kb.action_for_verb(b)] if verb.endswith("ing") else [verb]
    wordnet_actions = kb.verbs_of(kb.wordnet_verb_actions)
    verbs = list(bases)
    for b in bases:
        action = kb.action_for_verb(b) or senses.action_of(b, wordnet_actions)
        if action in kb.actions:
            verbs += [v[0] for v in kb.actions[action].verbs if len(v) == 1]
    return [v for v in dict.fromkeys(verbs) if len(v) >= 3 and v.isalpha() and not v.endswith("object")]


def use_description(words: list[str], kb: Knowledge, n: int = 3, said: list[str] | None = None) -> str | None:
    """What a phrase naming a thing by its use asks for, in WordNet's words, with kinds the
    knowledge describes as examples: "something to write with" -> "a writing implement such as a
    crayon, a pen or a pencil"; None for other phrases. ``said``: the phrase's words as said, past
    the verb ("something to sweep the floor with" -> "a broom")."""
    verb = used_verb(words, kb)
    nouns = instrument_nouns(verb, kb) if verb else []
    lex = load_lexicon()
    if not nouns and verb and done_with(said or words, verb):   # "something to sweep with": "a broom", as WordNet defines one
        made = [x for x in load_uses().names(lex, _verb_forms(verb)) if word_key(x.split()) in kb.type_descriptions][:n]
        if made:
            return ", ".join(_a(x) for x in made[:-1]) + (" or " if len(made) > 1 else "") + _a(made[-1])
    if not nouns:
        return None
    one = [t for t in kb.type_descriptions if t.isalpha() and lex.senses([t], whole=True) and
           not lex.senses([t + "s"], whole=True)]      # "scissor" is said "scissors"
    first = f"a {' '.join(nouns[0])}"
    for k, noun in enumerate(nouns):
        kinds = [t for t in one if lex.is_a([t], noun) and [t] != noun][:n]   # not "a heater such as a heater"
        if kinds:                        # "a duster or a cleaning implement such as a broom, ..."
            listed = ", ".join(f"a {x}" for x in kinds[:-1]) + (" or " if len(kinds) > 1 else "") + f"a {kinds[-1]}"
            return (f"{first} or " if k else "") + f"a {' '.join(noun)} such as {listed}"
    return first


def _names_someone(np: NP, kb: Knowledge) -> bool:
    """A bare capitalised name that is no object type ("Kenji", "Priya")."""
    toks = np.raw.split()
    return len(toks) == 1 and toks[0][:1].isupper() and toks[0][1:].islower() and bool(np.words) \
        and word_key(np.words) not in kb.type_descriptions and word_key(np.words) not in kb.known_types \
        and kb.category_of(np.words) is None


def role_words(np: NP, kb: Knowledge) -> list[str]:
    """The words of a person phrase that say what someone is or does rather than who ("the
    customer", "the dentist", "the person waiting"): [] when a word could be a name. The head is a
    person word or a role noun (person_nouns.txt), the other words are no capitalised names."""
    words = np.words

    def role(w: str) -> bool:            # "climber": a vine first, a person second (WordNet)
        return _is_person_noun(w, kb)
    if not words or not (words[-1] in kb.person_words or role(words[-1]) or (set(words) & kb.person_words)):
        return []
    raw = np.raw.split()
    if any(t[:1].isupper() for t in raw[1:]) or (len(raw) == 1 and raw[0][:1].isupper()):
        return []                        # "the visitor Hana", "Baker": a name
    # the head: the first person word or role noun; what follows it describes what the person
    # does ("the guest waiting for a manicure", "the person who's waiting")
    h = next((k for k, w in enumerate(words) if w in kb.person_words or (w not in kb.function_words and role(w))),
             len(words) - 1)
    after = words[h + 1:]
    if after and not (after[0].endswith(("ing", "ed")) or after[0] in kb.function_words or after[0] == "s"):
        after = None                     # "guest book": the person word modifies an object
    head = words[:h + 1] if after is not None else words
    rest = [w for w in head if w not in kb.person_words and w not in kb.person_pronouns]
    # "the account holder", "the hotel guest": a noun before the head says which kind of person;
    # one joined to it as an id ("adriana_user") is a name
    modifiers = set(head[:-1]) if "_" not in np.raw else set()
    if any(not role(w) and not w.endswith(("ing", "ed")) and w not in modifiers for w in rest):
        return []                        # "adriana_user": a name besides the person word
    described = [w for w in (after or []) if w.endswith(("ing", "ed"))]
    return (rest or list(head)) + described


def person_phrase(np: NP, kb: Knowledge) -> bool:
    """Whether a phrase names a person: its head is a person word ("the guest", "the visitor
    Hana"), or it is a pronoun ("her"); "the guest book" is a book."""
    if np.raw.lower() in kb.person_pronouns:
        return True
    words = np.words
    if not words or not set(words) & kb.person_words:
        return False
    if words[-1] in kb.person_words:
        return True
    last = (np.raw.split() or [""])[-1]
    return last[:1].isupper() and words[-1] not in kb.known_types and word_key(words) not in kb.type_descriptions


def _best_two(scores: list[tuple[str, float]]) -> tuple[float, float]:
    """The best and second-best score of different types (0.0 when there is one type)."""
    ranked = sorted({type_key(i): s for i, s in scores}.values(), reverse=True)
    return ranked[0], (ranked[1] if len(ranked) > 1 else 0.0)


def _forms(word: str) -> set[str]:
    """A word and its bare forms: 'writing' -> {writing, writ, write}, 'dryer' -> {dryer, dry, drye}."""
    w = singular(word)
    out = {w}
    for suffix in ("ing", "ed", "er", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[:-len(suffix)]
            out |= {base, base + "e"}
            if len(base) > 3 and base[-1] == base[-2]:
                out.add(base[:-1])              # cutting -> cut
    return out


def meaning_score(kb: Knowledge, words: list[str], name: str, text: str, sim_name: float, sim_text: float) -> float:
    """How well a phrase (its words) names a type, given the phrase's embedding similarity to the
    type's name and to "<name>: <description>" (``Knowledge.type_text``): the higher of the two,
    plus WORD_BONUS when every content word of the phrase occurs in the text: one word in the
    name or the description's genus ("a toiletry, ..."), a longer phrase or a use ("something to
    cut with", "thing for drying hair") anywhere in the text. Shared with scene-graph retrieval,
    which scores its documents the same way."""
    content = [w for w in words if w not in kb.function_words]
    purpose = any(w in ("to", "for") for w in words[:-1])
    score = max(float(sim_name), float(sim_text))
    where = text if len(content) > 1 or purpose else _genus(name, text)
    if content and all(_word_in(w, where) for w in content):
        score += WORD_BONUS
    return score


_GENUS_END = frozenset({"that", "which", "who", "for", "with", "without", "used", "in", "on", "of", "from", "to", "at",
                        "when", "where", "and", "or", "by", "into", "under", "over"})


def _genus(name: str, text: str) -> str:
    """The head word of the type's name and the head of its description: 'microwave: a kitchen
    appliance that heats food' -> 'microwave kitchen appliance'. A modifier of the name is not
    what the type is ('bread knife' is a knife, not bread)."""
    name = (name.split() or [""])[-1]
    desc = text.split(":", 1)[1] if ":" in text else ""
    head = []
    for w in desc.split(",")[0].split():
        if w.lower() in _GENUS_END:
            break
        head.append(w)
    return f"{name} {' '.join(head)}"


def _word_in(word: str, text: str) -> bool:
    """Whether ``word`` (in any of its forms) is one of the words of ``text``."""
    mine = _forms(word)
    return any(mine & _forms(t) for t in split_words(text))


def distance_of(entry) -> float | None:
    if isinstance(entry, dict):
        d = entry.get("distance_m")
        if isinstance(d, (int, float)) and not isinstance(d, bool):
            return float(d)
    if isinstance(entry, (int, float)) and not isinstance(entry, bool):
        return float(entry)
    return None


