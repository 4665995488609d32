"""Reading a query into an action and its arguments, each a noun phrase with qualifiers.

Three forms are understood: structured ``pick(Mug, CounterTop)``, PDDL-like
``pick adrianas_medicine medicine_counter`` and natural language ("Could you pick up the
clean mug to the right of the apple?"). A noun phrase keeps its head words ("mug"), state
qualifiers ("clean", "that is not sliced"), colours ("the yellow fruit"), spatial qualifiers
("to the right of" + another noun phrase; negated: "not next to the bowl"; several joined by
"and": "right of the banana and left of the dirty mug"), superlatives ("closest to the plant",
"the nearest mug") and an owner ("Adriana's medicine": the medicine, owner Adriana). A relation
to the robot itself ("in front of you", "next to you") becomes what it can mean among the
objects in view. Result and instrument phrases ("into slices", "with the knife") and a second
request ("... and put it aside") are set apart from the object. A person's clarification
("It's the medicine that is closest to the plant.", "I am Adriana.") is merged in.
All the vocabulary comes from data/knowledge/language.yaml (colour words from
data/perception/colour_names.yaml); a verb it lacks may be guessed by the caller
(``guess_verb``; the reasoner uses sentence embeddings).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from raider_ros.common.text import singular, split_words, word_key

from .lexicon import load_lexicon, load_verb_senses
from .knowledge import Knowledge, type_words

_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:'[A-Za-z]+)?")
_KEEP_APOSTROPHE = {"it's", "that's", "what's", "there's", "he's", "she's", "i'm", "let's", "who's"}
_CONNECTORS = {"that", "which", "who", "is", "are", "that's", "located", "placed", "sitting", "lying",
               "standing", "found", "kept", "the", "and", "one", "was", "being", "currently", "right",
               "just", "directly", "somewhere", "stored"}
_STRUCTURED = re.compile(r"^\(?\s*([A-Za-z][A-Za-z_ ]{0,40}?)\s*\((.*)\)\s*\)?\s*[.!?]?\s*$", re.S)
FROM_RELATIONS = ("on top of", "inside")
_RELATIVE = {"that", "which", "who", "whose", "where", "that's", "which's"}
_BE_NOT = {"isn't", "aren't", "wasn't", "weren't"}
_AUX = frozenset({"will", "would", "are", "is", "was", "were", "have", "has", "had", "can", "could", "should",
                  "must", "need", "needs", "'ll", "won't", "can't", "don't", "doesn't", "aren't", "isn't"})
_HAS_AFTER = frozenset({"been", "got", "gone"})    # "whatever's been left on", "the machine's gone dark"
_HAVE_NOT = {"hasn't", "haven't", "hadn't"}


@dataclass
class StateQual:
    key: str                            # a state of get_obj_state, or "colour"
    value: bool
    word: str
    nothing_inside: bool = False
    colour: str | None = None           # key "colour": the colour name (colour_names.yaml)


@dataclass
class RelQual:
    phrase: str                         # as written: "to the left of"
    relations: tuple[str, ...]          # check_obj_relationship names (any of them)
    ref: "NP | None"                    # None: the robot (superlatives only)
    inverse: bool = False
    superlative: str | None = None      # min | max
    position: bool = False              # among the candidates: none of the others is <relation> it
    negated: bool = False               # "not next to the bowl": the candidates the relation does NOT hold for


@dataclass
class NP:
    text: str                           # the whole phrase, cleaned, for sentences
    raw: str                            # head as written (original case), for id matching
    words: list[str]                    # singular lower-case head words
    states: list[StateQual] = field(default_factory=list)
    quals: list[RelQual] = field(default_factory=list)
    personal: bool = False              # about the user: "my favourite fruit"
    owner: str | None = None            # "Adriana's medicine": Adriana (as written)
    notes: list[str] = field(default_factory=list)   # what was read but cannot narrow the choice
    clause: str = ""                    # a relative clause no qualifier reads: "that needs washing"
    attributive: list[StateQual] = field(default_factory=list)   # states read before the head ("baked")
    partitive: bool = False             # "a piece of citrus": any one of what the words name
    held: bool = False                  # "what you're holding", "the bottle you've got": in the gripper
    alt: "NP | None" = None             # "the pellets, the blue tub": another name, tried when this finds nothing

    @property
    def head_text(self) -> str:
        return " ".join(split_words(self.raw)) or self.text

    def describe(self) -> str:
        return self.text or self.head_text


@dataclass
class ParsedQuery:
    text: str
    action: str | None                  # a key of language.yaml actions; None = not understood
    verb: str                           # the verb as written
    args: dict[str, NP]                 # role -> phrase
    place_relation: str | None = None   # place: the relation the location was given with
    structured: bool = False
    person_hint: str | None = None      # "I am Adriana" -> "adriana"
    role_names: dict[str, str] = field(default_factory=dict)   # "Hana is the receptionist" -> receptionist: hana
    context_np: NP | None = None
    later: str = ""                     # a further request, not checked now: "put it aside"
    result: str = ""                    # what the action makes: "into slices"
    purpose: str = ""                   # what it is for: "for the drinks", "to the first page"

    def role_order(self, kb: Knowledge) -> list[str]:
        roles = list(kb.actions[self.action].roles) if self.action in kb.actions else ["object"]
        return [r for r in roles if r in self.args] + [r for r in self.args if r not in roles]


# --------------------------------------------------------------------------- tokens
# "a clip-on tuner", "the pull-out tray", "a plug-in heater": a word joined to a particle by a
# hyphen is one modifier ("clipon"), not the relation "on"; a participle keeps its state
# ("the switched-on lamp")
_PARTICLE_COMPOUND = re.compile(r"\b([A-Za-z]+(?<!ed))-(on|off|in|out|up|down|over|away|back)\b")


def query_words(text: str) -> list[str]:
    """Word tokens; a possessive keeps its 's ("Adriana's"), other apostrophes are cut."""
    out = []
    text = _PARTICLE_COMPOUND.sub(lambda m: m.group(1) + m.group(2), text.replace("\u2019", "'"))
    for t in _TOKEN.findall(text.replace("-", " ")):
        low = t.lower()
        if "'" in t and low not in _KEEP_APOSTROPHE and not low.endswith("n't") and not low.endswith("'s"):
            t = t.split("'")[0]
        out.append(t)
    return out


def _expand_contractions(orig: list[str], kb: Knowledge) -> list[str]:
    """"whatever's on" -> "whatever is on": after the words of language.yaml is_contractions an
    's means "is", before "been", "got", "gone" it means "has" ("the machine's gone dark");
    elsewhere it is a possessive ("Adriana's medicine")."""
    out: list[str] = []
    for k, t in enumerate(orig):
        low = t.lower()
        nxt = orig[k + 1].lower() if k + 1 < len(orig) else ""
        if low.endswith("'s") and low not in _KEEP_APOSTROPHE and nxt in _HAS_AFTER:
            out += [t[:-2], "has"]       # "whatever's been left on": has, not is
        elif low.endswith("'s") and low not in _KEEP_APOSTROPHE and low[:-2] in kb.is_contractions:
            out += [t[:-2], "is"]
        elif low.endswith("'s") and low not in _KEEP_APOSTROPHE and len(low) > 2 and _is_after(orig, k + 1, kb):
            out += [t[:-2], "is"]        # "the kettle's boiling over", "the lamp's on"
        else:
            out.append(t)
    return out


def _is_after(orig: list[str], k: int, kb: Knowledge) -> bool:
    """Whether an 's before orig[k] means "is": a present participle of a WordNet verb that ends
    the phrase or is followed by a particle or function word ("the kettle's boiling over", "the
    lamp's glaring in my eyes"; not "the patient's reading glasses"), an adverb ("the knife's
    already in your gripper"), or a one-word state that ends the phrase ("the lamp's on"; not
    "Maria's empty mug"); only for a subject that starts its part ("the kettle's ..."), never
    after a name ("Adriana's ...")."""
    if k >= len(orig) or orig[k - 1][:1].isupper() and k > 1:
        return False                     # "Adriana's ...": a name owns what follows
    if k > 4 or orig[0].lower() not in _single_determiners(kb):
        return False                     # only a subject that starts its part: not "open the notepad the pen's lying on"
    nxt = orig[k].lower()
    after = orig[k + 1].lower() if k + 1 < len(orig) else ""
    if nxt.endswith("ing") and len(nxt) > 5 and any(load_verb_senses().sense(b) for b in _verb_bases(nxt)):
        return not after or after in kb.particles or after in kb.function_words
    if (nxt,) in kb.trail_fillers:       # "the knife's already in your gripper", "the mug's there"
        return True
    low = [t.lower() for t in orig]
    if any(_at(low, k, p) for p, _ in kb.place_prepositions) or any(_at(low, k, r.phrase) for r in kb.relations):
        return True                      # "the knife's in your hand", "the mug's next to the sink"
    return k + 1 == len(orig) and any(st.phrase == (nxt,) for st in kb.states)


def _possessive(tok: str) -> bool:
    low = tok.lower()
    return low.endswith("'s") and low not in _KEEP_APOSTROPHE and len(low) > 2


def _at(toks: list[str], i: int, phrase: tuple[str, ...]) -> bool:
    return tuple(toks[i:i + len(phrase)]) == phrase


def _strip_lead(toks: list[str], orig: list[str], phrases: list[tuple[str, ...]]) -> tuple[list[str], list[str]]:
    changed = True
    while changed and toks:
        changed = False
        for p in phrases:
            if _at(toks, 0, p) and len(toks) > len(p):
                toks, orig = toks[len(p):], orig[len(p):]
                changed = True
                break
    return toks, orig


def _strip_trail(toks: list[str], orig: list[str], phrases: list[tuple[str, ...]]) -> tuple[list[str], list[str]]:
    changed = True
    while changed and toks:
        changed = False
        for p in phrases:
            n = len(p)
            if len(toks) > n and tuple(toks[-n:]) == p:
                toks, orig = toks[:-n], orig[:-n]
                changed = True
                break
    return toks, orig


# --------------------------------------------------------------------------- noun phrases
_HOLDING_VERBS = ("holding", "carrying", "got", "gripping", "have", "hold", "carry", "grip")
_GENERIC_HELD = ("what", "whatever", "thing", "one", "it", "something", "stuff", "object", "item")


def _held_clause(toks: list[str], orig: list[str]) -> tuple[list[str], list[str], bool]:
    """"what you're holding", "the bottle you've got", "the thing in your hand": the clause says
    the object is the one in the robot's gripper; it is cut off (what is left names the object,
    "what"/"the thing" nothing). Only after a head: "you" must not start the phrase."""
    for i in range(1, len(toks) - 1):
        j = i + 1 if toks[i] in ("that", "which") and i + 1 < len(toks) else i
        end = None
        if toks[j] == "you":
            k = j + 1
            while k < len(toks) and toks[k] in ("are", "have", "re", "ve", "still", "just"):
                k += 1
            if k < len(toks) and toks[k] in _HOLDING_VERBS:
                end = k + 1
        elif toks[j] == "in" and j + 2 < len(toks) and toks[j + 1] == "your" and \
                toks[j + 2] in ("hand", "hands", "gripper", "grip", "claw"):
            end = j + 3
        if end is not None:
            while end < len(toks):       # "... right now", "... at the moment"
                if toks[end] in ("right", "now", "there"):
                    end += 1
                elif toks[end:end + 3] == ["at", "the", "moment"]:
                    end += 3
                else:
                    break
            head = toks[:i]
            keep = [k for k, t in enumerate(head) if t not in _GENERIC_HELD]
            if all(head[k] in ("the", "a", "an", "this", "that") for k in keep):
                keep = []                # "the thing you're holding": no name at all
            return [head[k] for k in keep] + toks[end:], [orig[k] for k in keep] + orig[end:], True
    return toks, orig, False


