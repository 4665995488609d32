"""Reading Princeton WordNet 3.0's noun files as Debian packages them (wordnet-base,
/usr/share/wordnet), for the generators of data/knowledge/ (gen_wordnet_nouns.py, gen_wordnet_verbs.py,
gen_person_nouns.py). Licence: data/knowledge/WORDNET_LICENSE."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator


def hypernyms(wn: Path) -> tuple[dict[str, list[str]], set[str]]:
    """From data.noun: synset offset -> class hypernym offsets ("@"); and the offsets that are
    instances (named individuals, "@i")."""
    up: dict[str, list[str]] = {}
    instances: set[str] = set()
    with (wn / "data.noun").open(encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue                 # the licence header
            fields = line.split(" | ")[0].split()
            off, w_cnt = fields[0], int(fields[3], 16)
            i = 4 + 2 * w_cnt
            p_cnt = int(fields[i])
            ptrs = [fields[i + 1 + 4 * k: i + 5 + 4 * k] for k in range(p_cnt)]
            up[off] = [p[1] for p in ptrs if p[0] == "@" and p[2] == "n"]
            if any(p[0] == "@i" for p in ptrs):
                instances.add(off)
    return up, instances


def lemmas(wn: Path, max_words: int, hyphens: bool = False) -> Iterator[tuple[list[str], list[str]]]:
    """From index.noun: (words of a lemma, its synset offsets, most frequent first), for lemmas of
    at most ``max_words`` words of letters only (``hyphens``: a hyphen also parts words,
    "walkie-talkie" is "walkie talkie")."""
    with (wn / "index.noun").open(encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue                 # the licence header
            fields = line.split()
            lemma, synset_cnt, p_cnt = fields[0], int(fields[2]), int(fields[3])
            parts = lemma.replace("-", "_").split("_") if hyphens else lemma.split("_")
            if len(parts) <= max_words and all(p.isalpha() for p in parts):
                yield parts, fields[6 + p_cnt: 6 + p_cnt + synset_cnt]


def under(root: str, up: dict[str, list[str]]):
    """A memoised test: whether a synset is ``root`` or lies under it."""
    memo: dict[str, bool] = {}

    def test(off: str) -> bool:
        if off not in memo:
            memo[off] = False            # cycles cannot happen in WordNet's hypernyms; be safe
            memo[off] = off == root or any(test(h) for h in up.get(off, []))
        return memo[off]
    return test


def verb_senses(wn: Path, max_words: int) -> tuple[dict[str, list[str]], dict[str, tuple[list[str], list[str]]]]:
    """From index.verb and data.verb: (lemma -> its synset offsets, most frequent first; synset
    offset -> (its lemmas, its class hypernym offsets "@")), for lemmas of at most ``max_words``
    words of letters only."""
    index: dict[str, list[str]] = {}
    with (wn / "index.verb").open(encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue
            fields = line.split()
            lemma, synset_cnt, p_cnt = fields[0], int(fields[2]), int(fields[3])
            parts = lemma.split("_")
            if len(parts) <= max_words and all(p.isalpha() for p in parts):
                index[" ".join(parts)] = fields[6 + p_cnt: 6 + p_cnt + synset_cnt]
    synsets: dict[str, tuple[list[str], list[str]]] = {}
    with (wn / "data.verb").open(encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue
            fields = line.split(" | ")[0].split()
            off, w_cnt = fields[0], int(fields[3], 16)
            words = [fields[4 + 2 * k].lower().replace("_", " ") for k in range(w_cnt)]
            i = 4 + 2 * w_cnt
            p_cnt = int(fields[i])
            ptrs = [fields[i + 1 + 4 * k: i + 5 + 4 * k] for k in range(p_cnt)]
            synsets[off] = (words, [p[1] for p in ptrs if p[0] == "@" and p[2] == "v"])
    return index, synsets
