"""Writes data/knowledge/wordnet_uses.tsv.gz: what artefacts are for, read from the definitions
(glosses) of Princeton WordNet 3.0, as a table the rules reasoner reads without any WordNet
library at run time.

A thing named by its use ("something to sweep the floor with", "the thing for lighting the
candles") is an artefact whose definition says it is for that use: "broom: a cleaning implement
for sweeping", "lighter: a device for lighting or igniting fuel", "towel: a piece of absorbent
cloth for drying or wiping", "spatula: a hand tool ... used to mix or spread soft substances".
Only the definition counts (the gloss before its first quoted example), and only these shapes:
  "for V-ing [or/and V-ing ...]", "used to/for V [or/and V ...]", "used for V-ing ...",
  "designed/intended to V", "serving to V".
V must be a WordNet verb (index.verb; an -ing form is read back to its base by verb.exc and the
usual spelling rules). Kinds under a listed synset inherit its uses at run time (a match is a
lighter).

Source: Princeton WordNet 3.0 as Debian packages it (``apt-get install wordnet-base``: files in
/usr/share/wordnet; licence in data/knowledge/WORDNET_LICENSE).

Rows (tab-separated), in data.noun's order of artefact synsets (under artifact.n.01):
  ``U  <verb>  <synset>[,<synset>...]``: those whose definition gives that use;
  ``O  <noun>  <synset>[,<synset>...]``: those whose use takes that noun ("screwdriver: a hand
  tool for driving screws": screw; "thermometer: ... for measuring temperature": temperature),
  the nouns of the phrase after the verbs, up to a preposition, clause or punctuation.
Run: python scripts/gen_wordnet_uses.py [WORDNET_DIR]
"""
from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from wordnet_source import hypernyms, under  # noqa: E402

OUT = ROOT / "data" / "knowledge" / "wordnet_uses.tsv.gz"
ARTIFACT = "00021939"                    # artifact.n.01 in WordNet 3.0

_WORD = r"([a-z]+)"
_MORE = r"((?:,? (?:or|and) [a-z]+)*)"
PATTERNS = [
    re.compile(r"\bfor " + _WORD + "ing" + _MORE),                       # for sweeping (or ...)
    re.compile(r"\bused (?:to|for) " + _WORD + _MORE),                  # used to mix or spread
    re.compile(r"\b(?:designed|intended|serving|meant) to " + _WORD + _MORE),
]


def word_index(wn: Path, pos: str) -> tuple[set[str], dict[str, str]]:
    """One-word lemmas of index.<pos> ("verb", "noun"), and <pos>.exc's inflected forms -> base."""
    words: set[str] = set()
    with (wn / f"index.{pos}").open(encoding="latin-1") as f:
        for line in f:
            if not line.startswith("  "):
                w = line.split()[0]
                if w.isalpha():
                    words.add(w)
    exc: dict[str, str] = {}
    with (wn / f"{pos}.exc").open(encoding="latin-1") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].isalpha():
                exc.setdefault(parts[0], parts[1])
    return words, exc


def base_of(word: str, gerund: bool, verbs: set[str], exc: dict[str, str]) -> str | None:
    """The verb a form stands for: "sweeping" -> sweep, "lighting" -> light, "cutting" -> cut,
    "drying" -> dry; a base form as it is. None when WordNet has no such verb."""
    if not gerund:
        return word if word in verbs else None
    form = word + "ing"
    if form in exc:
        return exc[form] if exc[form] in verbs else None
    stem = word
    for cand in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else ""):
        if cand and cand in verbs:
            return cand
    return None


_OBJECT_END = re.compile(r"[;,()]|\b(?:of|with|from|in|into|on|onto|to|for|at|by|as|that|which|when|while|so|"
                         r"or|and|especially|usually|etc)\b")


def uses_in(definition: str, verbs: set[str], exc: dict[str, str]) -> list[str]:
    """The verbs of use a definition gives, in order."""
    return [v for v, _ in uses_with_objects(definition, verbs, exc, set(), {})]