def parse_np(orig: list[str], kb: Knowledge) -> NP:
    """A noun phrase from tokens (original case)."""
    toks = [t.lower() for t in orig]
    orig = list(orig)
    if toks and toks[0] in _GENERIC_HELD + ("the", "a", "this", "that"):
        toks, orig, held = _held_clause(toks, orig)
    else:
        held = False
    # "a couple of slices off the loaf", "a piece of the cake", "some of the grapes": the amount
    # names no object, what follows of / off / from does (read like a plural: several kinds may
    # be meant, "a piece of citrus")
    partitive = False
    while True:
        cut = None
        for t, o in ((toks, orig), _strip_lead(toks, orig, kb.determiners)):
            n = next((n for n in (2, 1) if len(t) > n + 1 and " ".join(t[:n]) in kb.partitive_words
                      and t[n] in ("of", "off", "from")), None)
            if n is not None:
                cut = (t[n + 1:], o[n + 1:])
                break
        if cut is None:
            break
        toks, orig = cut
        partitive = True
    for i in range(len(toks) - 1, 0, -1):    # "whatever up down there": where the speaker points
        p = next((p for p in kb.place_adverbs if _at(toks, i, p)), None)
        if p is not None:
            del toks[i:i + len(p)], orig[i:i + len(p)]
            if i > 1 and toks[i - 1] in kb.particles and toks[i - 1] not in kb.result_states:
                del toks[i - 1], orig[i - 1]     # "lit up down there": the particle before it too
    toks, orig = _strip_trail(toks, orig, kb.trail_fillers)    # "whatever's blasting music right now"
    running = None
    if len(toks) > 2 and toks[0] in ("whatever", "whichever", "something") and toks[1] in ("is", "are") \
            and toks[2].endswith("ing") and toks[2] not in kb.state_adverbs and toks[2] not in kb.known_types \
            and toks[2] not in _CONNECTORS and not any(_at(toks, 2, st.phrase) for st in kb.states) \
            and not any(_at(toks, 3, r.phrase) for r in kb.relations) \
            and any(load_verb_senses().sense(b) for b in _verb_bases(toks[2])):
        # "whatever's blasting music", "something's making a racket": a thing doing something is running
        running = " ".join(toks[1:])
        toks, orig = toks[:1], orig[:1]
    if len(toks) > 3 and toks[0] in ("whichever", "whatever"):
        k = next((k for k in range(2, len(toks) - 1) if toks[k] in ("is", "are", "has", "was", "have")
                  or toks[k] in _BE_NOT or toks[k] in _HAVE_NOT), None)
        if k is not None:                # "whichever device is live": the device that is live
            toks = ["the"] + toks[1:k] + ["that"] + toks[k:]
            orig = ["the"] + orig[1:k] + ["that"] + orig[k:]
    if len(toks) > 1 and toks[0] in ("whoever", "whomever"):
        toks = ["the", "person", "who"] + toks[1:]   # "whoever's waiting over there": the person who is waiting
        orig = ["the", "person", "who"] + orig[1:]
    shown = [" ".join(split_words(o)).lower() if re.fullmatch(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)+", o) else t
             for t, o in zip(toks, orig)]       # "SafetyGoggles" is said "safety goggles"
    text = " ".join(_strip_lead(shown, list(orig), kb.determiners)[0])
    personal = bool(set(toks) & kb.personal_words)
    states: list[StateQual] = []
    quals: list[RelQual] = []
    notes: list[str] = []
    if running is not None:
        states.append(StateQual("switched_on", True, running))
        notes.append(f"\"{running}\" was read as switched on")

    # "Adriana's medicine": the medicine, which belongs to Adriana
    owner = None
    k = next((k for k, t in enumerate(orig) if _possessive(t)), None)
    if k is not None and k + 1 < len(orig) and toks[k][:-2] in kb.time_possessives:
        s = k                            # "last night's pizza": the pizza, no owner
        while s > 0 and any(tuple(toks[s - len(p):s]) == p for p in kb.time_leads):
            s -= next(len(p) for p in kb.time_leads if tuple(toks[s - len(p):s]) == p)
        del toks[s:k + 1], orig[s:k + 1]
    elif k is not None and k + 1 < len(orig):
        owner = orig[k][:-2]
        del toks[k], orig[k]

    # "something I can cut the bread with": "something to cut the bread with"
    i = 1
    while i < len(toks):
        mc = next((m for m in kb.modal_clauses if _at(toks, i, m)), None)
        if mc is None and toks[i] in kb.subject_pronouns and toks[-1] in kb.instrument_words:
            mc = (toks[i],)              # "the thing I water the plants with"
        if mc is not None and i + len(mc) < len(toks):
            toks[i:i + len(mc)], orig[i:i + len(mc)] = ["to"], ["to"]
        i += 1

    # "something to cut the bread with": what it is for is the verb; its object names no type
    dets = _single_determiners(kb)
    k = next((k for k in range(1, len(toks) - 2) if toks[k] == "to" and toks[k - 1] in kb.function_words
              and toks[k + 2] in dets), None)
    if k is not None:
        end = next((e for e in range(k + 3, len(toks)) if toks[e] in kb.instrument_words), len(toks))
        del toks[k + 2:end], orig[k + 2:end]

    # "the bowl if it doesn't contain anything"
    for p in kb.emptiness_phrases:
        ptoks = query_words(p)
        ptoks = [t.lower() for t in ptoks]
        for i in range(len(toks) - len(ptoks) + 1):
            if toks[i:i + len(ptoks)] == ptoks:
                j = i
                while j > 0 and toks[j - 1] in ("if", "it", "that", "which", "with", "and", "when"):
                    j -= 1
                del toks[j:i + len(ptoks)], orig[j:i + len(ptoks)]
                states.append(StateQual("filled", False, "empty", nothing_inside=True))
                break
        else:
            continue
        break

    # "the tip box at the far end", "the cup at this end": the farthest or nearest of them
    end_at = next((p for p in kb.end_phrases if len(toks) > len(p) + 1 and tuple(toks[-len(p):]) == p), None)
    if end_at is not None:
        quals.append(RelQual(" ".join(end_at), (), None, False, kb.end_phrases[end_at]))
        toks, orig = toks[:-len(end_at)], orig[:-len(end_at)]
    else:                                # "the box at the far end that's still shut": a clause after it
        at = next(((i, p) for i in range(1, len(toks)) for p in kb.end_phrases
                   if _at(toks, i, p) and i + len(p) < len(toks) and toks[i + len(p)] in _RELATIVE), None)
        if at is not None:
            i, p = at
            quals.append(RelQual(" ".join(p), (), None, False, kb.end_phrases[p]))
            del toks[i:i + len(p)], orig[i:i + len(p)]

    # "the mug that's got my tea in it", "the cup that hasn't got anything in it yet": something
    # inside, or nothing
    filled = _contents_clause(toks)
    if filled is not None:
        (i, j), value = filled
        states.append(StateQual("filled", value, " ".join(toks[i:j]), nothing_inside=not value))
        del toks[i:j], orig[i:j]

    # predicate states: "that is clean", "which is not sliced", "that is on"
    i = 1
    while i < len(toks):
        hit = _predicate_state(toks, i, kb)
        if hit is None:
            i += 1
            continue
        end, st = hit
        del toks[i:end], orig[i:end]
        states.append(st)

    # determiners
    toks, orig = _strip_lead(toks, orig, kb.determiners)

    # "the vase with no water", "the glass without any juice": nothing inside
    lack = next(((i, p) for i in range(1, len(toks)) for p in kb.lacking_phrases
                 if _at(toks, i, p) and len(toks) > i + len(p)), None)
    if lack is not None:
        states.append(StateQual("filled", False, " ".join(toks[lack[0]:]), nothing_inside=True))
        toks, orig = toks[:lack[0]], orig[:lack[0]]

    # "slice the apple with the knife": what follows names a tool
    cut = next((i for i in range(1, len(toks)) if toks[i] in kb.instrument_words), None)
    if cut is not None:
        toks, orig = toks[:cut], orig[:cut]

    # positions among the candidates: "the mug on the left", "the leftmost mug" (not "left of ...")
    i = 0
    while i < len(toks):
        pp = next((p for p in kb.positions if _at(toks, i, p.phrase)), None)
        end = i + len(pp.phrase) if pp else i
        if pp is None or len(toks) == len(pp.phrase) or _at(toks, end, ("of",)) \
                or any(_at(toks, end, r.phrase) for r in kb.relations):
            i += 1
            continue
        quals.append(RelQual(" ".join(pp.phrase), (pp.relation,), None, position=True))
        del toks[i:end], orig[i:end]

    # "the rose over by the till": of two relations in a row the second says where
    i = 1
    while i < len(toks):
        rp = next((r for r in kb.relations if _at(toks, i, r.phrase) and not r.superlative), None)
        if rp is not None and any(_at(toks, i + len(rp.phrase), r.phrase) for r in kb.relations):
            del toks[i:i + len(rp.phrase)], orig[i:i + len(rp.phrase)]
            continue
        i += 1

    # the first spatial qualifier splits head and reference; "not" before it negates it, and a
    # further qualifier after "and" ("right of the banana and left of the mug") joins the head
    for i in range(1, len(toks)):
        rp = next((r for r in kb.relations if _at(toks, i, r.phrase)), None)
        if rp is None or any(len(s.phrase) > 1 and _at(toks, i - 1, s.phrase) for s in kb.states):
            continue                     # "the switched on lamp": part of a state, not a relation
        head_t, head_o = toks[:i], orig[:i]
        negated = False
        while len(head_t) > 1 and (head_t[-1] in _CONNECTORS or head_t[-1] in kb.negations):
            negated |= head_t[-1] in kb.negations
            head_t, head_o = head_t[:-1], head_o[:-1]
        ref_o = orig[i + len(rp.phrase):]
        more_o: list[str] = []
        j = _next_qualifier(ref_o, kb)
        if j is not None:
            ref_o, more_o = ref_o[:j], ref_o[j + 1:]
        ref = parse_np(ref_o, kb) if ref_o else None
        if ref is None and not rp.superlative:
            continue                     # "the light that is on" without a reference: not a relation
        phrase = " ".join(rp.phrase)
        core = tuple(_strip_lead([t.lower() for t in ref_o], list(ref_o), kb.determiners)[0])
        if ref is not None and core in (("it",), ("them",)):
            notes.append(f"\"{phrase} {' '.join(core)}\" refers to the object itself")
            toks, orig = head_t, head_o
            break
        if ref is not None and core in kb.self_words:
            q = _self_relation(rp, phrase, core, negated, kb, notes)
            if q is not None:
                quals.append(q)
        else:
            quals.append(RelQual(phrase, rp.relations, ref, rp.inverse, rp.superlative, negated=negated))
        toks, orig = head_t, head_o
        if more_o:
            more = parse_np(head_o + more_o, kb)
            quals += more.quals
            states += more.states
            notes += more.notes
        break

    # attributive states, colours and superlatives: "the clean mug", "the unsliced apple",
    # "the yellow fruit", "the nearest mug"
    attributive: list[StateQual] = []
    i = 0
    while i < len(toks):
        neg = toks[i] in kb.negations or toks[i] == "non"
        j = i + 1 if neg else i
        colour = kb.colour_words.get(toks[j]) if j < len(toks) else None
        span = 1
        if j + 2 < len(toks) and f"{toks[j]} {toks[j + 1]}" in kb.colour_shades and toks[j + 1] in kb.colour_words:
            colour, span = kb.colour_words[toks[j + 1]], 2      # "the olive green thread": a shade
        elif colour is not None and j > 0 and not neg and load_lexicon().senses(toks[j - 1:j + 1], whole=True):
            colour = None                # "the ice cream scoop": the colour word ends a noun of its own
        e = j + span - 1
        if colour is not None and len(toks) > e + 1 and not _names_a_type(toks[e:e + 2], kb):
            if toks[e + 1] not in kb.colour_words:      # "dark blue", "blue green": the last one counts
                states.append(StateQual("colour", not neg, " ".join(toks[i:e + 1]), colour=colour))
            del toks[i:e + 1], orig[i:e + 1]
            continue
        sw = next((s for s in kb.states if _at(toks, j, s.phrase)
                   and not (len(s.phrase) == 1 and s.phrase[0] in kb.predicate_only_states)), None)
        if sw is None and j < len(toks) and toks[j].startswith("un") and len(toks[j]) > 4:
            # "the unlit lantern", "the unopened jar": un- before a state word says its opposite
            sw = next((s for s in kb.states if s.phrase == (toks[j][2:],)
                       and s.phrase[0] not in kb.predicate_only_states), None)
            neg = neg != (sw is not None)
        if sw is not None and i > 0 and toks[i - 1] == "to":
            sw = None                    # "something to cut with": a verb, not a state
        if sw is not None and (len(toks) > j + len(sw.phrase) or len(toks) == 1 or neg):
            states.append(StateQual(sw.key, sw.value != neg, " ".join(toks[i:j + len(sw.phrase)]), sw.nothing_inside))
            if not neg:
                attributive.append(states[-1])
            del toks[i:j + len(sw.phrase)], orig[i:j + len(sw.phrase)]
            continue
        if toks[i] in kb.superlatives_to_robot and len(toks) > i + 1:
            quals.append(RelQual(toks[i], (), None, False, kb.superlatives_to_robot[toks[i]]))
            del toks[i], orig[i]
            continue
        i += 1
    toks, orig = _strip_lead(toks, orig, kb.determiners)
    if states and len(toks) > 2 and toks[-2] in ("and", "but") and toks[-1].endswith("ing") \
            and toks[-1] not in kb.known_types:
        notes.append(f"\"{toks[-1]}\" was not checked: no tool answers it")
        toks, orig = toks[:-2], orig[:-2]   # "something that is switched on and humming": said of it
    while toks and toks[-1] in ("please", "and", "that", "which"):
        toks, orig = toks[:-1], orig[:-1]

    # "the jar of honey" -> honey jar, "a glass of water" -> water glass
    low = [t.lower() for t in orig]
    if "of" in low[1:-1] and singular(low[low.index("of", 1) - 1]) in kb.container_heads:
        k = low.index("of", 1)
        orig = orig[k + 1:] + orig[:k]
    words = [singular(w) for t in orig for w in split_words(t) if not w.isdigit()]
    if owner is not None and (not words or set(words) <= kb.part_words):
        orig, owner = [owner], None      # "the fridge's door": the fridge
        words = [singular(w) for w in split_words(orig[0])]
    # "the mug that needs washing": a clause no qualifier reads does not name the type; "whatever
    # is heating up": a generic head is named by what its clause says
    rel = next((k for k in range(1, len(orig)) if orig[k].lower() in _RELATIVE), None)
    if rel is None:                      # "the bottle I use to dampen hair": a clause without "that"
        rel = next((k - 1 for k in range(1, len(orig) - 1) if orig[k].lower() in kb.subject_pronouns
                    and low[k - 1] not in kb.function_words and low[k - 1] not in kb.person_pronouns), None)
        rel = rel + 1 if rel is not None else None
        if rel is not None:
            orig = orig[:rel] + ["that"] + orig[rel:]
    clause = ""
    if rel is not None and len(orig) > rel + 1 and kb.category_of(
            [singular(w) for t in orig[:rel] for w in split_words(t)]) != "thing":
        clause = " ".join(orig[rel + 1:])
        orig = orig[:rel]
        words = [singular(w) for t in orig for w in split_words(t) if not w.isdigit()]
    if len(words) > 2 and kb.category_of(words[:1]) == "thing" and words[1] in ("is", "are", "that", "which"):
        rest = [w for w in words[2:] if w not in kb.particles]
        if rest:
            orig, words = orig[2:], rest
    raw = " ".join(orig)
    words = [w for w in words if w not in kb.personal_words] or words
    return NP(text=text, raw=raw, words=words, states=states, quals=quals, personal=personal,
              owner=owner, notes=notes, clause=clause, attributive=attributive, partitive=partitive, held=held)


def _names_a_type(words: list[str], kb: Knowledge) -> bool:
    """Whether the words together name a known type ("white board" -> Whiteboard)."""
    key = word_key(singular(w) for w in words)
    return key in kb.type_descriptions or key in kb.known_types


def _next_qualifier(toks_o: list[str], kb: Knowledge) -> int | None:
    """Where "and" (or "but") starts a further qualifier in a reference: "the banana and left
    of the dirty mug" -> 2; None when the reference runs to the end."""
    toks = [t.lower() for t in toks_o]
    for j in range(1, len(toks) - 1):
        if toks[j] not in ("and", "but", "while"):
            continue
        k = j + 1
        while k < len(toks) and (toks[k] in _CONNECTORS or toks[k] in kb.negations or toks[k] == "also") \
                and not any(_at(toks, k, r.phrase) for r in kb.relations):
            k += 1
        if k < len(toks) and any(_at(toks, k, r.phrase) for r in kb.relations):
            return j
    return None


