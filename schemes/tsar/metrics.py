"""The official metrics of the TSAR-2022 shared task on lexical simplification (Saggion et al. 2022),
computed as its scorer computes them (docs/evaluation.md, "TSAR-2022").

Pure functions over plain values. An instance is a sentence and its complex word; its gold is every
annotator's suggested substitute (repeated per annotator), a system's prediction its ranked
substitutes. Before scoring, every string is trimmed; gold suggestions equal to the complex word
are not gold; a prediction equal to the complex word, or repeating an earlier one, is dropped. Every
predictions line counts in every figure, and a line left without predictions is a miss. Figures
are fractions of the lines, floored to four decimals.

- ``acc@1``: the first prediction is a gold substitute (= MAP@1 = Potential@1);
- ``acc@k@top1`` (k = 1, 2, 3): one of the first k predictions is among the gold substitutes of the
  highest count (all of them when several share it);
- ``map@k`` (k = 3, 5, 10): over the first k predictions, the precision at each position that holds
  a gold substitute, summed and divided by k;
- ``potential@k`` (k = 3, 5, 10): one of the first k predictions is a gold substitute.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: The figures by their JSON names, in the order the shared task reports them.
FIGURE_NAMES = (
    "acc@1",
    "acc@1@top1",
    "acc@2@top1",
    "acc@3@top1",
    "map@3",
    "map@5",
    "map@10",
    "potential@3",
    "potential@5",
    "potential@10",
)
#: The scorer floors every figure to this many decimals.
DECIMALS = 4

Key = tuple[str, str]


@dataclass(frozen=True)
class GoldInstance:
    """An instance of the gold: its sentence, complex word and every annotator's suggestion in file
    order (a suggestion given by several annotators repeats)."""

    sentence: str
    complex_word: str
    annotations: tuple[str, ...]

    @property
    def key(self) -> Key:
        return instance_key(self.sentence, self.complex_word)

    def counts(self) -> Counter[str]:
        """Each gold substitute and how many annotators gave it, in the order first given: trimmed,
        the complex word and empty fields left out."""
        word = self.complex_word.strip()
        return Counter(text for text in (item.strip() for item in self.annotations) if text and text != word)

    def substitutes(self) -> frozenset[str]:
        return frozenset(self.counts())

    def top(self) -> frozenset[str]:
        """The gold substitutes of the highest count, ties included; empty without gold substitutes."""
        counts = self.counts()
        if not counts:
            return frozenset()
        highest = max(counts.values())
        return frozenset(text for text, count in counts.items() if count == highest)

    def ranked(self) -> list[str]:
        """The gold substitutes by descending count, ties in the order first given."""
        return [text for text, _count in self.counts().most_common()]


@dataclass(frozen=True)
class Prediction:
    """One line of a predictions file: the instance it is for and its substitutes, best first."""

    sentence: str
    complex_word: str
    candidates: tuple[str, ...]
    line: int = 0

    @property
    def key(self) -> Key:
        return instance_key(self.sentence, self.complex_word)

    def ranked(self) -> list[str]:
        """The predictions as they are scored: trimmed, without the complex word, each once (the first)."""
        word = self.complex_word.strip()
        kept: list[str] = []
        for text in (candidate.strip() for candidate in self.candidates):
            if text != word and text not in kept:
                kept.append(text)
        return kept


def instance_key(sentence: str, complex_word: str) -> Key:
    """What a predictions line and a gold instance are matched by: the trimmed sentence and word."""
    return sentence.strip(), complex_word.strip()


def floor(value: float) -> float:
    """``value`` floored to four decimals, with the scorer's own arithmetic (so 0.29 gives 0.2899)."""
    factor = 10**DECIMALS
    return math.floor(value * factor) / factor


def average_precision_at(relevant: Sequence[bool], k: int) -> float:
    """The scorer's AP at k of one ranking: the precision at each of the first k positions that holds
    a gold substitute, summed, divided by k (not by the number of gold substitutes)."""
    total = 0.0
    seen = 0
    for position, hit in enumerate(relevant[:k], start=1):
        if hit:
            seen += 1
            total += seen / position
    return total / k


def instance_scores(gold: GoldInstance, predicted: Sequence[str]) -> dict[str, float]:
    """One instance's unfloored contribution to each figure (1.0 or 0.0 for the accuracies and
    potentials, the AP for MAP), from its scored predictions (``Prediction.ranked``)."""
    substitutes = gold.substitutes()
    top = gold.top()
    relevant = [text in substitutes for text in predicted]
    scores: dict[str, float] = {"acc@1": float(any(relevant[:1]))}
    for k in (1, 2, 3):
        scores[f"acc@{k}@top1"] = float(any(text in top for text in predicted[:k]))
    for k in (3, 5, 10):
        scores[f"map@{k}"] = average_precision_at(relevant, k)
    for k in (3, 5, 10):
        scores[f"potential@{k}"] = float(any(relevant[:k]))
    return {name: scores[name] for name in FIGURE_NAMES}


class UnknownInstance(KeyError):
    """A predictions line for an instance the gold does not have."""

    def __init__(self, prediction: Prediction) -> None:
        self.prediction = prediction
        super().__init__(prediction.key)

    def __str__(self) -> str:
        return (
            f"line {self.prediction.line}: no instance of the gold has this sentence with the complex word "
            f"{self.prediction.complex_word.strip()!r}"
        )


def gold_index(gold: Iterable[GoldInstance]) -> dict[Key, GoldInstance]:
    """The gold instances by their key; an instance given twice is an error."""
    index: dict[Key, GoldInstance] = {}
    for instance in gold:
        if instance.key in index:
            raise ValueError(f"the gold holds the instance of the complex word {instance.complex_word!r} twice")
        index[instance.key] = instance
    return index


def evaluate(
    gold: Mapping[Key, GoldInstance], predictions: Sequence[Prediction]
) -> tuple[dict[str, float], list[dict[str, float]]]:
    """The ten figures of a predictions file (every line, in file order) against the gold, floored,
    and each line's unfloored scores. A line whose instance the gold lacks is ``UnknownInstance``;
    without any line, every figure is 0."""
    per_line: list[dict[str, float]] = []
    for prediction in predictions:
        instance = gold.get(prediction.key)
        if instance is None:
            raise UnknownInstance(prediction)
        per_line.append(instance_scores(instance, prediction.ranked()))
    return figures_of(per_line), per_line


def figures_of(per_line: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each figure over the lines (summed in line order, as the scorer sums), floored."""
    if not per_line:
        return dict.fromkeys(FIGURE_NAMES, 0.0)
    return {name: floor(_sum(line[name] for line in per_line) / len(per_line)) for name in FIGURE_NAMES}


def _sum(values: Iterable[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


def gold_as_predictions(gold: Iterable[GoldInstance]) -> list[Prediction]:
    """The gold judged by itself: each instance's substitutes ranked by count, as a predictions file."""
    return [
        Prediction(sentence=instance.sentence, complex_word=instance.complex_word, candidates=tuple(instance.ranked()))
        for instance in gold
    ]
