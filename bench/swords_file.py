"""A SWORDS JSON file of any size, written from a seeded generator (for ``bench.import_swords``).

Shaped like the SWORDS test split (762 targets, 45,705 substitutes, 253,917 labels at scale 1):
one target per context of three sentences (about 260 characters, as in the dev set), about 60
substitutes per target with the release's sources (roget 89 %, coinco 6 %, both 5 %) and a fifth
of them of two or more words, 3 labels each, 10 for the 36.5 % that reached scoring, TRUE 21 %,
FALSE 77.8 %, UNSURE 1.2 %. Ids are computed as the swords library computes them, the text is
written as ``json.dumps(data, indent=2)`` writes it, gzipped as the release is. Needs no Django.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

TEST_SPLIT = {"targets": 762, "substitutes": 45_705, "labels": 253_917}
POS = ["NOUN", "VERB", "ADJ", "ADV"]
POS_WEIGHTS = [0.37, 0.40, 0.14, 0.09]
SOURCES = [["roget"], ["coinco"], ["coinco", "roget"]]
SOURCE_WEIGHTS = [0.89, 0.06, 0.05]
LABELS = ["FALSE", "TRUE", "UNSURE"]
LABEL_WEIGHTS = [0.778, 0.21, 0.012]
SYLLABLES = [consonant + vowel for consonant in "bdfgklmnprstvz" for vowel in "aeiou"]


def test_split_shape(scale: float) -> tuple[int, int, int]:
    """Targets, substitutes and labels at ``scale`` times the test split, with its share of
    substitutes that have 10 labels (the rest have 3)."""
    targets = max(1, round(TEST_SPLIT["targets"] * scale))
    substitutes = max(targets, round(TEST_SPLIT["substitutes"] * scale))
    full = round(substitutes * (TEST_SPLIT["labels"] - 3 * TEST_SPLIT["substitutes"]) / 7 / TEST_SPLIT["substitutes"])
    return targets, substitutes, 3 * substitutes + 7 * full


def _swords_id(prefix: str, fields: dict[str, Any]) -> str:
    """The swords library's id (docs/formats.md): prefix + SHA-1 of the sorted JSON of the key fields."""
    return prefix + hashlib.sha1(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


class _Words:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def word(self) -> str:
        return "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.choice((1, 2, 2, 3, 3, 4))))

    def sentence(self, length: int, insert: str | None = None) -> tuple[str, int]:
        """A sentence of ``length`` words, and where ``insert`` (if given) starts in it."""
        words = [self.word() for _ in range(length)]
        at = self.rng.randrange(1, length) if insert is not None else 0
        if insert is not None:
            words[at] = insert
        text = " ".join(words)
        text = text[0].upper() + text[1:] + self.rng.choice(".....!?")
        return text, len(" ".join(words[:at])) + (1 if at else 0)


def _entries(rng: random.Random, targets: int, substitutes: int, full: int) -> Iterator[tuple[str, str, Any]]:
    """(section, id, value) in the release's order of sections (built whole: this process is not measured)."""
    words = _Words(rng)
    per_target = [substitutes // targets + (1 if i < substitutes % targets else 0) for i in range(targets)]
    ten_labels = set(rng.sample(range(substitutes), full))
    contexts: list[tuple[str, Any]] = []
    target_entries: list[tuple[str, Any]] = []
    substitute_entries: list[tuple[str, Any]] = []
    label_entries: list[tuple[str, Any]] = []
    number = 0
    for index in range(targets):
        word = words.word()
        first, _ = words.sentence(rng.randint(10, 16))
        middle, at = words.sentence(rng.randint(10, 16), insert=word)
        last, _ = words.sentence(rng.randint(10, 16))
        text = f"{first} {middle} {last}"
        offset = len(first) + 1 + at
        cid = _swords_id("c:", {"context": text})
        contexts.append((cid, {"context": text, "extra": {"coinco_ids": [f"doc{index}.txt:s-r{index}"]}}))
        pos = rng.choices(POS, POS_WEIGHTS)[0]
        tid = _swords_id("t:", {"context_id": cid, "target": word.lower(), "offset": offset, "pos": pos})
        extra = {"coinco_ids": [str(8000 + index)], "coinco_lemma": word}
        target_entries.append((tid, {"context_id": cid, "target": word, "offset": offset, "pos": pos, "extra": extra}))
        seen: set[str] = set()
        while len(seen) < per_target[index]:
            text = " ".join(words.word() for _ in range(rng.choice((1, 1, 1, 1, 2))))
            if text in seen:
                continue
            seen.add(text)
            sid = _swords_id("s:", {"target_id": tid, "substitute": text.lower()})
            sources = rng.choices(SOURCES, SOURCE_WEIGHTS)[0]
            substitute_entries.append((sid, {"target_id": tid, "substitute": text, "extra": {"sources": sources}}))
            count = 10 if number in ten_labels else 3
            label_entries.append((sid, rng.choices(LABELS, LABEL_WEIGHTS, k=count)))
            number += 1
    for section, entries in (
        ("contexts", contexts),
        ("targets", target_entries),
        ("substitutes", substitute_entries),
        ("substitute_labels", label_entries),
    ):
        for key, value in entries:
            yield section, key, value


def _write(out: IO[str], entries: Iterator[tuple[str, str, Any]]) -> None:
    """Write the sections as ``json.dumps(data, indent=2)`` would, one entry at a time."""
    section: str | None = None
    for name, key, value in entries:
        if name != section:
            if section is not None:
                out.write("\n  },\n")
            if name == "substitute_labels":
                out.write('  "substitutes_lemmatized": true,\n')
            out.write("{\n" if section is None else "")
            out.write(f'  "{name}": {{\n')
            section = name
        else:
            out.write(",\n")
        out.write(f"    {json.dumps(key)}: " + json.dumps(value, indent=2).replace("\n", "\n    "))
    out.write("\n  }\n}")


def write_swords_file(path: Path, *, scale: float = 1.0, seed: int = 0) -> tuple[int, int, int]:
    """Write a SWORDS file of ``scale`` times the test split to ``path`` (gzipped if it ends in
    ``.gz``); returns its targets, substitutes and labels."""
    targets, substitutes, labels = test_split_shape(scale)
    rng = random.Random(seed)
    entries = _entries(rng, targets, substitutes, (labels - 3 * substitutes) // 7)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as out:
            _write(out, entries)
    else:
        with open(path, "w", encoding="utf-8") as out:
            _write(out, entries)
    return targets, substitutes, labels