def _self_relation(rp, phrase: str, ref: tuple[str, ...], negated: bool, kb: Knowledge,
                   notes: list[str]) -> RelQual | None:
    """A relation to the robot ("in front of you", "next to you", "left of you") or the user
    ("next to me"): what it can mean among the objects in view, or a note when it cannot narrow
    the choice."""
    said = f"{phrase} {' '.join(ref)}"
    if rp.superlative:
        return RelQual(phrase, (), None, False, rp.superlative)          # "closest to you": to the robot
    if ref[-1] in kb.user_words:
        notes.append(f"\"{said}\" was not checked: the relations in view do not measure where the user is")
        return None
    if negated:
        notes.append(f"\"not {said}\" was not checked")
        return None
    if "near" in rp.relations:
        return RelQual(phrase, (), None, False, "min")                   # "next to you": the nearest
    side = next((r for r in rp.relations if r in ("on the left of", "on the right of")), None)
    if side is not None and not rp.inverse:
        return RelQual(phrase, (side,), None, position=True)             # "left of you": the leftmost
    notes.append(f"\"{said}\" does not narrow the choice: the robot sees only what is in front of it")
    return None


_HAVE = ("has", "have", "got", "holds", "contains")
_INSIDE = (("in", "it"), ("in", "them"), ("inside",), ("inside", "it"))
_NOTHING = ("nothing", "anything", "no")


def _contents_clause(toks: list[str]) -> tuple[tuple[int, int], bool] | None:
    """A clause saying what is inside the object: "that's got my tea in it" (expanded to "that
    has got ...") -> ((start, end), True); "that hasn't got anything in it (yet)" -> False."""
    for i in range(1, len(toks) - 2):
        if toks[i] not in _RELATIVE and toks[i] != "with":
            continue
        j = i + 1
        neg = False
        while j < len(toks) and toks[j] in ("already", "still", "not", "doesn't", "hasn't", "haven't",
                                            "does", "do", "has", "have", "got", "holds", "contains", "currently"):
            neg |= toks[j] in ("not", "doesn't", "hasn't", "haven't")
            j += 1
        if j == i + 1 or not any(t in _HAVE or t in ("hasn't", "haven't") for t in toks[i + 1:j]):
            continue
        end = next((k for k in range(j + 1, len(toks) + 1) for p in _INSIDE if tuple(toks[k - len(p):k]) == p
                    and k - len(p) > j - 1), None)
        if end is None or end - j > 8:
            continue
        inner = toks[j:end]
        neg |= any(t in _NOTHING for t in inner[:2])
        while end < len(toks) and toks[end] in ("yet", "now", "already", "still"):
            end += 1
        return (i, end), not neg
    return None


def _needs_state(toks: list[str], i: int, kb: Knowledge) -> tuple[int, StateQual] | None:
    """"that (still) needs washing", "that needs a wash", "which needs to be refilled": the object
    lacks the state the action leaves (action_results): not clean, empty. (end, state) or None."""
    if i >= len(toks) or toks[i] not in _RELATIVE or not kb.action_results:
        return None
    k = i + 1
    while k < len(toks) and toks[k] in ("still", "really", "badly", "now", "definitely"):
        k += 1
    if k >= len(toks) or toks[k] not in _NEEDS:
        return None
    j = k + 1
    if j < len(toks) and toks[j] in ("a", "an", "some", "another", "to"):
        j += 1                           # "needs a wash", "needs to be washed"
    if j < len(toks) and toks[j] == "be":
        j += 1
    if j >= len(toks):
        return None
    w = toks[j]
    for b in _verb_bases(w) if w.endswith("ing") else _participle_bases(w) if w.endswith("ed") else [w]:
        left = _result_of(b, kb)
        if left is not None:
            end = j + 2 if j + 1 < len(toks) and toks[j + 1] in kb.particles else j + 1   # "topping up"
            return end, _state_qual(left[0], not left[1], " ".join(toks[i:end]), kb)
    return None


def _result_of(verb: str, kb: Knowledge) -> tuple[str, bool] | None:
    """The state (key, value) the action of a verb leaves its object in (action_results), the
    verb read by the knowledge or, as for a verb it lacks, by WordNet; None otherwise."""
    anchors = kb.verbs_of(kb.action_results)
    action = kb.action_for_verb(verb) or load_verb_senses().action_of(verb, anchors)
    return kb.action_results[action] if action in kb.action_results else None


def _state_qual(key: str, value: bool, text: str, kb: Knowledge) -> StateQual:
    """A state qualifier, empty of contents as language.yaml's state of that key and value says."""
    state = next((s for s in kb.states if s.key == key and s.value == value), None)
    return StateQual(key, value, text, bool(state and state.nothing_inside))


def _predicate_state(toks: list[str], i: int, kb: Knowledge) -> tuple[int, StateQual] | None:
    """A clause "<marker> [not] <state>" starting at ``i``: (end index, state)."""
    needs = _needs_state(toks, i, kb)
    if needs is not None:                # "the plate that still needs washing": not clean
        return needs
    marker = next((m for m in kb.predicate_markers if _at(toks, i, m)), None)
    if marker is None and i + 1 < len(toks) and toks[i] in _RELATIVE and toks[i + 1] in _BE_NOT:
        marker = (toks[i], toks[i + 1])  # "that isn't red": the marker and its negation in one
    elif marker is None and i + 2 < len(toks) and toks[i] in _RELATIVE and toks[i + 1] in _HAVE_NOT \
            and toks[i + 2] == "been":
        marker = (toks[i], toks[i + 1], "been")   # "that hasn't been used"
    nobody = _nobody_has(toks, i) if marker is None else None
    if nobody is not None:
        marker = tuple(toks[i:nobody])   # "the soda cup nobody has filled", "that no one has opened"
    if marker is None:
        return None
    j = i + len(marker)
    neg = nobody is not None
    while j < len(toks) and toks[j] in kb.state_adverbs:          # "that's still on"
        j += 1
    if j < len(toks) and (toks[j] in kb.negations or toks[j].endswith("n't")):
        neg, j = True, j + 1
    while j < len(toks) and toks[j] in kb.state_adverbs:          # "that is not yet sliced"
        j += 1
    if any(m.endswith("n't") for m in marker):
        neg = True
    if j < len(toks) and toks[j] in kb.colour_words:                  # "the mug that is blue"
        return j + 1, StateQual("colour", not neg, " ".join(toks[i:j + 1]), colour=kb.colour_words[toks[j]])
    sw = next((s for s in kb.states if _at(toks, j, s.phrase)), None)
    if sw is None:
        done = _participle_state(toks, j, kb)
        if done is None:
            return None
        end, st = done                   # "the watering can that's been drained": empty, as draining leaves it
        while end < len(toks) and toks[end] in kb.state_adverbs and toks[end] not in ("right", "now"):
            end += 1
        return end, StateQual(st.key, st.value != neg, " ".join(toks[i:end]), st.nothing_inside and not neg)
    end = j + len(sw.phrase)
    if len(sw.phrase) == 1 and sw.phrase[0] in kb.predicate_only_states \
            and end < len(toks) and toks[end] not in ("and", "now", "right", "currently", "please"):
        return None                      # "that is on the shelf": a relation, not a state
    text = " ".join(toks[i:end])
    while end < len(toks) and toks[end] in kb.state_adverbs and toks[end] not in ("right", "now"):
        end += 1                         # "that hasn't been used yet"
    return end, StateQual(sw.key, sw.value != neg, text, sw.nothing_inside and not neg)


def _nobody_has(toks: list[str], i: int) -> int | None:
    """The end of "[that] nobody has", "no one has", "nobody's" at ``i`` (a negated marker)."""
    k = i + 1 if i < len(toks) and toks[i] in _RELATIVE else i
    if k < len(toks) and toks[k] in ("nobody", "nobody's"):
        n = k + 1
    elif k + 1 < len(toks) and toks[k] == "no" and toks[k + 1] in ("one", "one's"):
        n = k + 2
    else:
        return None
    if toks[n - 1].endswith("'s"):
        return n
    if n < len(toks) and toks[n] in ("has", "have", "had"):
        n += 1
        if n < len(toks) and toks[n] == "yet":
            n += 1
        return n
    return None


def _participle_bases(word: str) -> list[str]:
    """The verbs a past participle may come from: "drained" drain, "emptied" empty, "used" use,
    "stopped" stop."""
    if len(word) < 4 or not word.endswith("ed"):
        return []
    out = [word[:-2], word[:-1]]
    if word.endswith("ied"):
        out.insert(0, word[:-3] + "y")
    if len(word) > 4 and word[-3] == word[-4]:
        out.append(word[:-3])
    return out


def _participle_state(toks: list[str], j: int, kb: Knowledge) -> tuple[int, StateQual] | None:
    """(end, state) for a past participle at ``j`` whose verb is an action (the knowledge's verbs,
    else WordNet's sense, as for a verb the knowledge lacks) that leaves a state (action_results):
    "drained" is empty, "unlocked" open, "powered up" on. None otherwise."""
    if j >= len(toks) or not kb.action_results:
        return None
    end = j + 2 if j + 1 < len(toks) and toks[j + 1] in kb.particles else j + 1
    for b in _participle_bases(toks[j]):
        tried = ([(f"{b} {toks[j + 1]}", end)] if end == j + 2 else []) + [(b, j + 1)]
        for verb, stop in tried:
            left = _result_of(verb, kb)
            if left is not None:
                return stop, _state_qual(left[0], left[1], " ".join(toks[j:stop]), kb)
    return None


# --------------------------------------------------------------------------- queries
def parse_query(query: str, context: str, kb: Knowledge,
                guess_verb: Callable[[str], str | None] | None = None) -> ParsedQuery:
    """``guess_verb(phrase)`` names the action of a verb the knowledge lacks ("wipe"), or None."""
    q, rest = _instruction(query)
    if rest:                 # what follows the instruction is read like a clarification
        context = f"{rest}\n{context}".strip()
    q = q.strip().strip("\"'\u201c\u201d` ")
    pq = _structured(q, kb) or _pddl_like(q, kb)
    if pq is None:
        q = _TAG_QUESTION.sub(".", q)    # "That knife is an electric one, isn't it? Switch it on."
        q = _trailing_word(q, kb)        # "Open the till, quick."
        said = q
        q = _indirect(_instrument_first(_needs_doing(_wants_done(q, kb), kb), kb), kb)
        request, clarifications = _remarks(q, kb)
        if clarifications:       # "..., I mean the red one": read like a clarification
            context = "\n".join(clarifications + [context]).strip()
        pq = _natural(_let_have(request, kb), kb, guess_verb)
        pq.text = q
        _one_from_earlier(pq, said, kb)
        _its_part(pq, said, kb)
        _into_hands(pq, said, kb)
        _pronoun_to_name(pq, said, kb)
        _needer_is_recipient(pq, said, kb)
    if context.strip():
        merge_context(pq, context, kb)
    return pq


_LEAD_CALL = re.compile(r"^\(?\s*[A-Za-z][A-Za-z_ ]{0,40}?\s*\([^()\n]*\)\s*\)?(?=\s|[.!?;,]|$)")


def _instruction(query: str) -> tuple[str, str]:
    """(the instruction, what follows it): the first line of the query, and of that a leading
    structured call such as ``pick(Apple)`` when more text follows it."""
    lines = [line.strip() for line in query.strip().splitlines() if line.strip()]
    if not lines:
        return "", ""
    first, rest = lines[0], lines[1:]
    m = _LEAD_CALL.match(first)
    if m and first[m.end():].strip(" .!?;,"):
        rest.insert(0, first[m.end():].strip(" .!?;,"))
        first = m.group(0)
    return first.strip().strip("\"'\u201c\u201d` "), "\n".join(rest)


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [a.strip().strip("\"'") for a in out if a.strip().strip("\"'")]


def _assign(action: str | None, verb: str, arg_texts: list[list[str]], kb: Knowledge, structured: bool) -> ParsedQuery:
    roles = list(kb.actions[action].roles) if action in kb.actions else ["object"]
    while len(roles) < len(arg_texts):
        roles.append(f"arg{len(roles) + 1}")
    args = {r: parse_np(t, kb) for r, t in zip(roles, arg_texts) if t}
    pq = ParsedQuery(" ".join(" ".join(t) for t in arg_texts), action, verb, args, structured=structured)
    if action == "pick" and "source" in args and "object" in args:
        args["object"].quals.append(RelQual("on", FROM_RELATIONS, args["source"]))
    return pq


def _structured(q: str, kb: Knowledge) -> ParsedQuery | None:
    m = _STRUCTURED.match(q)
    if not m:
        return None
    action = kb.action_for_verb(m.group(1))
    if action is None:
        return None
    pq = _assign(action, m.group(1), [query_words(a) for a in _split_args(m.group(2))], kb, True)
    pq.text = q
    return pq


def _pddl_like(q: str, kb: Knowledge) -> ParsedQuery | None:
    toks = q.strip("()").split()
    if len(toks) < 2:
        return None
    low = [t.lower() for t in toks]
    dets = _single_determiners(kb)
    if any(t in dets for t in low):
        return None
    for n in (2, 1):
        if len(toks) > n and kb.action_for_verb(" ".join(low[:n])):
            rest: list[str] = []
            for t in toks[n:]:                   # "apple 1" is one argument, apple_1
                if t.isdigit() and rest:
                    rest[-1] += f"_{t}"
                else:
                    rest.append(t)
            if not any("_" in t or t[-1].isdigit() for t in rest) or len(rest) > 3:
                return None
            pq = _assign(kb.action_for_verb(" ".join(low[:n])), " ".join(low[:n]), [[t] for t in rest], kb, True)
            pq.text = q
            return pq
    return None


_LAST_WORD = re.compile(r",\s*([a-z]+)\s*[.!?]*\s*$")


def _trailing_word(q: str, kb: Knowledge) -> str:
    """"Open the till, quick.", "Turn it off, quickly!": a last lower-case word after a comma that
    names no kind of object the knowledge knows, no category, no verb and no word of its lists says
    how, not what; it is dropped."""
    m = _LAST_WORD.search(q)
    if m is None:
        return q
    w = m.group(1)
    if w in kb.function_words or w in kb.particles or w in kb.user_words or w in kb.person_pronouns \
            or kb.action_for_verb(w) or w in kb.result_states or singular(w) in kb.known_types \
            or singular(w) in kb.type_descriptions or kb.category_of([singular(w)]) is not None:
        return q
    return q[:m.start()] + "."


