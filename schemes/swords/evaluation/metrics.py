"""The SWORDS library's evaluation of a lexical-substitution system (Lee et al. 2021, §5;
docs/evaluation.md), so figures are comparable with the paper's tables.

Pure functions over plain values: the caller normalises every string with the same function
(WordNet lemma for the target's part of speech, then lower-case and strip) and hands over, per
target, the benchmark's pooled label counts and the system's ranked substitutes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from analysis.evaluation import ResultError

#: The library's thresholds on a substitute's score (accepts / labels without abstain).
ACCEPTABLE = 0.5001
CONCEIVABLE = 0.1
K = 10

Normalise = Callable[[str], str]


@dataclass(frozen=True)
class GoldTarget:
    """A benchmark target ready for the evaluation: its normalised substitutes and their scores."""

    scores: dict[str, float]

    @property
    def acceptable(self) -> set[str]:
        return {text for text, score in self.scores.items() if score >= ACCEPTABLE}

    @property
    def conceivable(self) -> set[str]:
        return {text for text, score in self.scores.items() if score >= CONCEIVABLE}


def gold_target(
    *, target_lemma: str, candidates: Iterable[tuple[str, float, float]], normalise: Normalise
) -> GoldTarget:
    """The benchmark side of one target from (text, accepts, rejects) per candidate.

    Candidates that normalise to the target's own lemma are dropped; those that normalise alike
    are merged with their labels pooled; a candidate without accept or reject labels (abstains
    are not counted) is dropped. Score = accepts / (accepts + rejects). The counts are the
    published ones, or an adaptive benchmark's expected ones (``progress.evaluated_counts``).
    """
    pooled: dict[str, list[float]] = {}
    for text, accepts, rejects in candidates:
        key = normalise(text)
        if key == target_lemma:
            continue
        counts = pooled.setdefault(key, [0.0, 0.0])
        counts[0] += accepts
        counts[1] += rejects
    return GoldTarget(
        scores={text: accepts / (accepts + rejects) for text, (accepts, rejects) in pooled.items() if accepts + rejects}
    )


def parse_result(document: Any) -> dict[str, list[tuple[str, float]]]:
    """The substitutes of a SWORDS-library result file: ``{"substitutes_lemmatized": bool,
    "substitutes": {target_id: [[substitute, score], ...]}}``; a bare string scores minus its index."""
    if not isinstance(document, dict) or not isinstance(document.get("substitutes"), dict):
        raise ResultError('a result is a JSON object with "substitutes": {target id: [[substitute, score], ...]}')
    parsed: dict[str, list[tuple[str, float]]] = {}
    for target_id, substitutes in document["substitutes"].items():
        if not isinstance(substitutes, list):
            raise ResultError(f"the substitutes of {target_id} are not a list")
        rows: list[tuple[str, float]] = []
        for index, entry in enumerate(substitutes):
            if isinstance(entry, str):
                rows.append((entry, float(-index)))
            else:
                rows.append(_scored(entry, f"substitute {index} of {target_id}"))
        parsed[target_id] = rows
    return parsed


def _scored(entry: Any, where: str) -> tuple[str, float]:
    if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str):
        text, score = entry
        if isinstance(score, int | float) and not isinstance(score, bool):
            try:
                return text, float(score)
            except OverflowError:
                pass
    raise ResultError(f"{where} is neither a string nor [substitute, score]")


def system_ranking(*, substitutes: Sequence[tuple[str, float]], target_lemma: str, normalise: Normalise) -> list[str]:
    """The system side of one target: sorted by descending score (ties keep file order), normalised,
    the target's lemma dropped, duplicates merged keeping the highest score (so the first)."""
    ranked: list[str] = []
    seen: set[str] = set()
    for text, _score in sorted(substitutes, key=lambda row: -row[1]):
        key = normalise(text)
        if key != target_lemma and key not in seen:
            seen.add(key)
            ranked.append(key)
    return ranked


@dataclass
class _Counts:
    hits: int = 0
    listed: int = 0
    relevant: int = 0

    def add(self, top: Sequence[str], gold: set[str], k: int) -> tuple[int, int, int]:
        hits = sum(1 for text in top if text in gold)
        relevant = min(k, len(gold))
        self.hits += hits
        self.listed += len(top)
        self.relevant += relevant
        return hits, len(top), relevant

    def figures(self) -> tuple[float, float, float]:
        precision = 100 * self.hits / self.listed if self.listed else 0.0
        recall = 100 * self.hits / self.relevant if self.relevant else 0.0
        f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f


