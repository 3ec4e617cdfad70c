"""Released files of ProLex, Smart Word Suggestions and TSAR-2022 of the SWORDS test split's size,
written from a seeded generator (for ``bench.downloads``): the same seed writes the same bytes.

Each holds about as many judgements as the SWORDS test split (253,917 labels at scale 1,
``bench.swords_file``), in its own release's shape:

- ProLex CSV: as many targets and substitutes as the test split (762 rows of about 60 distinct
  substitutes each, a sentence of 10 to 16 words), each substitute written 3 times across
  ``acc_subs`` and ``unacc_subs`` (10 times for the test split's share that reached scoring): an
  entry is an expert's judgment (1 in ``acc_subs``, -1 in ``unacc_subs``; 30 % acceptable), the
  proficiency lists split the acceptable ones by level, with the level columns; one target in 20
  also names a substitute only as proficiency-oriented, unjudged, which the experts judge here.
- Smart Word Suggestions JSON: 4,500 sentences of 12 to 30 tokens, about 7 targets each (spans of
  one to three tokens, some overlapping) of 1 to 6 suggestions with 1 to 4 votes: about as many
  votes as the test split's labels.
- TSAR-2022 gold TSV: 10,157 instances (a sentence and its complex word) with 25 suggestions each,
  as the shared task's gold lines hold them: as many suggestions as the test split's labels.

Needs no Django.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from bench.swords_file import TEST_SPLIT, _Words, test_split_shape

SWS_SENTENCES = 4_500
TSAR_SUGGESTIONS = 25


def _scaled(count: int, scale: float) -> int:
    return max(1, round(count * scale))


def write_prolex_file(path: Path, *, scale: float = 1.0, seed: int = 0) -> tuple[int, int, int]:
    """A ProLex CSV (with the level columns) of ``scale`` times the test split's targets,
    substitutes and judgments; returns them."""
    import csv

    from schemes.prolex.formats import COLUMNS, LEVELS_OF

    targets, substitutes, labels = test_split_shape(scale)
    rng = random.Random(seed)
    words = _Words(rng)
    per_target = [substitutes // targets + (1 if i < substitutes % targets else 0) for i in range(targets)]
    ten = set(rng.sample(range(substitutes), (labels - 3 * substitutes) // 7))
    # The judged substitutes written so far, and those named unjudged.
    number = unjudged = 0
    written = 0
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        # The released file's columns, its levels' last (schemes.prolex.formats).
        writer.writerow([*COLUMNS, "t_words_cefr", *LEVELS_OF])
        seen_targets: set[str] = set()
        for index in range(targets):
            word = words.word()
            while word in seen_targets:
                word = words.word()
            seen_targets.add(word)
            sentence, at = words.sentence(rng.randint(10, 16), insert=word)
            marked = f"{sentence[:at]}**{word}**{sentence[at + len(word) :]}"
            acc: list[str] = []
            unacc: list[str] = []
            acceptable: list[str] = []
            seen: set[str] = set()
            while len(seen) < per_target[index]:
                text = " ".join(words.word() for _ in range(rng.choice((1, 1, 1, 1, 2))))
                if text in seen or text == word:
                    continue
                seen.add(text)
                ones = 0
                for _ in range(10 if number in ten else 3):
                    if rng.random() < 0.3:
                        acc.append(text)
                        ones += 1
                    else:
                        unacc.append(text)
                    written += 1
                if 2 * ones > (10 if number in ten else 3):
                    acceptable.append(text)
                number += 1
            level = rng.randint(0, 5)
            # A phrase has no level ("None"); a word 0 to 5, or 6 when no list knows it.
            levels: dict[str, int | str] = {text: ("None" if " " in text else rng.randint(0, 6)) for text in acceptable}
            prof = [text for text in acceptable if isinstance(levels[text], str) or int(levels[text]) >= level]
            other = [text for text in acceptable if text not in prof]
            if index % 20 == 0:
                # A substitute the file names only as proficiency-oriented, with no judgment: the
                # experts judge it on the platform (its row is then made from the labels).
                extra = words.word()
                while extra in seen or extra == word:
                    extra = words.word()
                prof.append(extra)
                levels[extra] = 6
                unjudged += 1
            writer.writerow(
                [
                    word,
                    marked,
                    str(acc),
                    str(unacc),
                    str(prof),
                    str(other),
                    str(level),
                    str([levels[text] for text in prof]),
                    str([levels[text] for text in other]),
                ]
            )
    return targets, number + unjudged, written


def write_sws_file(path: Path, *, scale: float = 1.0, seed: int = 0) -> tuple[int, int, int]:
    """A Smart Word Suggestions JSON release of ``scale`` times 4,500 sentences, written as the
    release is (``json.dumps(data, indent=4)``); returns its sentences, targets and votes."""
    sentences = _scaled(SWS_SENTENCES, scale)
    rng = random.Random(seed)
    words = _Words(rng)
    data: dict[str, object] = {}
    targets = votes = 0
    seen: set[str] = set()
    while len(data) < sentences:
        tokens = [words.word() for _ in range(rng.randint(12, 30))]
        tokens[0] = tokens[0].capitalize()
        tokens.append(rng.choice(".....!?"))
        sentence = " ".join(tokens[:-1]) + tokens[-1]
        if sentence in seen:
            continue
        seen.add(sentence)
        substitutes = []
        for _ in range(rng.randint(4, 10)):
            start = rng.randrange(0, len(tokens) - 2)
            end = min(len(tokens) - 1, start + rng.choice((1, 1, 1, 2, 3)))
            suggestions: dict[str, int] = {}
            for _ in range(rng.randint(1, 6)):
                suggestions[" ".join(words.word() for _ in range(rng.choice((1, 1, 1, 2))))] = rng.randint(1, 4)
            substitutes.append([[start, end], suggestions, rng.choice((1, 1, 2))])
            targets += 1
            votes += sum(suggestions.values())
        data[f"{len(data) + 1:05d}"] = {"sentence": sentence, "sentence_split": tokens, "substitutes": substitutes}
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    return sentences, targets, votes


def write_tsar_file(path: Path, *, scale: float = 1.0, seed: int = 0) -> tuple[int, int]:
    """A TSAR-2022 gold TSV of as many suggestions as ``scale`` times the test split's labels,
    25 a line; returns its instances and suggestions."""
    instances = _scaled(round(TEST_SPLIT["labels"] / TSAR_SUGGESTIONS), scale)
    rng = random.Random(seed)
    words = _Words(rng)
    seen: set[tuple[str, str]] = set()
    lines: list[str] = []
    while len(lines) < instances:
        word = words.word()
        sentence, _ = words.sentence(rng.randint(12, 30), insert=word)
        if (sentence, word) in seen:
            continue
        seen.add((sentence, word))
        # Most annotators agree on a few words; some suggestion is typed once.
        common = [words.word() for _ in range(rng.randint(2, 6))]
        suggestions = [rng.choice(common) if rng.random() < 0.8 else words.word() for _ in range(TSAR_SUGGESTIONS)]
        lines.append("\t".join([sentence, word, *suggestions]) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return instances, instances * TSAR_SUGGESTIONS