def uses_with_objects(definition: str, verbs: set[str], exc: dict[str, str], nouns: set[str],
                      noun_exc: dict[str, str]) -> list[tuple[str, list[str]]]:
    """The verbs of use a definition gives, each with the nouns of the phrase the last verb of
    its list takes ("for driving screws": drive, [screw]; "for measuring and indicating fluid
    pressure": measure, indicate, [fluid, pressure]), up to a preposition, clause or punctuation."""
    out: list[tuple[str, list[str]]] = []
    for n, rx in enumerate(PATTERNS):
        for m in rx.finditer(definition):
            first = m.group(1) + ("ing" if n == 0 else "")
            needs_gerund = n == 0 or m.group(0).startswith("used for")     # "used for light pruning": no use "light"
            found: list[str] = []
            for w in [first] + re.findall(r"(?:or|and) ([a-z]+)", m.group(2) or ""):
                gerund = w.endswith("ing") and len(w) > 5
                if needs_gerund and not gerund:
                    break                # "for sweeping and a handle": the list of uses ends
                v = base_of(w[:-3] if gerund else w, gerund, verbs, exc)
                if v is None:
                    break
                found.append(v)
            rest = definition[m.end():] if len(found) == 1 + len(re.findall(r"(?:or|and) ([a-z]+)", m.group(2) or "")) else ""
            stop = _OBJECT_END.search(rest)
            phrase = rest[:stop.start()] if stop else rest
            objects = [x for x in (noun_base(w, nouns, noun_exc) for w in re.findall(r"[a-z]+", phrase)) if x]
            out += [(v, objects) for v in found]
    seen: dict[str, list[str]] = {}
    for v, objects in out:
        seen.setdefault(v, [])
        seen[v] += [o for o in objects if o not in seen[v]]
    return list(seen.items())


_NOT_OBJECTS = frozenset({"a", "an", "the", "some", "any", "one", "two", "its", "their", "other", "various", "small",
                          "large", "long", "short", "thin", "flat", "soft", "hard", "several", "many", "up", "out",
                          "off", "down", "over"})


def noun_base(word: str, nouns: set[str], exc: dict[str, str]) -> str | None:
    """A word of an object phrase as a singular noun WordNet knows ("screws" -> screw, "foods" ->
    food); None for articles, common adjectives and words no noun."""
    if word in _NOT_OBJECTS or len(word) < 3:
        return None
    if word in exc:
        return exc[word]
    for cand in ([word[:-3] + "y"] if word.endswith("ies") else []) + \
            ([word[:-2]] if word.endswith(("ses", "xes", "ches", "shes")) else []) + \
            ([word[:-1]] if word.endswith("s") and not word.endswith("ss") else []) + [word]:
        if cand in nouns:
            return cand
    return None


def main() -> None:
    wn = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    up, _ = hypernyms(wn)
    is_artifact = under(ARTIFACT, up)
    verbs, exc = word_index(wn, "verb")
    nouns, noun_exc = word_index(wn, "noun")
    table: dict[str, list[str]] = {}
    objects: dict[str, list[str]] = {}
    with (wn / "data.noun").open(encoding="latin-1") as f:
        for line in f:
            if line.startswith("  ") or " | " not in line:
                continue
            off = line.split()[0]
            if not is_artifact(off):
                continue
            gloss = line.split(" | ", 1)[1]
            definition = gloss.split('"', 1)[0].lower()
            for v, nouns_of in uses_with_objects(definition, verbs, exc, nouns, noun_exc):
                table.setdefault(v, []).append(off)
                for o in nouns_of:
                    objects.setdefault(o, []).append(off)
    with gzip.open(OUT, "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("# generated by scripts/gen_wordnet_uses.py from Princeton WordNet 3.0 (see WORDNET_LICENSE)\n")
        for v in sorted(table):
            out.write(f"U\t{v}\t{','.join(dict.fromkeys(table[v]))}\n")
        for o in sorted(objects):
            out.write(f"O\t{o}\t{','.join(dict.fromkeys(objects[o]))}\n")
    print(f"{OUT}: {len(table)} verbs, {len(objects)} objects")


if __name__ == "__main__":
    main()