def gap(ranking: Sequence[str], weights: Mapping[str, float]) -> float:
    """Generalised average precision with the benchmark's scores as weights (Kishida 2005, as the
    SWORDS library computes it); -1 when no substitute has a positive weight."""

    def average(values: Iterable[float]) -> float:
        total = cumulative = 0.0
        for position, weight in enumerate(values, start=1):
            cumulative += weight
            if weight > 0:
                total += cumulative / position
        return total

    ideal = average(sorted(weights.values(), reverse=True))
    if ideal <= 0:
        return -1.0
    return average(weights.get(text, 0.0) for text in ranking) / ideal


@dataclass
class Figures:
    """What an evaluation gives, in percent (JSON keys of ``evaluate_system --json``)."""

    f10_lenient: float
    fc10_lenient: float
    f10_strict: float
    fc10_strict: float
    p10_lenient: float
    r10_lenient: float
    pc10_lenient: float
    rc10_lenient: float
    p10_strict: float
    r10_strict: float
    pc10_strict: float
    rc10_strict: float
    gap: float
    targets_evaluated: int
    targets_missing: int
    per_target: dict[str, dict[str, float | int]] | None = field(default=None)

    def as_dict(self) -> dict[str, Any]:
        figures = asdict(self)
        if self.per_target is None:
            del figures["per_target"]
        return figures


#: The four tallies of P and R at k, in the order ``TargetPart.counts`` holds them.
MODES_KINDS: tuple[tuple[str, str], ...] = tuple(
    (mode, kind) for mode in ("lenient", "strict") for kind in ("acceptable", "conceivable")
)


@dataclass(frozen=True)
class TargetPart:
    """One evaluated target's share of the figures: (hits, listed, relevant) for each of
    ``MODES_KINDS``, its GAP and the GAP of its lenient list (each -1 without a positive weight).
    The figures of a benchmark are these summed over its targets (``figures_of_parts``), so they
    can be kept per target and only the targets a change touched evaluated again (docs/design.md §7,
    "Incremental figures")."""

    counts: tuple[tuple[int, int, int], ...]
    gap: float
    lenient_gap: float


def target_part(*, target: GoldTarget, ranking: Sequence[str], k: int = K) -> TargetPart:
    """The share of one target with scored candidates, ranked by a system as ``ranking``."""
    strict = list(ranking[:k])
    lenient = [text for text in ranking if text in target.scores][:k]
    sets = {"acceptable": target.acceptable, "conceivable": target.conceivable}
    counts = []
    for mode, kind in MODES_KINDS:
        top = lenient if mode == "lenient" else strict
        gold = sets[kind]
        counts.append((sum(1 for text in top if text in gold), len(top), min(k, len(gold))))
    # GAP of the lenient list (unscored substitutes dropped first): a complete evaluation's
    # lenient setting (docs/evaluation.md, "Complete evaluation").
    return TargetPart(
        counts=tuple(counts),
        gap=gap(ranking, target.scores),
        lenient_gap=gap([text for text in ranking if text in target.scores], target.scores),
    )


def oracle_part(*, target: GoldTarget, k: int = K) -> TargetPart:
    """``target_part`` of the target's own scored candidates ranked by their scores, best first (the
    oracle row), without ranking it twice: every text of that ranking is scored, so its lenient list
    is its strict one, and its GAP is the ideal GAP over itself, 1 (both sums are of the same
    weights in the same order), or -1 when no weight is positive."""
    ranking = sorted(target.scores, key=lambda text: -target.scores[text])[:k]
    sets = {"acceptable": target.acceptable, "conceivable": target.conceivable}
    counts = []
    for _mode, kind in MODES_KINDS:
        gold = sets[kind]
        counts.append((sum(1 for text in ranking if text in gold), len(ranking), min(k, len(gold))))
    ideal = 1.0 if any(score > 0 for score in target.scores.values()) else -1.0
    return TargetPart(counts=tuple(counts), gap=ideal, lenient_gap=ideal)


def figures_of_parts(parts: Iterable[TargetPart], *, missing: int = 0) -> Figures:
    """The figures of the evaluated targets' shares (in the targets' order: GAP is a float sum, as
    the library sums it), ``missing`` of them absent from the system's rankings."""
    parts = list(parts)
    # Summed a column at a time (whole numbers: their order changes nothing).
    columns = list(zip(*(part.counts for part in parts), strict=True)) if parts else [()] * len(MODES_KINDS)
    counts = tuple(
        tuple(sum(values) for values in zip(*column, strict=True)) if column else (0, 0, 0) for column in columns
    )
    gaps = [part.gap for part in parts]
    return _figures(counts, sum(gaps), len(gaps), missing)


