"""Reading a query into an action and its arguments, each a noun phrase with qualifiers.

Three forms are understood: structured ``pick(Mug, CounterTop)``, PDDL-like
``pick adrianas_medicine medicine_counter`` and natural language ("Could you pick up the
clean mug to the right of the apple?"). A noun phrase keeps its head words ("mug"), state
qualifiers ("clean"), spatial qualifiers ("to the right of" + another noun phrase) and
superlatives ("closest to the plant", "the nearest mug"). A person's clarification
("It's the medicine that is closest to the plant.", "I am Adriana.") is merged in.
All the vocabulary comes from data/knowledge/language.yaml.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from raider_ros.common.text import singular, split_words

from .knowledge import Knowledge

_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:'[A-Za-z]+)?")
_KEEP_APOSTROPHE = {"it's", "that's", "what's", "there's", "he's", "she's", "i'm", "let's", "who's"}
_CONNECTORS = {"that", "which", "who", "is", "are", "that's", "located", "placed", "sitting", "lying",
               "standing", "found", "kept", "the", "and", "one", "was", "being", "currently", "right",
               "just", "directly", "somewhere", "stored"}
_STRUCTURED = re.compile(r"^\(?\s*([A-Za-z][A-Za-z_ ]{0,40}?)\s*\((.*)\)\s*\)?\s*[.!?]?\s*$", re.S)
FROM_RELATIONS = ("on top of", "inside")


@dataclass
class StateQual:
    key: str
    value: bool
    word: str
    nothing_inside: bool = False


@dataclass
class RelQual:
    phrase: str                         # as written: "to the left of"
    relations: tuple[str, ...]          # check_obj_relationship names (any of them)
    ref: "NP | None"                    # None: the robot (superlatives only)
    inverse: bool = False
    superlative: str | None = None      # min | max
    position: bool = False              # among the candidates: none of the others is <relation> it


@dataclass
class NP:
    text: str                           # the whole phrase, cleaned, for sentences
    raw: str                            # head as written (original case), for id matching
    words: list[str]                    # singular lower-case head words
    states: list[StateQual] = field(default_factory=list)
    quals: list[RelQual] = field(default_factory=list)
    personal: bool = False              # about the user: "my favourite fruit"

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
    context_np: NP | None = None

    def role_order(self, kb: Knowledge) -> list[str]:
        roles = list(kb.actions[self.action].roles) if self.action in kb.actions else ["object"]
        return [r for r in roles if r in self.args] + [r for r in self.args if r not in roles]


# --------------------------------------------------------------------------- tokens
def query_words(text: str) -> list[str]:
    out = []
    for t in _TOKEN.findall(text.replace("\u2019", "'").replace("-", " ")):
        low = t.lower()
        if "'" in t and low not in _KEEP_APOSTROPHE and not low.endswith("n't"):
            t = t.split("'")[0]          # possessive: adriana's -> adriana
        out.append(t)
    return out


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
def parse_np(orig: list[str], kb: Knowledge) -> NP:
    """A noun phrase from tokens (original case)."""
    toks = [t.lower() for t in orig]
    orig = list(orig)
    text = " ".join(_strip_lead(list(toks), list(orig), kb.determiners)[0])
    personal = bool(set(toks) & kb.personal_words)
    states: list[StateQual] = []
    quals: list[RelQual] = []

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

    # the first spatial qualifier splits head and reference
    for i in range(1, len(toks)):
        rp = next((r for r in kb.relations if _at(toks, i, r.phrase)), None)
        if rp is None or any(len(s.phrase) > 1 and _at(toks, i - 1, s.phrase) for s in kb.states):
            continue                     # "the switched on lamp": part of a state, not a relation
        head_t, head_o = toks[:i], orig[:i]
        while len(head_t) > 1 and head_t[-1] in _CONNECTORS:
            head_t, head_o = head_t[:-1], head_o[:-1]
        ref_o = orig[i + len(rp.phrase):]
        ref = parse_np(ref_o, kb) if ref_o else None
        if rp.superlative and ref is not None and any(
                tuple(_strip_lead([t.lower() for t in ref_o], list(ref_o), kb.determiners)[0]) == w for w in kb.self_words):
            ref = None                   # "closest to you": to the robot
        if ref is None and not rp.superlative:
            continue                     # "the light that is on" without a reference: not a relation
        quals.append(RelQual(" ".join(rp.phrase), rp.relations, ref, rp.inverse, rp.superlative))
        toks, orig = head_t, head_o
        break

    # attributive states and superlatives: "the clean mug", "the unsliced apple", "the nearest mug"
    i = 0
    while i < len(toks):
        neg = toks[i] in kb.negations or toks[i] == "non"
        j = i + 1 if neg else i
        sw = next((s for s in kb.states if _at(toks, j, s.phrase)
                   and not (len(s.phrase) == 1 and s.phrase[0] in kb.predicate_only_states)), None)
        if sw is not None and (len(toks) > j + len(sw.phrase) or len(toks) == 1 or neg):
            states.append(StateQual(sw.key, sw.value != neg, " ".join(toks[i:j + len(sw.phrase)]), sw.nothing_inside))
            del toks[i:j + len(sw.phrase)], orig[i:j + len(sw.phrase)]
            continue
        if toks[i] in kb.superlatives_to_robot and len(toks) > i + 1:
            quals.append(RelQual(toks[i], (), None, False, kb.superlatives_to_robot[toks[i]]))
            del toks[i], orig[i]
            continue
        i += 1
    toks, orig = _strip_lead(toks, orig, kb.determiners)
    while toks and toks[-1] in ("please", "and", "that", "which"):
        toks, orig = toks[:-1], orig[:-1]

    # "the thing for drying hair": a generic head named by its use -> "hair dryer"
    low = [t.lower() for t in orig]
    if "for" in low[1:-1] and kb.category_of(low[:low.index("for", 1)]) == "thing" \
            and low[low.index("for", 1) + 1].endswith("ing") and len(low[low.index("for", 1) + 1]) > 5:
        k = low.index("for", 1)
        orig = orig[k + 2:] + [low[k + 1][:-3] + "er"]
    # "the jar of honey" -> honey jar, "a glass of water" -> water glass
    low = [t.lower() for t in orig]
    if "of" in low[1:-1] and singular(low[low.index("of", 1) - 1]) in kb.container_heads:
        k = low.index("of", 1)
        orig = orig[k + 1:] + orig[:k]
    raw = " ".join(orig)
    words = [singular(w) for t in orig for w in split_words(t) if not w.isdigit()]
    words = [w for w in words if w not in kb.personal_words] or words
    return NP(text=text, raw=raw, words=words, states=states, quals=quals, personal=personal)


def _predicate_state(toks: list[str], i: int, kb: Knowledge) -> tuple[int, StateQual] | None:
    """A clause "<marker> [not] <state>" starting at ``i``: (end index, state)."""
    marker = next((m for m in kb.predicate_markers if _at(toks, i, m)), None)
    if marker is None:
        return None
    j = i + len(marker)
    neg = False
    if j < len(toks) and (toks[j] in kb.negations or toks[j].endswith("n't")):
        neg, j = True, j + 1
    if marker[-1].endswith("n't"):
        neg = True
    sw = next((s for s in kb.states if _at(toks, j, s.phrase)), None)
    if sw is None:
        return None
    end = j + len(sw.phrase)
    if len(sw.phrase) == 1 and sw.phrase[0] in kb.predicate_only_states \
            and end < len(toks) and toks[end] not in ("and", "now", "right", "currently", "please"):
        return None                      # "that is on the shelf": a relation, not a state
    return end, StateQual(sw.key, sw.value != neg, " ".join(toks[i:end]), sw.nothing_inside)


# --------------------------------------------------------------------------- queries
def parse_query(query: str, context: str, kb: Knowledge) -> ParsedQuery:
    q, rest = _instruction(query)
    if rest:                 # what follows the instruction is read like a clarification
        context = f"{rest}\n{context}".strip()
    pq = _structured(q, kb) or _pddl_like(q, kb) or _natural(q, kb)
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
    dets = {d[0] for d in kb.determiners if len(d) == 1}
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


def _verb_phrases(kb: Knowledge) -> list[tuple[tuple[str, ...], str]]:
    out = [(v, a.name) for a in kb.actions.values() for v in a.verbs]
    return sorted(out, key=lambda x: len(x[0]), reverse=True)


def _natural(q: str, kb: Knowledge) -> ParsedQuery:
    orig = query_words(q)
    toks = [t.lower() for t in orig]
    toks, orig = _strip_lead(toks, orig, kb.lead_fillers)
    toks, orig = _strip_trail(toks, orig, kb.trail_fillers)
    action, verb, body_t, body_o = None, "", toks, orig

    if len(toks) > 2 and toks[0] in kb.split_verbs and toks[-1] in kb.split_verbs[toks[0]] \
            and toks[1] not in kb.split_verbs[toks[0]]:
        action, verb = kb.split_verbs[toks[0]][toks[-1]], f"{toks[0]} {toks[-1]}"
        body_t, body_o = toks[1:-1], orig[1:-1]
    else:
        phrases = _verb_phrases(kb)
        for i in range(len(toks)):
            hit = next(((p, a) for p, a in phrases if _at(toks, i, p)), None)
            if hit:
                action, verb = hit[1], " ".join(hit[0])
                body_t, body_o = toks[i + len(hit[0]):], orig[i + len(hit[0]):]
                break
        if action is None and toks:
            verb, body_t, body_o = toks[0], toks[1:], orig[1:]
        if verb in kb.split_verbs and len(body_t) > 1 and body_t[-1] in kb.split_verbs[verb]:
            action = kb.split_verbs[verb][body_t[-1]]
            body_t, body_o = body_t[:-1], body_o[:-1]

    if action not in (None, "handover") and len(body_t) > 1 and body_t[0] in kb.person_pronouns:
        body_t, body_o = body_t[1:], body_o[1:]          # "get me the apple": me is not the object
    args: list[list[str]] = [body_o]
    place_rel = None
    if action == "place":
        split = _split_place(body_t, kb)
        if split:
            i, n, place_rel = split
            args = [body_o[:i], body_o[i + n:]]
    elif action == "handover":
        args = _split_handover(body_t, body_o, kb)
    pq = _assign(action, verb, args, kb, False)
    pq.text = q
    pq.place_relation = place_rel
    if action == "pick" and "object" in pq.args:
        src = next((r for r in pq.args["object"].quals if r.relations == FROM_RELATIONS and r.ref), None)
        if src is not None:
            pq.args["source"] = src.ref
    return pq


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
    for i in range(len(toks) - 1, 0, -1):
        if toks[i] in kb.handover_prepositions:
            return [orig[:i], orig[i + 1:]]
    dets = {d[0] for d in kb.determiners if len(d) == 1}
    if len(orig) > 2 and orig[0][:1].isupper() and toks[1] in dets:
        return [orig[1:], orig[:1]]
    return [orig]


# --------------------------------------------------------------------------- context
def merge_context(pq: ParsedQuery, context: str, kb: Knowledge) -> None:
    """Fold a clarification into the query: who a person is, or which object is meant."""
    for sentence in (x for line in context.strip().splitlines() for x in re.split(r"(?<=[.!?;])\s+", line)):
        orig = query_words(sentence)
        toks = [t.lower() for t in orig]
        if not toks:
            continue
        lead = next((p for p in kb.identity_leads if _at(toks, 0, p)), None)
        if lead is not None and len(toks) > len(lead):
            name = toks[len(lead)]
            dets = {d[0] for d in kb.determiners if len(d) == 1}
            if name not in dets and kb.category_of([name]) is None and name not in kb.person_words:
                pq.person_hint = name
                continue
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