# a question tag after a statement asks nothing of the robot: ", isn't it?", ", don't they?", ", right?"
_TAG_QUESTION = re.compile(r"\s*,\s*(?:(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)"
                           r"n['\u2019]?t\s+(?:it|they|he|she|there|you|we|i)|right|yeah|eh)\s*\?", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+")
_PART_BREAK = re.compile(r"\s*[,;:]\s+|\s+[-\u2013\u2014]+\s+|(?<=[.!?])\s+")


def _remarks(q: str, kb: Knowledge) -> tuple[str, list[str]]:
    """(the request, the clarifications after it): parts after a comma, semicolon or dash that
    start with a subject of their own ("it's stuffy in here", "I want to know what it weighs")
    are remarks and left out; a clarification ("I mean the red one", "I am Adriana") is set
    apart; any other part ("could you, please, ...", "..., the one on the left") stays."""
    parts = [p.strip() for p in _PART_BREAK.split(q) if p.strip()]
    if len(parts) < 2:
        return q, []
    dets = _single_determiners(kb) | {"one"}
    keep, clar = [parts[0]], []
    first = [t.lower() for t in query_words(parts[0])]
    if (any(_at(first, 0, p) for p in kb.remark_leads) or not _starts_request(parts[0], kb)) \
            and any(_starts_request(p, kb) for p in parts[1:]):
        keep = []                        # "I'm holding the knife now, so go ahead and cut the tomato",
        #                                  "The fish look gloomy, switch their tank light on"
    for part in parts[1:]:
        orig = query_words(part)
        toks = [t.lower() for t in orig]
        if not toks:
            continue
        ident = next((p for p in kb.identity_leads if _at(toks, 0, p)), None)
        if ident is not None and len(toks) > len(ident) and orig[len(ident)][:1].isupper():
            clar.append(part)            # "I am Adriana"
            continue
        lead = next((p for p in kb.context_leads if _at(toks, 0, p)), None)
        if lead is not None and len(toks) > len(lead) and toks[len(lead)] in dets \
                and (toks[len(lead)] in ("one", "ones") or _names_a_thing(toks[len(lead) + 1:], kb)):
            clar.append(part)            # "it's the one by the plant" (not "it's the middle of the day")
            continue
        if any(_at(toks, 0, p) for p in kb.contrast_leads) and len(toks) > 1:
            continue                     # "..., leave the one that's been used": not this one
        rl = next((p for p in kb.remark_leads if _at(toks, 0, p)), None)
        if rl is not None and len(toks) > len(rl) and toks[len(rl)] not in ("one", "ones"):
            continue                     # a remark: a reason or a wish, not the request
        if toks[0] in dets and len(toks) <= 8 and (any(t in ("one", "ones") for t in toks[1:4])
                                                   or kb.category_of([toks[-1]]) == "thing"):
            clar.append(part)            # "..., the fuchsia one", "the one I keep buttons in": which one
            continue
        if any(f == tuple(toks) for f in kb.trail_fillers + kb.lead_fillers):
            continue                     # "..., please, ..."
        # a sentence of its own, not a request: "..., the drinks are in there"
        remark = _own_clause(_expand_contractions(orig, kb), kb) and not _starts_request(part, kb)
        if (toks[0] in dets or toks[0] in _POSSESSIVES) and len(toks) <= 8 and _names_a_thing(toks[1:], kb) \
                and not any(_at(toks, 1, r.phrase) for r in kb.relations) and not remark \
                and not _starts_request(part, kb):
            clar.append(part)            # "open the pellets, the blue tub": the same thing by another name
            continue
        if len(toks) > 2 and toks[0] in dets and singular(toks[1]) in kb.person_words | kb.role_nouns \
                and (toks[2] in _AUX or toks[2] not in kb.function_words) \
                and not any(_at(toks, 2, r.phrase) for r in kb.relations):
            continue                     # "... - the teller wants some water": a person as the subject
        if len(toks) > 2 and toks[1] in _AUX and toks[0] not in dets and not _starts_request(part, kb):
            continue                     # "..., people will be wanting tea": a clause of its own
        if remark:
            continue                     # "..., the drinks are in there", "..., my earring rolled under it"
        keep.append(part)
    return " ".join(keep), clar


_POSSESSIVES = ("my", "your", "his", "her", "our", "their", "its")
_SOMEONE = ("something", "someone", "somebody", "everything", "everyone", "everybody", "nothing", "nobody",
            "anything", "anyone", "anybody")


def _own_clause(orig: list[str], kb: Knowledge) -> bool:
    """Whether a part is a sentence of its own: a subject (a pronoun such as "something", or a
    determiner or possessive and up to three words with no relative or function word among them)
    and then a finite verb: a form of be or have ("the drinks are in there", "that speaker is way
    too loud", "something is rolled under it"), or after a possessive or pronoun subject a past
    tense WordNet knows the verb of ("my earring rolled underneath"). Not a description that
    says which one ("the mug left of the bowl": a relation, "the one that's clean")."""
    toks = [t.lower() for t in orig]
    if len(toks) < 2:
        return False
    dets = _single_determiners(kb)
    if toks[0] in _SOMEONE:
        start = 1
    elif (toks[0] in dets or toks[0] in _POSSESSIVES) and len(toks) > 2:
        start = 2
        while start < min(len(toks), 5) and toks[start] not in _AUX and not toks[start].endswith("ed") \
                and toks[start] not in _BE_NOT | _HAVE_NOT:
            start += 1
        if any(t in kb.function_words or t in _RELATIVE or t in ("one", "ones") for t in toks[1:start]):
            return False
    else:
        return False
    if start >= len(toks) or any(_at(toks, start, r.phrase) for r in kb.relations):
        return False
    verb = toks[start]
    if verb in _AUX and start > 1 and load_lexicon().senses(toks[start - 1:start + 1], whole=True):
        return False                     # "the watering can to the left of ...": a noun
    if verb in _AUX or verb in _BE_NOT or verb in _HAVE_NOT:
        return True
    return (toks[0] in _SOMEONE or toks[0] in _POSSESSIVES) and verb.endswith("ed") and verb not in kb.result_states \
        and any(load_verb_senses().sense(b) for b in _participle_bases(verb))


def _names_a_thing(toks: list[str], kb: Knowledge) -> bool:
    """Whether the words after a determiner name a thing: "one", a kind or category the knowledge
    knows, or a noun WordNet files under physical things other than places, before the first
    function word ("the red one by the plant", "the mug"; not "the middle of the day")."""
    lex = load_lexicon()
    for t in toks[:4]:
        if t in kb.function_words and t not in ("one", "ones"):
            break
        w = singular(t)
        if t in ("one", "ones") or w in kb.known_types or w in kb.type_descriptions \
                or kb.category_of([w]) is not None or (lex.senses([w], whole=True)
                                                       and not lex.under_any([w], [["location"]])):
            return True
    return False


def _starts_request(part: str, kb: Knowledge) -> bool:
    """A part that, after lead fillers ("so", "go ahead and", "please"), starts with a verb."""
    orig = query_words(part)
    toks, _ = _strip_lead([t.lower() for t in orig], orig, kb.lead_fillers)
    return any(_at(toks, 0, p) for p, _ in _verb_phrases(kb)) or \
        (len(toks) > 2 and toks[0] in kb.split_verbs and any(t in kb.split_verbs[toks[0]] for t in toks[1:]))


_PRONOUN_OBJECTS = ("it", "them", "one", "that", "this", "those", "these")
_INDEFINITE = ("something", "anything")


def _indirect(q: str, kb: Knowledge) -> str:
    """"I need the yellow folder, can you get it?" -> "get the yellow folder": a first part that
    names the object without a verb of its own, and a later request whose object is a pronoun
    ("whatever's still lit up down there, switch it off")."""
    parts = [p.strip() for p in _PART_BREAK.split(q) if p.strip()]
    if len(parts) < 2:
        return q
    phrases = _verb_phrases(kb)
    first_o = _expand_contractions(query_words(parts[0]), kb)
    first = [t.lower() for t in first_o]
    first, first_o = _strip_lead(first, first_o, kb.lead_fillers)
    if not first or any(_at(first, 0, p) and p[0] not in kb.subject_pronouns for p, _ in phrases):
        return q                         # the first part is itself a request ("I'd like" is not)
    dets = _single_determiners(kb)
    # where the object starts: a determiner, or an indefinite head ("something to cut the bread with")
    d = next((k for k, t in enumerate(first) if t in dets or (t in _INDEFINITE + ("whatever", "whichever")
                                                                 and k + 1 < len(first))), None)
    if d is None and 1 <= len(first) <= 3 and all(t.isalpha() and t not in kb.function_words for t in first) \
            and not any(tuple(first) == f for f in kb.trail_fillers + kb.lead_fillers) \
            and load_lexicon().senses([singular(t) for t in first]):
        d = 0                            # "Tweezers, please: can you pick them up?": a bare noun phrase
    if d is None or (d == len(first) - 1 and first[d] in dets):
        return q
    for j in range(1, len(parts)):
        orig = query_words(parts[j])
        toks = [t.lower() for t in orig]
        toks, orig = _strip_lead(toks, orig, kb.lead_fillers)
        hit = next((p for p, _ in phrases if _at(toks, 0, p)), None)
        if hit is None and len(toks) > 2 and toks[0] in kb.split_verbs and toks[2] in kb.split_verbs[toks[0]]:
            hit = (toks[0],)             # "turn it off": the particle stays after the object
        if hit is None and len(toks) > 1 and toks[1] in ("it", "them") and toks[0].isalpha() \
                and toks[0] not in kb.function_words and not any(_at(toks, 0, p) for p in kb.remark_leads):
            hit = (toks[0],)             # "toss it over here": a verb the knowledge lacks, read later
        if hit is None or len(toks) <= len(hit):
            continue
        n = len(hit)
        if toks[n] in kb.user_words and len(toks) > n + 1 and toks[n + 1] in _PRONOUN_OBJECTS:
            n += 1                       # "get me those": the pronoun after the one it is for
        elif toks[n] not in _PRONOUN_OBJECTS:
            continue
        obj = first_o[d:]
        a = next((k for k in range(2, len(obj)) if obj[k].lower() in _AUX), None)
        if a is not None and obj[a - 1].lower() not in _RELATIVE:
            obj = obj[:a] + ["that"] + obj[a:]   # "the machine has gone dark": the machine that has ...
            v = a + 2                    # "the desk lamp is glaring in my eyes": what it does to
            if v < len(obj) and obj[v].lower().endswith("ing"):   # someone is no place of the lamp
                end = next((k for k in range(v + 1, len(obj) - 1) if obj[k].lower() in kb.function_words
                            and obj[k + 1].lower() in _HOLDERS), len(obj))
                obj = obj[:end]
        rebuilt = " ".join(orig[:n] + obj + orig[n + 1:])
        return " , ".join([rebuilt] + [p for k, p in enumerate(parts[1:], 1) if k != j])
    return q


_THIRD_PERSON = ("him", "her", "them")
_TITLES = ("mr", "mrs", "ms", "miss", "mx", "dr", "doctor", "professor", "prof", "sir", "madam")


def _pronoun_to_name(pq: ParsedQuery, q: str, kb: Knowledge) -> None:
    """"Tomasz wants this sunscreen; would you get it to him?": a recipient "him"/"her"/"them" is
    the one person the request names elsewhere (a capitalised name, with a title or not). Left
    alone when no name or several are named."""
    rec = pq.args.get("recipient")
    if pq.action != "handover" or rec is None or rec.raw.lower() not in _THIRD_PERSON:
        return
    # each sentence's first word may be a capitalised verb ("... is ready. Put it in his hands")
    names = [n for part in _SENTENCE_BREAK.split(q) for n in _names(query_words(part), kb)]
    if len(names) == 1:
        pq.args["recipient"] = parse_np(names[0], kb)


def _needer_is_recipient(pq: ParsedQuery, q: str, kb: Knowledge) -> None:
    """"Maisie needs the sunscreen you're holding, pass it over": a handover that names no one goes
    to the one person a part says needs or wants the thing (a capitalised name, then one of
    language.yaml's want_verbs)."""
    if pq.action != "handover" or pq.args.get("recipient") is not None or "object" not in pq.args:
        return
    found = []
    for part in _PART_BREAK.split(q):
        orig = query_words(part)
        toks = [t.lower() for t in orig]
        n = 0
        while n < min(3, len(orig)) and orig[n][:1].isupper() and toks[n] not in _single_determiners(kb) \
                and toks[n] not in kb.function_words:
            n += 1
        if n and any(_at(toks, n, w) for w in kb.want_verbs):
            found.append(orig[:n])
    if len(found) == 1:
        pq.args["recipient"] = parse_np(found[0], kb)


def _names(orig: list[str], kb: Knowledge) -> list[list[str]]:
    """The runs of capitalised words that name someone: after a title ("Mr Pemberton"), anywhere
    but the first word, or a first word that is no English word ("Tomasz wants ...")."""
    lex, verbs = load_lexicon(), load_verb_senses()
    out: list[list[str]] = []
    i = 0
    while i < len(orig):
        w = orig[i] if not _possessive(orig[i]) else orig[i][:-2]    # "Kenji's arm guard" names Kenji
        low = w.lower().split("'")[0]
        title = low in _TITLES and i + 1 < len(orig) and orig[i + 1][:1].isupper()
        if not (w[:1].isupper() and w.isalpha() or title) or low == "i" or low in kb.function_words:
            i += 1
            continue
        if not title and i == 0 and (lex.senses([low]) or verbs.sense(low) or any(_at([low], 0, p) for p in kb.lead_fillers)):
            i += 1                       # "Could ...", "Pass ...": a sentence's first word
            continue
        j = i + 1
        while j < len(orig) and w == orig[i] and orig[j][:1].isupper() and orig[j].split("'")[0].isalpha():
            j += 1
        out.append([o[:-2] if _possessive(o) else o for o in [w] + orig[i + 1:j]])
        i = j
    return out


def _one_from_earlier(pq: ParsedQuery, q: str, kb: Knowledge) -> None:
    """"Someone left a laptop running. Can you switch off the one that's still on?": "the one" of
    the request takes its noun from an earlier sentence (the last noun phrase WordNet knows there)."""
    obj = pq.args.get("object")
    if obj is None or obj.words != ["one"] or not (obj.states or obj.quals):
        return
    parts = _SENTENCE_BREAK.split(q)
    if len(parts) < 2:
        return
    found = _earlier_noun(parts[:-1], kb)
    if found:
        obj.words, obj.raw = found, " ".join(found)
        obj.text = f"{obj.text} ({' '.join(found)})"


def _earlier_noun(parts: list[str], kb: Knowledge) -> list[str] | None:
    """The last noun phrase WordNet knows (its singular words after a determiner) in the last of
    ``parts`` that has one; None when none has."""
    lex, dets = load_lexicon(), _single_determiners(kb) | {"a", "an", "some"}
    for part in reversed(parts):
        toks = [t.lower() for t in query_words(part)]
        found = None
        for i, t in enumerate(toks):
            if t not in dets:
                continue
            run = []
            for w in toks[i + 1:]:
                if w in kb.function_words or not lex.senses([singular(w)], whole=True):
                    break
                run.append(singular(w))
            if run:
                found = run
        if found:
            return found
    return None


def _its_part(pq: ParsedQuery, q: str, kb: Knowledge) -> None:
    """"The iron has run dry - fill its water tank": "its" names the thing an earlier part speaks
    of; acting on its part acts on it, so that thing is another name of the object, tried when
    the part itself is not in view ("fill its bowl" with the bowl in view fills the bowl)."""
    obj = pq.args.get("object")
    if obj is None or not obj.words or obj.alt is not None:
        return
    parts = [p for p in _PART_BREAK.split(q) if p.strip()]
    k = next((k for k, p in enumerate(parts) if re.search(rf"\bits\s+(?:\w+\s+){{0,2}}{re.escape(obj.raw.split()[-1])}\b",
                                                         p, re.IGNORECASE)), None)
    if k is None or k == 0:              # "its" must follow the part that names the thing
        return
    found = _earlier_noun(parts[:k], kb)
    if found and found != obj.words:
        obj.alt = parse_np(found, kb)


_HAND_WORDS = ("hand", "hands", "palm", "palms")
_HOLDERS = {"my": "me", "our": "us", "his": "him", "her": "her", "their": "them"}


def _into_hands(pq: ParsedQuery, q: str, kb: Knowledge) -> None:
    """"put it in his hands", "place the pen in Maria's hand": something put into someone's hand
    is handed to them (to "him", whom _pronoun_to_name then finds among the names)."""
    loc = pq.args.get("location")
    if pq.action != "place" or loc is None or loc.quals or [w for w in loc.raw.lower().split()] not in \
            ([h] for h in _HAND_WORDS) or "handover" not in kb.actions:
        return
    toks = query_words(q)
    k = next((k for k in range(1, len(toks)) if toks[k].lower() in _HAND_WORDS and toks[k - 1].lower() != "your"
              and (toks[k - 1].lower() in _HOLDERS or _possessive(toks[k - 1]))), None)
    if k is None:
        return
    who = toks[k - 1]
    pq.args = {"object": pq.args["object"],
               "recipient": parse_np([_HOLDERS.get(who.lower(), who[:-2] if _possessive(who) else who)], kb)}
    pq.action = "handover"


_TRAILING_PARTICLES = ("over", "across", "along", "round", "around")
# "hand across the pitcher", "carry the canteen across to the swimmer": a particle around the
# object; not in language.yaml particles, where "across to the swimmer" would read as a purpose
_ACROSS = "across"
_LET_HAVE = ("could", "can", "may", "might", "let")
_SEE_THAT = (("make", "sure", "that"), ("make", "sure"), ("see", "to", "it", "that"), ("see", "that"), ("ensure", "that"),
             ("ensure",))
_GETS = ("gets", "has", "receives", "get", "have", "receive")


def _let_have(q: str, kb: Knowledge) -> str:
    """"Could Amara have her passport back?", "Let the climber at the desk have this chalk bag":
    someone having something is it given to them ("give her passport back to Amara"). The one
    who has it must be a person: a capitalised name, a person word or a role noun."""
    orig = query_words(q)
    toks = [t.lower() for t in orig]
    toks, orig = _strip_lead(toks, orig, kb.lead_fillers)
    see = next((len(p) for p in _SEE_THAT if _at(toks, 0, p)), 0)
    if see:                              # "make sure Oluwaseun gets his scarf": the same, said as a result
        k = next((i for i in range(see + 1, len(toks) - 1) if toks[i] in _GETS), None)
        if k is None:
            return q
        toks, orig, k = ["let"] + toks[see:], ["let"] + orig[see:], k - see + 1
    elif len(toks) < 4 or toks[0] not in _LET_HAVE or "have" not in toks[2:-1]:
        return q
    else:
        k = toks.index("have", 2)
    who_t, who_o, what = toks[1:k], orig[1:k], orig[k + 1:]
    if who_t[0] in kb.subject_pronouns or who_t[0] in ("i", "we", "you"):
        return q                         # "could you have a look", "can I have the mug": not someone else
    dets = _single_determiners(kb)
    named = who_o[0][:1].isupper() and who_t[0] not in dets
    head = [singular(w) for w in who_t[1:2]] if who_t[0] in dets else []
    if not (named or any(singular(w) in kb.person_words or singular(w) in kb.role_nouns for w in who_t)
            or (head and load_lexicon().any_sense_under(head, [["person"]]))):
        return q
    what = [w for w in what if w.lower() not in ("back", "please")]
    if what and what[0].lower() in ("her", "his", "their", "my", "your", "our"):
        what = ["the"] + what[1:]        # "her passport": the passport, given to her
    return " ".join(["hand", "over"] + what + ["to"] + who_o)


def _verb_phrases(kb: Knowledge) -> list[tuple[tuple[str, ...], str]]:
    out = [(v, a.name) for a in kb.actions.values() for v in a.verbs]
    return sorted(out, key=lambda x: len(x[0]), reverse=True)


def _natural(q: str, kb: Knowledge, guess_verb: Callable[[str], str | None] | None = None) -> ParsedQuery:
    orig = _expand_contractions(query_words(q), kb)
    toks = [t.lower() for t in orig]
    toks, orig = _strip_lead(toks, orig, kb.lead_fillers)
    toks, orig = _strip_trail(toks, orig, kb.trail_fillers)
    later = ""
    c = _clause_break(toks, kb)
    if c is not None:                    # "take the banana and put it aside": the first request
        later = " ".join(orig[c:])
        toks, orig = _strip_trail(toks[:c], orig[:c], kb.trail_fillers)
    action, verb, body_t, body_o = None, "", toks, orig
    carried = False
    if toks and toks[0].endswith("ing"):    # "closing up the box": the verb's base form
        base = next((f for f in _verb_bases(toks[0]) if kb.action_for_verb(f)), None)
        if base is not None:
            toks = [base] + toks[1:]
    if toks and toks[0].startswith("re") and len(toks[0]) > 5 and not kb.action_for_verb(toks[0]) \
            and toks[0] not in kb.not_again_verbs and kb.action_for_verb(toks[0][2:]):
        toks = [toks[0][2:]] + toks[1:]  # "refill", "reopen": the action again is the action
    purpose = ""
    moved = _moved_to(toks, kb)
    if moved is not None:                # "shift the whole table nearer the window": where it goes
        purpose = " ".join(orig[moved:])
        toks, orig = toks[:moved], orig[:moved]
    end = _object_end(toks, kb)          # "switch the screen off for the night": the purpose apart
    if end is not None and end < len(toks):
        purpose = " ".join(orig[end:])
        toks, orig = toks[:end], orig[:end]
    result_action = _result_action(toks, kb)

    if len(toks) > 2 and toks[0] in kb.split_verbs and toks[-1] in kb.split_verbs[toks[0]] \
            and toks[1] not in kb.split_verbs[toks[0]]:
        action, verb = kb.split_verbs[toks[0]][toks[-1]], f"{toks[0]} {toks[-1]}"
        body_t, body_o = toks[1:-1], orig[1:-1]
    elif result_action is not None:      # "flip the laptop shut", "get the lamp on"
        action, verb = result_action, f"{toks[0]} {toks[-1]}"
        body_t, body_o = toks[1:-1], orig[1:-1]
    elif _verb_kind(toks, "carrying", kb) and "pick" in kb.actions:
        # "lug the perch scale out to the yard", "move the printer over to the box office": to carry
        # a thing it is picked up (where it goes is said apart, unless it goes to someone)
        action, verb, body_t, body_o = "pick", toks[0], toks[1:], orig[1:]
        carried = True
    else:
        phrases = _verb_phrases(kb)
        lid = _lid_move(toks[1:], kb) if toks and not kb.action_for_verb(toks[0]) else None
        if lid is not None:              # "twist the cap off the bottle", "pop the lid back on the tin"
            action, verb, body_t, body_o = lid, toks[0], toks[1:], orig[1:]
        wn = _wordnet_verb(toks, kb) if lid is None and toks and not kb.action_for_verb(toks[0]) else None
        poured = _liquid_into(toks, kb) if lid is None and wn is None else None
        if poured is not None:           # "pour some water into the kettle": fill the kettle
            wn = ("fill", poured)
        if lid is None and wn is None and toks and _dative(toks, kb):
            wn = ("handover", 1)         # "lend me the register that's open": before any later verb word
        if wn is not None:               # "unlock the padlock", "carve the ham": WordNet's sense of the verb
            action, n = wn
            verb, body_t, body_o = " ".join(toks[:1 if poured else n]), toks[n:], orig[n:]
            if n == 2 and len(body_t) > 2 and body_t[0] == "to" and body_t[1] in _single_determiners(kb):
                body_t, body_o = body_t[1:], body_o[1:]     # "hold on to the flask", "latch on to the rope"
        dets = _single_determiners(kb)
        for i in range(len(toks) if lid is None and wn is None else 0):
            if i > 0 and toks[i - 1] in dets:
                continue                 # "shave a slice off", "into the empty mould": a noun, no verb
            hit = next(((p, a) for p, a in phrases if _at(toks, i, p)), None)
            if hit:
                action, verb = hit[1], " ".join(hit[0])
                body_t, body_o = toks[i + len(hit[0]):], orig[i + len(hit[0]):]
                break
        if action is None and len(toks) > 2 and toks[1] in ("on", "off") and toks[1] in kb.result_states \
                and not kb.action_for_verb(toks[0]) and toks[2] not in ("with", "to", "from", "of", "at", "in") \
                and load_verb_senses().sense(toks[0]) is not None:
            # "flick off the heater", "click on the lamp": a verb the knowledge lacks with a
            # particle that says the result
            action, verb, body_t, body_o = kb.result_states[toks[1]], " ".join(toks[:2]), toks[2:], orig[2:]
        if action is None and toks and _dative(toks, kb):
            # "reach me the nippers", "toss us the rag": a verb the knowledge lacks that gives the
            # user something, as "pass me the nippers" does
            action, verb, body_t, body_o = "handover", toks[0], toks[1:], orig[1:]
        if action is None and toks:
            bare = _verbless(toks, kb)
            if bare is not None and "pick" in kb.actions:
                # "And the case to the right of the tape too": no verb, the object is asked for
                action, verb, body_t, body_o = "pick", "", toks[bare:], orig[bare:]
        if action is None and toks:
            n = 2 if len(toks) > 2 and toks[1] in kb.particles else 1
            guess = guess_verb(" ".join(toks[:n])) if guess_verb is not None else None
            if guess in kb.actions:      # a verb the knowledge lacks, read by its meaning
                action, verb, body_t, body_o = guess, " ".join(toks[:n]), toks[n:], orig[n:]
            else:
                verb, body_t, body_o = toks[0], toks[1:], orig[1:]
                split = _split_place(body_t, kb) if "place" in kb.actions else None
                if split is not None and split[0] > 0 and split[0] + split[1] < len(body_t) \
                        and split[2] in _INTO_ON:
                    # "stick the tulip in the vase": an object and where it goes (not "nab the
                    # bottle to the right of the mug", where the relation says which bottle)
                    action = "place"
        if verb in kb.split_verbs and len(body_t) > 1 and body_t[-1] in kb.split_verbs[verb]:
            action = kb.split_verbs[verb][body_t[-1]]
            body_t, body_o = body_t[:-1], body_o[:-1]
        if action is None and later:     # "unhook the wall cupboard and carry it over here": the
            then = _later_on_it(later, kb)   # first verb is no action, the next one on "it" is
            if then is not None:
                action, verb = then
        if (action is not None or verb) and len(body_t) > 1 and (body_t[0] in kb.particles or body_t[0] == _ACROSS) \
                and body_t[0] not in kb.result_states and (
                    not any(_at(body_t, 0, r.phrase) for r in kb.relations)
                    or (action != "place" and body_t[1] in _single_determiners(kb))):
            # "open up the box": the particle adds nothing; "bring over the bottle": a relation
            # needs an object before it, none stands before the particle
            body_t, body_o = body_t[1:], body_o[1:]
        if len(body_t) > 2 and body_t[-1] in _TRAILING_PARTICLES and body_t[-2] not in kb.function_words:
            body_t, body_o = body_t[:-1], body_o[:-1]     # "pass the rental shoes over": no place
    said = [verb] + ([f"{verb} {toks[1]}"] if len(toks) > 1 and toks[1] in kb.particles else [])
    by_verb = _open_or_close(said, [], kb, verb_only=True) if verb and "open" in kb.actions and "close" in kb.actions \
        else None
    lifted = len(said) > 1 and said[1].split()[-1] in ("up", "off", "back")     # "flip up the cap on ..."
    fastened = _fastening_of(body_t, kb, parts=action != "place" or by_verb is not None or lifted) \
        if action in (None, "place", "open", "close") and verb and kb.action_for_verb(verb) != "place" else None
    if fastened is not None and "open" in kb.actions and "close" in kb.actions:
        # "unhook the catch on the body cord", "flip the latches on the mic case", "loosen the cap of
        # the glue tube": the thing the fastening or lid holds shut is opened; closed by a verb of
        # closing or fastening ("do up the buckle on the bag", "tighten the cap on the bottle")
        reading = by_verb or (action if action in ("open", "close") else _open_or_close(said, body_t[:fastened - 1] + said[1].split()[1:] if len(said) > 1 else body_t[:fastened - 1], kb))
        if reading is not None:          # the verb first: "undo the lid on the tin" opens it
            action = reading
            body_t, body_o = body_t[fastened:], body_o[fastened:]
    cut = kb.action_for_verb("cut")
    if cut is not None and action in (None, "place") and kb.action_for_verb(verb) != "place" \
            and _divided(body_t, kb) is not None:
        action = cut                     # "separate the rope coil into two lengths": it is cut
    if cut is not None and action in (None, "place") and verb:
        through = _cutter_through(body_t, kb)
        if through is not None:          # "put the knife through the rope": the rope is cut, with the knife
            body_t, body_o = body_t[through:] + ["with"] + body_t[:through - 1], \
                body_o[through:] + ["with"] + body_o[:through - 1]
            action = cut
        elif action is None and _cuts_with(body_t, kb):   # "part the strip with the knife": a verb the knowledge
            action = cut                 # lacks, done with a cutting tool
        elif action is None and _verb_kind([verb] + body_t, "making", kb):
            made = _made_from(body_t, kb, also_of=True)
            if made is not None:         # "make two short lengths of the tape": the tape is cut
                action = cut

    t = next((i for i in range(2, len(body_t) - 1) if body_t[i] in kb.tail_leads
              and body_t[i + 1] in kb.subject_pronouns | {"it"}), None)
    if t is not None and not purpose:    # "hoist the ballot box so I can sweep under it": why, not which
        purpose = " ".join(body_o[t:])
        body_t, body_o = body_t[:t], body_o[:t]
    toward = next((len(p) for p in kb.toward_user if len(body_t) > len(p) and tuple(body_t[-len(p):]) == p), 0)
    if toward and action in (None, "handover") and "handover" in kb.actions:
        # "pass the triblet this way", "send the flask my way": the object comes to the user
        body_t, body_o = body_t[:-toward], body_o[:-toward]
        action = "handover"
    if action in ("pick", None) and body_t and _goes_to_someone(body_t, body_o, kb) and "handover" in kb.actions:
        action = "handover"              # "take the coin tray over to the client", "return this passport to Amara"
    if carried and action == "pick" and not purpose:
        d = _destination(body_t, kb)
        if d is not None:                # "... out to the weathering ground": where it goes, not which
            purpose = " ".join(body_o[d[1]:])
            body_t, body_o = body_t[:d[0]], body_o[:d[0]]
    if moved is not None and action in (None, "approach", "handover") and "pick" in kb.actions:
        action = "pick"                  # a thing moved elsewhere is carried
    if action not in (None, "handover") and len(body_t) > 1 and body_t[0] in kb.person_pronouns:
        body_t, body_o = body_t[1:], body_o[1:]          # "get me the apple": me is not the object
    if action is not None and verb:
        body_t, body_o = _inner_particle(action, verb, body_t, body_o, kb)
    body_t, body_o = _drop_participles(body_t, body_o, kb)
    result = ""
    made = _made_from(body_t, kb, also_of=_verb_kind([verb] + body_t, "making", kb)) \
        if action is not None and action == kb.action_for_verb("cut") else None
    if made is not None:                 # "cut a patch out of the neoprene sheet": the sheet is cut
        result = " ".join(body_o[:made[0]])
        body_t, body_o = body_t[made[1]:], body_o[made[1]:]
    if action in kb.actions and (len(kb.actions[action].roles) == 1 or action == "pick"):
        single = len(kb.actions[action].roles) == 1       # for pick only idioms ("out of the way")
        r = next((i for i in range(1, len(body_t)) if any(_at(body_t, i, p) and (single or len(p) > 2)
                                                          for p in kb.result_phrases)), None)
        if r is not None:                # "cut the bread into slices": what it makes, not the object
            result = " ".join(body_o[r:])
            body_t, body_o = body_t[:r], body_o[:r]
    if action in _MADE_FOR and not purpose and body_t and body_t[0] in _single_determiners(kb):
        f = next((i for i in range(2, len(body_t) - 1) if body_t[i] == "for" and body_t[i + 1].isalpha()
                  and not body_t[i + 1].endswith("ing") and body_t[i + 1] not in kb.function_words), None)
        if f is not None:                # "cut the bread for toast": what it is for, not which bread
            purpose = " ".join(body_o[f:])
            body_t, body_o = body_t[:f], body_o[:f]
    if action not in (None, "handover") and not purpose:
        single = action in kb.actions and len(kb.actions[action].roles) == 1
        r = next((i for i in range(1, len(body_t)) if any(_at(body_t, i, p) for p in kb.purpose_phrases)
                  and (single or body_t[i] != "to")
                  and not any(_at(body_t, j, rp.phrase) and j + len(rp.phrase) > i
                              for j in range(max(0, i - 3), i + 1) for rp in kb.relations)), None)
        if r is not None:                # "slice the lemon for the drinks": a purpose, not the object
            purpose = " ".join(body_o[r:])
            body_t, body_o = body_t[:r], body_o[:r]
    if action is not None and action == kb.action_for_verb("fill") and not purpose:
        f = next((i for i in range(2, len(body_t) - 1) if body_t[i] == "from"), None)
        if f is not None:                # "fill the drink bottle from the tap": where the water comes from
            purpose = " ".join(body_o[f:])
            body_t, body_o = body_t[:f], body_o[:f]
    if action in (None, "pick") and not purpose:
        o = next((i for i in range(1, len(body_t) - 1) if body_t[i] in _TRAILING_PARTICLES
                  and body_t[i + 1] in _DESTINATION and body_t[i + 1] != "in"), None)
        if o is not None:                # "heft the wheel over to the sink": where it goes, not "above"
            purpose = " ".join(body_o[o:])
            body_t, body_o = body_t[:o], body_o[:o]
    args: list[list[str]] = [body_o]
    place_rel = None
    if action == "place":
        split = _split_place(body_t, kb)
        if split:
            i, n, place_rel = split
            args = [body_o[:i], body_o[i + n:]]
    elif action == "handover":
        args = _split_handover(body_t, body_o, kb)
    if action == "place" and len(args) == 2 and args[1]:
        part = [singular(t.lower()) for t in _strip_lead([t.lower() for t in args[0]], list(args[0]),
                                                         kb.determiners)[0]]
        if len(part) == 1 and part[0] in kb.closing_parts:
            action, args = "close", [args[1]]   # "put the lid back on the jar": close the jar
    pq = _assign(action, verb, args, kb, False)
    obj = pq.args.get("object")
    if action == "pick" and obj is not None and obj.words and obj.words[-1] in kb.closing_parts:
        ref = next((r.ref for r in obj.quals if r.relations == FROM_RELATIONS and r.ref), None)
        if ref is not None:              # "take the lid off the jar": open the jar
            pq = _assign("open", verb, [], kb, False)
            pq.args["object"] = ref
    pq.text = q
    pq.place_relation = place_rel
    pq.later, pq.result, pq.purpose = later, result, purpose
    if action == "pick" and "object" in pq.args:
        src = next((r for r in pq.args["object"].quals if r.relations == FROM_RELATIONS and r.ref), None)
        if src is not None:
            pq.args["source"] = src.ref
    return pq


def _moved_to(toks: list[str], kb: Knowledge) -> int | None:
    """Where the words saying where a thing is moved start ("shift the whole table nearer the
    window", "heave the desk a bit to the left", "move the dressing table a little closer to
    me"): a `motion_leads` phrase after the object of a verb that is no action of the knowledge's
    own but moving ("move"), or a verb it lacks; None otherwise ("pick up the cup closer to the
    kettle" says which cup)."""
    if len(toks) < 4 or kb.action_for_verb(toks[0]) not in (None, "approach") or toks[0] in kb.split_verbs:
        return None
    for m in range(2, len(toks)):
        if toks[m - 1] in kb.function_words:
            continue
        lead = next((p for p in kb.motion_leads if _at(toks, m, p)), None)
        if lead is not None and not (m + len(lead) < len(toks) and toks[m + len(lead)] == "of"):
            return m
    return None


def _drop_participles(toks: list[str], orig: list[str], kb: Knowledge) -> tuple[list[str], list[str]]:
    """"the cheese sitting next to the oatcakes", "the heater lying near the pass": a participle
    between a noun and a relation says nothing the relation does not; dropped. Not a word that is
    itself a thing ("the ceiling", "the string", "the wall hanging" by WordNet)."""
    lex = load_lexicon()
    dets = _single_determiners(kb)
    for i in range(1, len(toks) - 1):
        w = toks[i]
        if not w.endswith("ing") or len(w) < 6 or toks[i - 1] in dets or toks[i - 1] in kb.function_words \
                or lex.senses([w], whole=True):
            continue
        if any(_at(toks, i + 1, r.phrase) for r in kb.relations):
            return toks[:i] + toks[i + 1:], orig[:i] + orig[i + 1:]
    return toks, orig


_LID_OFF = (("off",), ("from",), ("out", "of"))
_LID_ON = (("on",), ("onto",), ("back", "on"), ("back", "onto"))


def _lid_move(body: list[str], kb: Knowledge) -> str | None:
    """A verb the knowledge lacks whose object is a lid, cap or cork, moved off or onto something:
    "twist the cap off the ink bottle" reads as taking the lid off (pick, then open the bottle),
    "pop the lid back on the tin" as putting it on (place, then close). None otherwise."""
    dets = _single_determiners(kb)
    k = 1 if body and body[0] in dets else 0
    if len(body) < k + 3 or singular(body[k]) not in kb.closing_parts:
        return None
    if any(_at(body, k + 1, p) for p in _LID_OFF) and "pick" in kb.actions:
        return "pick"
    if any(_at(body, k + 1, p) for p in _LID_ON) and "place" in kb.actions:
        return "place"
    return None


def _wordnet_verb(toks: list[str], kb: Knowledge) -> tuple[str, int] | None:
    """(action, words of the verb) for a first word the knowledge lacks whose most frequent WordNet
    sense is, or lies directly under, the first sense of a verb of one of
    ``wordnet_verb_actions`` ("unlock" -> open, "pry open" -> open, "snip" -> slice); None otherwise."""
    if len(toks) < 2 or not (kb.wordnet_verb_actions or kb.wordnet_verb_anchors):
        return None
    senses = load_verb_senses()
    actions = kb.verbs_of(kb.wordnet_verb_actions)
    for a, anchors in kb.wordnet_verb_anchors.items():
        actions[a] = actions.get(a, []) + list(anchors)
    firsts = [toks[0]] + (_verb_bases(toks[0]) if toks[0].endswith("ing") else [])
    for n in ((2, 1) if len(toks) > 2 and toks[1] in kb.particles | set(kb.result_states) else (1,)):
        for first in firsts:
            action = senses.action_of(" ".join([first] + toks[1:n]), actions)
            if action is not None:
                return action, n
    return None


_SOURCE = (("out", "of"), ("off", "of"), ("off",), ("from",))


_INDEFINITE_AMOUNTS = ("a", "an", "some", "one", "two", "three", "few", "several", "a few", "another")


def _made_from(toks: list[str], kb: Knowledge, also_of: bool = False) -> tuple[int, int] | None:
    """"a patch out of the neoprene sheet", "a few shavings off the wax block", "some wick from the
    spool": something indefinite made from a definite thing; (end of what is made, start of the
    thing), or None. Not for an amount taken straight off it ("a piece off the felt"), which the
    noun phrase reads as any of what follows. ``also_of``: after a verb of making, "of" names
    the material too ("make two short lengths of the tape")."""
    start = 1 if toks and toks[0] in ("off", "out") else 0     # "slice off some wick from the spool"
    lead = next((start + len(p.split()) for p in sorted(_INDEFINITE_AMOUNTS, key=len, reverse=True)
                 if tuple(toks[start:start + len(p.split())]) == tuple(p.split())), 0)
    if len(toks) < lead + 3 or lead == start:
        return None
    if toks[lead] in kb.partitive_words and toks[lead + 1] in ("off", "from"):
        return None
    for i in range(lead + 1, min(len(toks) - 1, lead + 6)):
        src = next((p for p in _SOURCE + ((("of",),) if also_of else ()) if _at(toks, i, p)), None)
        if src is not None:
            k = i + len(src)
            if src == ("of",) and (k >= len(toks) or toks[k] not in _single_determiners(kb)):
                return None              # "make a cup of tea": what it is of, not made from
            return (i, k) if k < len(toks) and toks[k] not in _INDEFINITE_AMOUNTS else None
        if toks[i] in ("into", "in") and i + 1 < len(toks) and toks[i + 1] in _single_determiners(kb) \
                and not load_lexicon().senses([singular(toks[i - 1])]):
            return i, i + 1              # "carve a notch into the jig": a notch is no thing ("a lemon in the bowl" is)
    return None


_DESTINATION = ("to", "into", "onto", "toward", "towards", "in")


def _later_on_it(later: str, kb: Knowledge) -> tuple[str, str] | None:
    """(action, verb) of a later request whose object is "it"/"them", for an action of one object
    ("and carry it over here": pick; "then switch it on"); None otherwise."""
    toks = [t.lower() for t in query_words(later)]
    brk = next((b for b in kb.clause_breaks if _at(toks, 0, b)), None)
    toks = toks[len(brk):] if brk else toks
    if len(toks) < 2:
        return None
    if len(toks) > 2 and toks[1] in ("it", "them") and toks[2] in kb.split_verbs.get(toks[0], {}):
        return kb.split_verbs[toks[0]][toks[2]], f"{toks[0]} {toks[2]}"    # "then switch it on"
    hit = next(((p, a) for p, a in _verb_phrases(kb) if _at(toks, 0, p)), None)
    action, n = (hit[1], len(hit[0])) if hit else (None, 1)
    if action is None and _verb_kind([toks[0], "the", "it"], "carrying", kb):
        action = "pick"                  # "carry", "lug": to carry a thing it is picked up
    if action is None or action in ("place", "handover") or n >= len(toks) or toks[n] not in ("it", "them"):
        return None
    return action, " ".join(toks[:n])


def _verb_kind(toks: list[str], kind: str, kb: Knowledge) -> bool:
    """Whether the first word is a verb of ``kind`` (verb_kinds of language.yaml: its most frequent
    WordNet sense is, or lies directly under, an anchor's) followed by an object (a determiner; for
    making also an amount, "make two lengths of ...")."""
    anchors = kb.verb_kinds.get(kind)
    if not anchors or len(toks) < 3 or not (toks[1] in _single_determiners(kb) or
                                            (kind == "making" and toks[1] in _INDEFINITE_AMOUNTS + tuple(kb.piece_counts))):
        return False
    if kb.action_for_verb(toks[0]) not in (None, "approach"):
        return False                     # "pass the salt", "bring the cup": the knowledge's own reading
    senses = load_verb_senses()
    if senses.action_of(toks[0], {kind: list(anchors)}) != kind:
        return False
    # the ways to travel ("walk", "follow", "go") share "move"'s sense: only the anchor itself
    return toks[0] in anchors or senses.action_of(toks[0], {"travel": ["travel"]}) != "travel"


def _verbless(toks: list[str], kb: Knowledge) -> int | None:
    """Where the object starts in a request with no verb ("And the case to the right of the tape
    too", "Now the hood"): after continuation leads, at a determiner, with no auxiliary after it
    (not "the mug is dirty"); None otherwise."""
    lead = next((len(p) for p in sorted(kb.continuation_leads, key=len, reverse=True) if _at(toks, 0, p)), 0)
    if len(toks) < lead + 2 or toks[lead] not in _single_determiners(kb):
        return None
    cond = next((i for i in range(lead, len(toks)) if toks[i] in ("if", "when", "whenever")), len(toks))
    if any(t in _AUX or t in _BE_NOT for t in toks[lead:cond]):
        return None                      # "the mug is dirty"; not "..., if you would"
    return lead


_FASTEN = ("fasten", "do up", "secure", "tighten")


def _open_or_close(said: list[str], part: list[str], kb: Knowledge, verb_only: bool = False) -> str | None:
    """What a verb does to the thing whose fastening or lid it handles: close for a verb of closing
    or fastening (WordNet, _FASTEN), open for one of opening or undoing (_UNFASTEN); for a
    fastening any other verb opens ("flip the latches"), for a lid only with "back"/"off"/"up"
    ("peel the lid back"); None otherwise ("wipe the cover of the book")."""
    senses = load_verb_senses()
    shut = {"close": [" ".join(v) for v in kb.actions["close"].verbs] + list(_FASTEN)}
    opens = {"open": [" ".join(v) for v in kb.actions["open"].verbs] + list(_UNFASTEN)}
    if any(kb.action_for_verb(v) == "close" or senses.action_of(v, shut) == "close" for v in said):
        return "close"
    if any(kb.action_for_verb(v) == "open" or senses.action_of(v, opens) == "open" for v in said):
        return "open"
    if verb_only:
        return None
    words = [singular(w) for w in part if w not in _single_determiners(kb)]
    if words and words[-1] not in kb.closing_parts and words[-1] not in ("back", "off", "up"):
        return "open"                    # a fastening
    return "open" if any(w in ("back", "off", "up") for w in part) else None


_UNFASTEN = ("undo", "unfasten", "remove", "loosen")


def _fastening_of(toks: list[str], kb: Knowledge, parts: bool = True) -> int | None:
    """"the catch on the green body cord", "the latches of the case", "the lid back on the tin":
    where the thing a fastening (WordNet: a latch, clasp, buckle, zip, catch...) or, with
    ``parts``, a closing part (closing_parts: lid, cap, cover...) belongs to starts, or None."""
    dets = _single_determiners(kb)
    k = 1 if toks and toks[0] in dets else 0
    for i in range(k + 1, min(len(toks) - 1, k + 4)):
        if toks[i] not in ("on", "of") or (toks[i + 1] not in dets and toks[i + 1] not in ("whichever", "whatever")):
            continue
        part = [singular(w) for w in toks[k:i] if w not in kb.particles]
        if part and ((parts and part[-1] in kb.closing_parts) or
                     load_lexicon().any_sense_under(part[-1:], [["fastening"]], senses=6)):
            return i + 1
    return None


def _divided(toks: list[str], kb: Knowledge) -> int | None:
    """Where "into two ...", "in half", "into single stubs" starts (the object is divided), or None."""
    for i in range(1, len(toks) - 1):
        if toks[i] in ("into", "in") and toks[i + 1] in kb.piece_counts:
            return i
    return None


def _cutting_tool(words: list[str], kb: Knowledge) -> bool:
    """Whether a noun phrase's head names a cutting tool (a type of the cutting_tools list, or its
    head word: "knife"; or a kind of knife by WordNet: "scalpel")."""
    words = [singular(w) for w in words if w not in _single_determiners(kb)]
    if not words:
        return False
    heads = {(type_words(t) or [""])[-1] for t in kb.type_lists.get("cutting_tools", ())}
    return words[-1] in heads or bool(load_lexicon().is_a([words[-1]], ["knife"]))


def _cuts_with(toks: list[str], kb: Knowledge) -> bool:
    """"... with the knife" / "using that knife" at the end: done with a cutting tool."""
    w = next((i for i in range(1, len(toks) - 1) if toks[i] in kb.instrument_words), None)
    return w is not None and _cutting_tool(toks[w + 1:], kb)


def _cutter_through(toks: list[str], kb: Knowledge) -> int | None:
    """"the knife through the rope coil": where the thing cut starts, or None."""
    t = next((i for i in range(2, len(toks) - 1) if toks[i] == "through"), None)
    return t + 1 if t is not None and toks[0] in _single_determiners(kb) and _cutting_tool(toks[:t], kb) else None


def _destination(toks: list[str], kb: Knowledge) -> tuple[int, int] | None:
    """Where a carried object's destination starts ("out to the weathering ground", "into the live
    room", "over to the box office"): (end of the object, start of the place), or None. Not a
    relation ("to the left of the mug" says which object)."""
    for i in range(1, len(toks) - 1):
        if toks[i] not in _DESTINATION or any(_at(toks, j, r.phrase) and i < j + len(r.phrase)
                                                for j in range(max(0, i - 3), i + 1) for r in kb.relations):
            continue
        end = i - 1 if toks[i - 1] in kb.particles or toks[i - 1] in _TRAILING_PARTICLES else i
        return (end, i + 1) if end > 0 else None
    return None


_MADE_FOR = ("slice", "cook", "clean", "fill", "empty")    # "cut the bread for toast": what the result is for
_NEEDS = ("needs", "need", "wants", "want")
_DO_IT = (("do", "that"), ("do", "it"), ("do", "this"), ("sort", "that"), ("sort", "it"), ("see", "to", "it"),
          ("see", "to", "that"), ("take", "care", "of", "it"), ("take", "care", "of", "that"))


def _needs_doing(q: str, kb: Knowledge) -> str:
    """"The oil can that's empty needs filling, could you do that?", "The mug needs washing" ->
    "fill the oil can that's empty": a thing that needs an action done to it (a verb in -ing whose
    action the knowledge or WordNet knows), with at most a request to do it after."""
    parts = [p.strip() for p in _PART_BREAK.split(q) if p.strip()]
    if not parts:
        return q
    orig = _expand_contractions(query_words(parts[0]), kb)
    toks = [t.lower() for t in orig]
    k = next((i for i in range(2, len(toks) - 1) if toks[i] in _NEEDS and toks[i + 1].endswith("ing")), None)
    if k is None or toks[0] not in _single_determiners(kb) or k + 2 < len(toks) and toks[k + 2] not in kb.state_adverbs:
        return q
    anchors = kb.verbs_of(kb.wordnet_verb_actions)
    base = next((b for b in _verb_bases(toks[k + 1])
                 if kb.action_for_verb(b) or load_verb_senses().action_of(b, anchors)), None)
    if base is None:
        return q
    rest = []
    for part in parts[1:]:
        t = _strip_lead([w.lower() for w in query_words(part)], query_words(part), kb.lead_fillers)[0]
        t = _strip_trail(t, list(t), kb.trail_fillers)[0]
        if not any(tuple(t) == p for p in _DO_IT):
            rest.append(part)
    return " , ".join([" ".join([base] + orig[:k])] + rest)


_WANT = (("need",), ("want",), ("would", "like"), ("would", "love"), ("like",))    # "I'd like": the 'd is cut
_SAME_PARTICIPLE = ("cut", "shut", "put", "split", "set", "slit", "spread")    # said as the verb


def _wants_done(q: str, kb: Knowledge) -> str:
    """"..., so I need the cucumber cut into rounds", "I want the door closed", "we'd like the
    lamp switched off" -> "cut the cucumber into rounds", "close the door", "switch off the lamp":
    a speaker who wants a thing in the state an action leaves it asks for the action (a past
    participle whose verb the knowledge or WordNet reads as an action). Not "I'd like the teacup
    that hasn't been poured" (a relative clause says which one), nor a participle before the
    noun ("I want the sliced bread")."""
    parts = [p.strip() for p in _PART_BREAK.split(q) if p.strip()]
    dets = _single_determiners(kb)
    anchors = kb.verbs_of(kb.wordnet_verb_actions)
    for n, part in enumerate(parts):
        if n and _starts_request(parts[n - 1], kb):
            break                        # "Switch the toaster on? I'd like my bread toasted": a reason
        orig = _expand_contractions(query_words(part), kb)
        toks, orig = _strip_lead([t.lower() for t in orig], orig, kb.lead_fillers)
        if len(toks) < 5 or toks[0] not in ("i", "we"):
            continue
        want = next((w for w in _WANT if _at(toks, 1, w)), None)
        d = 1 + len(want) if want else None
        if d is None or d >= len(toks) or toks[d] not in dets:
            continue
        for k in range(d + 2, min(len(toks), d + 6)):
            w = toks[k]
            if w in kb.function_words or w in _RELATIVE or w in _AUX:
                break
            bases = [w] if w in _SAME_PARTICIPLE else _participle_bases(w)
            part_of = toks[k + 1] if k + 1 < len(toks) and toks[k + 1] in kb.particles else None
            # "switched off": the phrasal verb with its particle first, then the verb alone
            base = next((f"{b} {part_of}" for b in bases if part_of and kb.action_for_verb(f"{b} {part_of}")), None)
            rest = orig[k + 2:] if base else orig[k + 1:]
            base = base or next((b for b in bases if kb.action_for_verb(b) or load_verb_senses().action_of(b, anchors)),
                                None)
            if base is not None:
                return " , ".join(parts[:n] + [" ".join([base] + orig[d:k] + rest)] + parts[n + 1:])
    return q


def _instrument_first(q: str, kb: Knowledge) -> str:
    """"Use the knife to split the mandrel" and "With the knife, saw the microphone in two" ->
    "split the mandrel with the knife": the instrument said first goes after the request."""
    m = re.match(r"^\s*(with|using)\s+(\S+)\s+([^,;:]+?)\s*,\s*(\S.*)$", q, re.I | re.S)
    if m and m.group(2).lower() in _single_determiners(kb):
        return f"{m.group(4).rstrip(' .!?')} {m.group(1).lower()} {m.group(2)} {m.group(3)}"
    orig = query_words(q)
    toks = [t.lower() for t in orig]
    dets = _single_determiners(kb)
    u = next((i for i, t in enumerate(toks[:-3]) if t in ("use", "using") and toks[i + 1] in dets), None)
    if u is None or (u > 0 and not _strip_lead(toks[:u], orig[:u], kb.lead_fillers)[0] == []):
        return q
    for j in range(u + 2, len(toks) - 1):
        if toks[j] == "to" and toks[j + 1] not in dets and toks[j + 1] not in kb.function_words \
                and not any(_at(toks, k, r.phrase) and j < k + len(r.phrase)
                            for k in range(max(0, j - 3), j + 1) for r in kb.relations):
            return " ".join(orig[:u] + orig[j + 1:] + ["with"] + orig[u + 1:j])
    return q


_INTO = ("into", "in", "inside", "to")
_INTO_ON = ("inside", "on top of")


def _dative(toks: list[str], kb: Knowledge) -> bool:
    """"reach me the nippers", "chuck us the rag": a first word the knowledge lacks, then the user
    (me, us), then a noun phrase with a determiner."""
    if len(toks) < 4 or "handover" not in kb.actions or kb.action_for_verb(toks[0]) \
            or toks[0] in kb.function_words or toks[1] not in kb.user_words:
        return False
    return toks[2] in _single_determiners(kb) and load_verb_senses().sense(toks[0]) is not None
_SOME = ("some", "a", "more", "little", "bit", "drop", "dash", "splash", "of")


def _liquid_into(toks: list[str], kb: Knowledge) -> int | None:
    """"pour some water into the kettle", "add a splash of milk to the jug", "put some water in
    the glue pot": a liquid (by WordNet) moved into something fills that thing. The index where
    the thing's phrase starts, or None. With a verb the knowledge knows (put, get) only for an
    amount of liquid, not "the milk" (a carton: "put the milk in the fridge"); "to" only after a
    verb the knowledge lacks ("add")."""
    if "fill" not in kb.actions or len(toks) < 4:
        return None
    known = kb.action_for_verb(toks[0])
    if known not in (None, "place", "pick"):
        return None
    k = next((k for k in range(2, min(len(toks) - 1, 7)) if toks[k] in _INTO
              and (toks[k] != "to" or known is None) and (toks[k] == "into" or known != "pick")), None)
    if k is None:
        return None
    before = toks[1:k]
    lead = 1 if len(before) > 1 and before[0] in kb.user_words else 0    # "pour me some water in the mug"
    dets = _single_determiners(kb)
    while lead < len(before) - 1 and (before[lead] in _SOME or (known is None and before[lead] in dets)):
        lead += 1
    liquid = before[lead:]
    if not liquid or len(liquid) > 3 or any(w in kb.function_words for w in liquid):
        return None
    if known is not None and lead == 0 and before[0] in {d[0] for d in kb.determiners if len(d) == 1}:
        return None
    verbs = load_verb_senses()
    pours = verbs.sense(toks[0]) is not None and verbs.action_of(toks[0], {"pour": ["pour"]}) == "pour"
    if not pours and not load_lexicon().under_any(liquid, [["liquid"], ["beverage"]]):
        return None                      # "pour wax into the mould": what is poured fills it, liquid or not
    return k + 1


def _goes_to_someone(toks: list[str], orig: list[str], kb: Knowledge) -> bool:
    """"take the coin tray over to the client", "take this whistle to Aisha Bello": what is taken
    goes to a person (a pronoun, a person or role noun, a capitalised name after "to")."""
    dets = _single_determiners(kb)
    for i in range(1, len(toks) - 1):
        if toks[i] != "to" or any(_at(toks, j, r.phrase) and i < j + len(r.phrase)
                                  for j in range(max(0, i - 3), i + 1) for r in kb.relations):
            continue                     # "next to me", "to the left of the customer": a relation
        rest_t, rest_o = toks[i + 1:], orig[i + 1:]
        k = 1 if rest_t[0] in dets and len(rest_t) > 1 else 0
        if (len(rest_t) == 1 and rest_t[0] in kb.person_pronouns) or (k == 0 and rest_o[0][:1].isupper()) \
                or any(_is_person_noun(w, kb) for w in rest_t[k:]):
            return True
    return False


def _is_person_noun(word: str, kb: Knowledge) -> bool:
    """A person word, a role noun of person_nouns.txt, or a noun one of whose two most frequent
    WordNet senses is a person ("the teacher", "the swimmer")."""
    w = singular(word)
    return w in kb.person_words or w in kb.role_nouns or \
        (w.isalpha() and w not in kb.function_words and load_lexicon().any_sense_under([w], [["person"]]))


def _single_determiners(kb: Knowledge) -> set[str]:
    """The one-word determiners of language.yaml ("the", "this", "my")."""
    return {d[0] for d in kb.determiners if len(d) == 1}


def _verb_bases(word: str) -> list[str]:
    """"closing" -> close, "grabbing" -> grab, "opening" -> open: candidate base forms of a gerund."""
    stem = word[:-3]
    out = [stem, stem + "e"]
    if len(stem) > 2 and stem[-1] == stem[-2]:
        out.append(stem[:-1])
    return out


def _object_end(toks: list[str], kb: Knowledge) -> int | None:
    """Where a purpose starts after a final particle or result word: "switch the screen off for the
    night" -> 4 ("for the night"); None when there is no such purpose."""
    for e in range(2, len(toks) - 1):
        if (toks[e] in kb.result_states or toks[e] in kb.particles) and \
                (any(_at(toks, e + 1, p) for p in kb.purpose_phrases) or toks[e + 1] in kb.tail_leads) and \
                not any(_at(toks, e, r.phrase) and len(toks) > e + len(r.phrase) for r in kb.relations
                        if toks[e] not in kb.result_states):
            return e + 1
    return None


_CAUSATIVE = ("get", "set", "start", "have")


def _result_action(toks: list[str], kb: Knowledge) -> str | None:
    """"flip the laptop shut", "get the lamp on", "put the kettle on": a verb, its object and the
    state it should end in (language.yaml result_states); None otherwise. Not for the split
    verbs ("turn the lamp on"), nor when the object is a lid ("take the lid off")."""
    if len(toks) > 3 and toks[0] in _CAUSATIVE and toks[1] in _single_determiners(kb) and toks[-1] not in kb.result_states \
            and toks[-1].endswith("ing") and toks[-1] not in _CONNECTORS and "turn_on" in kb.actions \
            and any(load_verb_senses().sense(b) for b in _verb_bases(toks[-1])):
        # "get the metronome ticking", "have the fan spinning": make it run; not a thing named by a
        # noun in -ing ("get the turkey stuffing") unless what comes before is a device
        lex = load_lexicon()
        if not lex.senses([toks[-1]], whole=True) or lex.is_a([singular(toks[-2])], ["device"]):
            return "turn_on"
    if len(toks) < 3 or toks[-1] not in kb.result_states or toks[-1] in kb.split_verbs.get(toks[0], {}):
        return None
    if toks[-2] in ("is", "are", "was", "be", "been", "that's", "left") or toks[-2] in kb.state_adverbs or \
            any(len(s.phrase) > 1 and tuple(toks[-len(s.phrase):]) == s.phrase for s in kb.states):
        return None                      # "grab whatever is switched on": a state, not a result
    dets = _single_determiners(kb)
    if toks[0] in dets or toks[1] in kb.particles:
        return None
    own = kb.action_for_verb(toks[0])
    if own is not None and own in kb.result_states.values():
        return None                      # "open the box up": the verb says it
    if singular(toks[-2]) in kb.closing_parts:
        return None
    action = kb.result_states[toks[-1]]
    return action if action in kb.actions else None


def _inner_particle(action: str, verb: str, toks: list[str], orig: list[str],
                    kb: Knowledge) -> tuple[list[str], list[str]]:
    """"set the loaf down on the scale", "put the lid back on the jar": the particle of a
    phrasal verb of the same action, split off by its object, is not part of the object."""
    verbs = {p for p, a in _verb_phrases(kb) if a == action}
    dets = _single_determiners(kb)
    for i in range(1, len(toks)):
        if (toks[i] not in kb.particles and toks[i] != _ACROSS) or (tuple(verb.split()) + (toks[i],) not in verbs
                                           and toks[i] in kb.result_states):
            continue
        if toks[i - 1] in dets and toks[i - 1] not in _PRONOUN_OBJECTS:
            continue                     # "the cereal box at the back": a noun after a determiner
            #                              (not "hand this over to Nadia")
        nxt = i + 1
        if nxt < len(toks) and (any(_at(toks, nxt, p) for p, _ in kb.place_prepositions)
                                or (action == "handover" and toks[nxt] in kb.handover_prepositions)) \
                and toks[i] not in kb.result_states:
            return toks[:i] + toks[i + 1:], orig[:i] + orig[i + 1:]   # "pass the stapler over to her"
        if any(_at(toks, i, r.phrase) for r in kb.relations):
            continue                     # "out of", "off": a qualifier, not a particle
        if nxt == len(toks) or any(_at(toks, nxt, p) for p, _ in kb.place_prepositions) \
                or any(_at(toks, nxt, r.phrase) for r in kb.relations):
            return toks[:i] + toks[i + 1:], orig[:i] + orig[i + 1:]
    return toks, orig


_ASKS = ("whether", "if", "what", "how", "why")    # a verb asking something: "check whether", "see if"


def _clause_break(toks: list[str], kb: Knowledge) -> int | None:
    """Where a second request starts ("... and put it aside", "..., then fill it"): a clause
    break followed by a verb, after a first part that has a verb; None when there is none."""
    phrases = _verb_phrases(kb)
    for c in range(2, len(toks) - 1):
        brk = next((b for b in kb.clause_breaks if _at(toks, c, b)), None)
        if brk is None:
            continue
        k = c + len(brk)
        # "and put it aside": a verb must follow a bare "and"; "and then serve it" needs none; a
        # verb the knowledge lacks counts when WordNet has it and an object follows ("and carry it")
        verb_next = any(_at(toks, k, p) for p, _ in phrases) or (
            k + 1 < len(toks) and load_verb_senses().sense(toks[k]) is not None
            and (toks[k + 1] in ("it", "them") or toks[k + 1] in _single_determiners(kb)
                 or toks[k + 1] in _ASKS))       # "and check whether someone wrote in it"
        if (len(brk) > 1 or brk[0] != "and" or verb_next) and (
                toks[0] in kb.split_verbs or any(_at(toks, i, p) for i in range(c) for p, _ in phrases)
                or (verb_next and k + 1 < len(toks) and toks[k + 1] in ("it", "them")
                    and toks[1] in _single_determiners(kb) and load_verb_senses().sense(toks[0]))):
            return c                     # "unhook the wall cupboard and carry it": a verb WordNet has
    return None


def _split_place(toks: list[str], kb: Knowledge) -> tuple[int, int, str] | None:
    """Where "put X in Y" turns from the object to the location: (index, length, relation)."""
    for i in range(1, len(toks)):
        if i >= 2 and tuple(toks[i - 2:i]) in (("that", "is"), ("which", "is")) or toks[i - 1] == "that's":
            continue
        rel = next(((p, r) for p, r in kb.place_prepositions if _at(toks, i, p)), None)
        full = next((r for r in kb.relations if _at(toks, i, r.phrase) and r.relations), None)
        if full is not None and (rel is None or len(full.phrase) > len(rel[0])):
            if len(full.relations) == 1 and not full.inverse:
                return i, len(full.phrase), full.relations[0]
            continue
        if rel is not None:
            return i, len(rel[0]), rel[1]
    return None


def _split_handover(toks: list[str], orig: list[str], kb: Knowledge) -> list[list[str]]:
    """"give the medicine to Adriana", "give me the apple", "hand Adriana the medicine"."""
    if len(toks) > 1 and toks[0] in kb.person_pronouns:
        return [orig[1:], orig[:1]]
    dets = _single_determiners(kb)
    k = 1 if toks and toks[0] in dets else 0
    if len(toks) > k + 1 and (singular(toks[k]) in kb.person_words or singular(toks[k]) in kb.role_nouns) \
            and toks[k + 1] in dets:
        return [orig[k + 1:], orig[:k + 1]]      # "give the visitor the book", "give the customer their receipt"

    first = kb.handover_prepositions[0] if kb.handover_prepositions else None
    for i in range(len(toks) - 1, 0, -1):
        if any(_at(toks, j, r.phrase) and i < j + len(r.phrase) for j in range(max(0, i - 3), i) for r in kb.relations):
            continue                     # "to the customer standing next to you": "to" of a relation
        if toks[i] == first and i + 1 < len(toks) and kb.names_anything(toks[i - 1:i]) \
                and orig[i + 1][:1].islower() and toks[i + 1] not in kb.person_pronouns \
                and toks[i + 1] not in kb.user_words and load_verb_senses().sense(toks[i + 1]) is not None:
            continue                     # "I need something to sweep the floor with": a use, not someone
        if toks[i] in kb.handover_prepositions and (toks[i] == first or _names_a_person(toks[i + 1:], orig[i + 1:], kb)):
            # "give the nippers to the guest waiting for a manicure": a later "for" whose phrase
            # names no one ("for a manicure") says what for, not to whom
            return [orig[:i], orig[i + 1:]]
    n = 0                                # "hand Dr Osei the forceps": a name of capitalised words
    while n < min(3, len(orig) - 2) and orig[n][:1].isupper() and toks[n] not in dets:
        n += 1
    if n and (toks[n] in dets or toks[n] in ("whatever", "what")):
        return [orig[n:], orig[:n]]      # "give Lily whatever you're holding"
    return [orig]


def _names_a_person(toks: list[str], orig: list[str], kb: Knowledge) -> bool:
    """Whether a phrase after "for" may name someone: a pronoun ("for me", "for her"), a name
    ("for Kenji"), or a head that is a person word or, by WordNet, a person ("for the customer")."""
    if not toks:
        return False
    if toks[0] in kb.person_pronouns or toks[0] in kb.user_words or orig[0][:1].isupper():
        return True
    dets = _single_determiners(kb)
    k = 1 if toks[0] in dets else 0
    if k < len(orig) and orig[k][:1].isupper():
        return True
    head = next((t for t in toks[k:] if t.isalpha()), None)
    return head is not None and _is_person_noun(head, kb)


# --------------------------------------------------------------------------- context
def merge_context(pq: ParsedQuery, context: str, kb: Knowledge) -> None:
    """Fold a clarification into the query: who a person is, or which object is meant."""
    for sentence in (x for line in context.strip().splitlines() for x in _SENTENCE_BREAK.split(line)):
        orig = _expand_contractions(query_words(sentence), kb)
        toks = [t.lower() for t in orig]
        if not toks:
            continue
        lead = next((p for p in kb.identity_leads if _at(toks, 0, p)), None)
        if lead is not None and len(toks) > len(lead):
            name = toks[len(lead)]
            dets = _single_determiners(kb)
            if name not in dets and kb.category_of([name]) is None and name not in kb.person_words:
                pq.person_hint = name
                continue
        named = _name_of_role(toks, orig, kb)
        if named is not None:            # "Hana is the receptionist", "the receptionist is Hana"
            pq.role_names[named[0]] = named[1]
            continue
        statement = any(t in _COPULAS for t in toks[1:])
        toks, orig = _strip_lead(toks, orig, kb.context_leads)
        toks, orig = _strip_lead(toks, orig, kb.lead_fillers)
        if not toks:
            continue
        np = parse_np(orig, kb)
        if not (np.words or np.states or np.quals):
            continue
        pq.context_np = np
        role = _context_role(pq, np, kb)
        if role is None:
            objects = [r for r in pq.role_order(kb) if r not in ("recipient", "target")]
            if len(objects) == 1 and not statement and np.words:
                pq.args[objects[0]].alt = np     # "my lines, the binder with the script in it"
            continue
        if statement and _about_people(pq, role, kb) and not any(o[:1].isupper() for o in orig[1:]):
            # "the other guest has just left", "she's the only one still waiting": a remark about
            # the people present that names no one; the person is found among those present
            continue
        target = pq.args[role]
        generic = not np.words or kb.category_of(np.words) == "thing" or np.words[-1] in ("one", "it")
        if not generic:
            specific = any(ch.isdigit() for ch in np.raw) or "_" in np.raw
            target_generic = not target.words or kb.category_of(target.words) is not None
            if specific or target_generic or not (set(np.words) & set(target.words)):
                target.raw, target.words = np.raw, np.words
        target.states.extend(np.states)
        target.quals.extend(np.quals)
        target.text = f"{target.text} ({np.text})"


_COPULAS = frozenset({"is", "are", "was", "were", "has", "have", "had"})


def _name_of_role(toks: list[str], orig: list[str], kb: Knowledge) -> tuple[str, str] | None:
    """(role head, name) from "<Name> is the <role>" or "the <role> is <Name>", where the role's
    head is a person word or, by WordNet, a person ("Hana is the receptionist")."""
    if "is" not in toks or len(toks) < 4:
        return None
    k = toks.index("is")
    left, right = orig[:k], orig[k + 1:]
    for name, role in ((left, right), (right, left)):
        if len(name) != 1 or not name[0][:1].isupper() or name[0].lower() in _single_determiners(kb):
            continue
        words = [singular(t.lower()) for t in role if t.isalpha()]
        if len(words) < 2 or words[0] not in _single_determiners(kb) or name[0].lower() in kb.person_pronouns:
            continue
        # the head: the last word before a preposition or clause ("the teacher on snack duty today")
        end = next((i for i in range(2, len(words)) if words[i] in kb.function_words), len(words))
        head = words[end - 1]
        if _is_person_noun(head, kb):
            return head, name[0].lower()
    return None


def _about_people(pq: ParsedQuery, role: str, kb: Knowledge) -> bool:
    """Whether an argument is a person: the recipient, or a phrase headed by a person word."""
    np = pq.args[role]
    return role == "recipient" or np.raw.lower() in kb.person_pronouns or \
        bool(np.words and np.words[-1] in kb.person_words)


def _context_role(pq: ParsedQuery, np: NP, kb: Knowledge) -> str | None:
    roles = pq.role_order(kb)
    if not roles:
        return None
    personish = bool(set(np.words) & kb.person_words)
    if personish:
        for r in roles:
            if r in ("recipient", "target"):
                return r
    for r in roles:
        if set(np.words) & set(pq.args[r].words):
            return r
    cat = kb.category_of(np.words) if np.words else None
    for r in roles:
        if cat is not None and kb.category_of(pq.args[r].words) == cat:
            return r
    if not np.words or cat == "thing" or np.words[-1] in ("one", "it"):
        return roles[0]              # "the one by the plant": about the first target
    head = np.words[-1]
    for r in roles:                  # a vague target ("it", "the fruit"): the clarification names it
        words = pq.args[r].words     # when it is such a thing ("the banana")
        tcat = kb.category_of(words) if words else None
        if not words or (tcat is not None and kb.in_category(head, tcat)):
            return r
    return None                      # it names something else than every target: not about them