#: The unit of an exact sum of GAPs (``PartsSum.gap``): every finite float is a whole number of it.
_GAP_UNIT = 1 << 1074


def _exact(value: float) -> int:
    """``value`` in units of ``_GAP_UNIT``, exactly (a float's denominator is a power of two)."""
    numerator, denominator = value.as_integer_ratio()
    return numerator * (_GAP_UNIT // denominator)


@dataclass(frozen=True)
class PartsSum:
    """Evaluated targets' shares (``TargetPart``) summed exactly: (hits, listed, relevant) for each
    of ``MODES_KINDS``, the targets, and their GAPs in units of 2**-1074 (a whole number: every
    float is one, so the sum does not depend on the order of the targets, and a target's GAP taken
    out of it leaves the sum of the others exactly). Kept beside the oracle's shares kept per target,
    so a change adds and takes out the shares of the targets it touched (docs/design.md §7,
    "Incremental figures")."""

    counts: tuple[tuple[int, int, int], ...] = ((0, 0, 0),) * len(MODES_KINDS)
    targets: int = 0
    gap: int = 0


def parts_summed(parts: Iterable[TargetPart]) -> PartsSum:
    """The exact sum of targets' shares. Pure."""
    return sums_combined(PartsSum(counts=part.counts, targets=1, gap=_exact(part.gap)) for part in parts)


def sums_combined(sums: Iterable[PartsSum]) -> PartsSum:
    """Sums of shares added together. Pure."""
    counts = [[0, 0, 0] for _ in MODES_KINDS]
    targets = gap = 0
    for each in sums:
        for summed, (hits, listed, relevant) in zip(counts, each.counts, strict=True):
            summed[0] += hits
            summed[1] += listed
            summed[2] += relevant
        targets += each.targets
        gap += each.gap
    return PartsSum(counts=tuple((a, b, c) for a, b, c in counts), targets=targets, gap=gap)


def sum_less(total: PartsSum, parts: Iterable[TargetPart]) -> PartsSum:
    """``total`` with the shares ``parts`` taken out of it, exactly. Pure."""
    taken = parts_summed(parts)
    return PartsSum(
        counts=tuple((a - x, b - y, c - z) for (a, b, c), (x, y, z) in zip(total.counts, taken.counts, strict=True)),
        targets=total.targets - taken.targets,
        gap=total.gap - taken.gap,
    )


def figures_of_sum(total: PartsSum) -> Figures:
    """The figures of an exact sum of the evaluated targets' shares (``PartsSum``), none missing: its
    GAP is the exact sum rounded once to a float (int / int is correctly rounded). Equal to
    ``figures_of_parts`` of the same shares whenever their float sum in the targets' order is exact,
    as for the oracle, whose GAPs are 1 or -1 (``oracle_part``)."""
    return _figures(total.counts, total.gap / _GAP_UNIT, total.targets, 0)


def _figures(counts: tuple[tuple[int, int, int], ...], gap_sum: float, targets: int, missing: int) -> Figures:
    """The figures of summed (hits, listed, relevant) for each of ``MODES_KINDS``, the sum of the
    targets' GAPs and their number, ``missing`` of them absent from the system's rankings."""
    summed = {
        mode_kind: _Counts(hits=hits, listed=listed, relevant=relevant)
        for mode_kind, (hits, listed, relevant) in zip(MODES_KINDS, counts, strict=True)
    }
    values: dict[str, float] = {}
    for mode in ("lenient", "strict"):
        p, r, f = summed[(mode, "acceptable")].figures()
        pc, rc, fc = summed[(mode, "conceivable")].figures()
        values |= {f"p10_{mode}": p, f"r10_{mode}": r, f"f10_{mode}": f}
        values |= {f"pc10_{mode}": pc, f"rc10_{mode}": rc, f"fc10_{mode}": fc}
    return Figures(
        **values,
        gap=100 * gap_sum / targets if targets else 0.0,
        targets_evaluated=targets - missing,
        targets_missing=missing,
        per_target=None,
    )


def evaluate(
    *, gold: Mapping[str, GoldTarget], rankings: Mapping[str, Sequence[str]], per_target: bool = False
) -> Figures:
    """P, R and F at k = 10 summed over the benchmark's targets (lenient and strict, acceptable and
    conceivable) and GAP averaged over them. A target missing from ``rankings`` adds nothing to
    P, its min(k, …) to R's denominator and 0 to GAP (-1 if it has no positive weight). Targets
    left without scored candidates are not evaluated, as in the library."""
    parts = {
        target_id: target_part(target=target, ranking=rankings.get(target_id, []))
        for target_id, target in gold.items()
        if target.scores
    }
    missing = sum(1 for target_id in parts if target_id not in rankings)
    figures = figures_of_parts(parts.values(), missing=missing)
    if per_target:
        figures.per_target = {target_id: _detail(part) for target_id, part in parts.items()}
    return figures


def _detail(part: TargetPart) -> dict[str, float | int]:
    detail: dict[str, float | int] = {}
    for (mode, kind), (hits, listed, relevant) in zip(MODES_KINDS, part.counts, strict=True):
        detail[f"{mode}_{kind}_hits"] = hits
        detail[f"{mode}_{kind}_listed"] = listed
        detail[f"{mode}_{kind}_relevant"] = relevant
    detail["gap"] = 100 * part.gap if part.gap >= 0 else part.gap
    detail["lenient_gap"] = 100 * part.lenient_gap if part.lenient_gap >= 0 else part.lenient_gap
    return detail


#: The figures of a complete evaluation, in each setting (docs/evaluation.md, "Complete evaluation").
SETTING_FIGURES = ("p10", "r10", "f10", "pc10", "rc10", "fc10", "gap")


def setting_figures(details: Mapping[str, Mapping[str, float | int]], *, mode: str) -> dict[str, float]:
    """The figures of one mode ("lenient" or "strict") from each target's details, as ``evaluate``
    sums them; GAP of the lenient mode ranks only the scored substitutes."""
    return {name: float(values[0]) for name, values in _figure_arrays(details, mode=mode, rows=None).items()}


def bootstrap_intervals(
    details: Mapping[str, Mapping[str, float | int]], *, mode: str, resamples: int, seed: int, level: float
) -> dict[str, list[float]]:
    """Percentile bootstrap intervals over targets of ``setting_figures``: ``resamples`` draws of
    as many targets as there are, with replacement, from numpy's generator seeded with ``seed``;
    each figure's interval is the central ``level`` of its values over the draws (linear
    interpolation between draws). No target: every interval is [0, 0]."""
    count = len(details)
    if count == 0 or resamples < 1:
        return {name: [0.0, 0.0] for name in SETTING_FIGURES}
    rows = np.random.default_rng(seed).integers(0, count, size=(resamples, count))
    tail = 100 * (1 - level) / 2
    return {
        name: [float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))]
        for name, values in _figure_arrays(details, mode=mode, rows=rows).items()
    }


def _figure_arrays(
    details: Mapping[str, Mapping[str, float | int]], *, mode: str, rows: np.ndarray | None
) -> dict[str, np.ndarray]:
    """Each figure of ``SETTING_FIGURES`` for every draw of targets in ``rows`` (None: one draw of
    every target once), as an array over the draws."""
    targets = list(details.values())
    if rows is None:
        rows = np.arange(len(targets))[np.newaxis, :]

    def summed(key: str) -> np.ndarray:
        column = np.array([float(target[key]) for target in targets], dtype=float)
        return column[rows].sum(axis=1) if len(targets) else np.zeros(rows.shape[0])

    arrays: dict[str, np.ndarray] = {}
    for kind, prefix in (("acceptable", ""), ("conceivable", "c")):
        hits, listed, relevant = (summed(f"{mode}_{kind}_{part}") for part in ("hits", "listed", "relevant"))
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(listed > 0, 100 * hits / np.where(listed > 0, listed, 1), 0.0)
            recall = np.where(relevant > 0, 100 * hits / np.where(relevant > 0, relevant, 1), 0.0)
            total = precision + recall
            f = np.where(total > 0, 2 * precision * recall / np.where(total > 0, total, 1), 0.0)
        arrays[f"p{prefix}10"], arrays[f"r{prefix}10"], arrays[f"f{prefix}10"] = precision, recall, f
    # Per-target GAP is kept in percent, or -1 for a target without a positive weight (evaluate).
    key = "lenient_gap" if mode == "lenient" else "gap"
    raw = np.array([float(t[key]) / 100 if float(t[key]) >= 0 else -1.0 for t in targets], dtype=float)
    arrays["gap"] = 100 * raw[rows].mean(axis=1) if len(targets) else np.zeros(rows.shape[0])
    return {name: arrays[name] for name in SETTING_FIGURES}
