"""Benchmark statistics as in SWORDS Table 2 and Fig. 1 (docs/design.md §7).

Everything here works on plain arrays: one row per candidate (its target's row number, its
accept / reject / abstain counts, its source group) and one row per target (its part of
speech). ``analysis.services`` loads those arrays from the database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from schemes.scores import (
    ABSTAIN,
    ACCEPT,
    DEFAULT_THRESHOLDS,
    ScoreThresholds,
    apply_overrides,
    scores_from_counts,
)

COINCO_ONLY, BOTH, THESAURUS_ONLY, OTHER = "coinco-only", "both", "thesaurus-only", "other"
# Candidates proposed here in the generation task (source "crowd") and found in no other source.
CROWD_ONLY = "crowd-only"
SOURCE_GROUPS: tuple[str, ...] = (COINCO_ONLY, BOTH, THESAURUS_ONLY, CROWD_ONLY, OTHER)
# SWORDS names its thesaurus after the edition it used (Roget's); both spellings mean the same source.
THESAURUS_SOURCES = frozenset({"thesaurus", "roget"})
COINCO_SOURCES = frozenset({"coinco"})
CROWD_SOURCES = frozenset({"crowd"})
PER_TARGET_KEYS: tuple[str, ...] = ("candidates", "inconceivable", "conceivable", "acceptable")
HISTOGRAM_BINS = 10


def source_group(sources: Iterable[str]) -> str:
    """SWORDS Fig. 1's grouping of a candidate by where it came from, and the crowd's own proposals."""
    names = {source.strip().casefold() for source in sources}
    from_coinco = bool(names & COINCO_SOURCES)
    from_thesaurus = bool(names & THESAURUS_SOURCES)
    if from_coinco and from_thesaurus:
        return BOTH
    if from_coinco:
        return COINCO_ONLY
    if from_thesaurus:
        return THESAURUS_ONLY
    if names and names <= CROWD_SOURCES:
        return CROWD_ONLY
    return OTHER


def score_histogram(score: npt.NDArray[np.float64], bins: int = HISTOGRAM_BINS) -> dict[str, list[Any]]:
    """Counts of scores: one bin for exactly 0 (inconceivable), then ``bins`` bins (i/bins, (i+1)/bins].

    Unscored candidates (NaN) are left out.
    """
    scored = score[~np.isnan(score)]
    return _binned(scored, np.ones(scored.size, dtype=np.int64), bins)


def _binned(scored: npt.NDArray[np.float64], weights: npt.NDArray[np.int64], bins: int) -> dict[str, list[Any]]:
    """``score_histogram`` of scores counted ``weights`` times each."""
    # Round before ceil so that 0.3 * 10 = 3.0000000000000004 still lands in (0.2, 0.3].
    index = np.where(scored > 0, np.ceil(np.round(scored * bins, 9)).astype(np.int64), 0)
    counts = np.zeros(bins + 1, dtype=np.int64)
    np.add.at(counts, index, weights)
    labels = ["0"] + [f"({i / bins:g}, {(i + 1) / bins:g}]" for i in range(bins)]
    return {"bins": labels, "counts": [int(count) for count in counts]}


def _mean(total: float, n: int) -> float | None:
    return float(total) / n if n else None


#: A group of candidates Table 2 counts alike: (part of speech of their target, source group as an
#: index in ``SOURCE_GROUPS``, score; None for a candidate without a valid label).
Cell = tuple[str, int, float | None]


@dataclass
class Table2Sums:
    """Exact counts every figure of ``benchmark_statistics`` follows from, whatever the thresholds
    (docs/design.md §7, "Incremental figures"): the candidates and their labels by ``Cell``, the
    accept and abstain labels, the targets by part of speech, and each target's highest and lowest
    score by part of speech (a target with candidates none of which is scored has a highest score of
    None and no lowest; a target without candidates neither). Integers only, so the sums of any parts
    (``table2_sums_added``, ``table2_sums_taken``) are those of the whole in any order."""

    candidates: Counter[Cell] = field(default_factory=Counter)
    labels: Counter[Cell] = field(default_factory=Counter)
    accepts: int = 0
    abstains: int = 0
    targets: Counter[str] = field(default_factory=Counter)
    highest: Counter[tuple[str, float | None]] = field(default_factory=Counter)
    lowest: Counter[tuple[str, float]] = field(default_factory=Counter)


_SUMMED = ("candidates", "labels", "targets", "highest", "lowest")


def table2_sums_added(parts: Iterable[Table2Sums]) -> Table2Sums:
    """The sums of parts of a benchmark (of targets apart from each other). Pure."""
    total = Table2Sums()
    for part in parts:
        for name in _SUMMED:
            counted = getattr(total, name)
            for key, count in getattr(part, name).items():
                counted[key] += count
        total.accepts += part.accepts
        total.abstains += part.abstains
    return total


def table2_sums_taken(total: Table2Sums, parts: Iterable[Table2Sums]) -> Table2Sums:
    """``total`` less the sums of parts of it (of targets it counted), as if it never counted them:
    a count that falls to zero is dropped. Pure."""
    result = table2_sums_added([total])
    for part in parts:
        for name in _SUMMED:
            counted = getattr(result, name)
            for key, count in getattr(part, name).items():
                counted[key] -= count
                if not counted[key]:
                    del counted[key]
        result.accepts -= part.accepts
        result.abstains -= part.abstains
    return result


def table2_sums(
    *,
    target_pos: Sequence[str],
    candidate_target: npt.ArrayLike,
    counts: npt.ArrayLike,
    candidate_group: npt.ArrayLike,
    score: npt.NDArray[np.float64] | None = None,
) -> Table2Sums:
    """``Table2Sums`` of targets (their parts of speech) and their candidates (each one's row in
    ``target_pos``, its (accept, reject, abstain) counts and source group index). ``score``: the
    candidates' scores when not their counts' (decisions applied). Pure."""
    pos = np.asarray(target_pos, dtype=object)
    target_of = np.asarray(candidate_target, dtype=np.int64)
    table = np.asarray(counts, dtype=np.int64).reshape(-1, 3)
    groups = np.asarray(candidate_group, dtype=np.int64)
    if score is None:
        score = scores_from_counts(table)
    sums = Table2Sums(accepts=int(table[:, ACCEPT].sum()), abstains=int(table[:, ABSTAIN].sum()))
    if not pos.size:
        return sums
    found_names, pos_code = np.unique(pos, return_inverse=True)
    pos_code = pos_code.reshape(-1)
    names = [str(name) for name in found_names.tolist()]
    sums.targets.update({names[code]: int(n) for code, n in enumerate(np.bincount(pos_code).tolist())})
    if not target_of.size:
        return sums
    scored = ~np.isnan(score)
    # Unscored candidates under -1, below every score, while grouped.
    keyed = np.where(scored, score, -1.0)
    # The cells (part of speech, group, score) in order, each with its candidates and labels: sorted
    # by the three columns at once (a structured array's sort compares its rows field by field, a
    # few times slower), each cell a run of equal rows.
    cell_pos = pos_code[target_of]
    order = np.lexsort((keyed, groups, cell_pos))
    cell_pos, cell_group, cell_score = cell_pos[order], groups[order], keyed[order]
    starts = np.flatnonzero(
        np.concatenate(
            (
                [True],
                (cell_pos[1:] != cell_pos[:-1])
                | (cell_group[1:] != cell_group[:-1])
                | (cell_score[1:] != cell_score[:-1]),
            )
        )
    )
    sizes = np.diff(np.append(starts, target_of.size))
    labels = np.add.reduceat(table.sum(axis=1)[order], starts)
    found = zip(cell_pos[starts].tolist(), cell_group[starts].tolist(), cell_score[starts].tolist(), strict=True)
    for (code, group, value), size, labelled in zip(found, sizes.tolist(), labels.tolist(), strict=True):
        cell = (names[code], int(group), None if value < 0 else float(value))
        sums.candidates[cell] = int(size)
        if labelled:
            sums.labels[cell] = int(labelled)
    n_targets = pos.size
    has = np.bincount(target_of, minlength=n_targets) > 0
    highest = np.full(n_targets, -1.0)
    np.maximum.at(highest, target_of, keyed)
    lowest = np.full(n_targets, 2.0)
    np.minimum.at(lowest, target_of[scored], keyed[scored])
    for row in np.flatnonzero(has).tolist():
        name = names[pos_code[row]]
        value = float(highest[row])
        sums.highest[(name, None if value < 0 else value)] += 1
        if lowest[row] <= 1.0:
            sums.lowest[(name, float(lowest[row]))] += 1
    return sums


def _exact_mean(scores: dict[float, int]) -> float | None:
    """The mean of scores given as (score, how many): exact, so the same in any order, rounded once.
    Each score is a whole number over a power of two (``float.as_integer_ratio``): the sum is a whole
    number over the largest of them, and its quotient by the count is rounded correctly by Python's
    division of whole numbers, as ``float`` rounds the same sum as a ``Fraction``."""
    n = sum(scores.values())
    if not n:
        return None
    ratios = [(value.as_integer_ratio(), count) for value, count in scores.items()]
    scale = max(denominator for (_, denominator), _ in ratios)
    total = sum(numerator * (scale // denominator) * count for (numerator, denominator), count in ratios)
    return total / (scale * n)


def _histogram(scores: dict[float, int], bins: int) -> dict[str, list[Any]]:
    """``score_histogram`` of scores given as (score, how many)."""
    values = np.asarray(list(scores), dtype=np.float64)
    return _binned(values, np.asarray(list(scores.values()), dtype=np.int64), bins)


def table2_from_sums(
    sums: Table2Sums,
    *,
    contexts: int,
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
    histogram_bins: int = HISTOGRAM_BINS,
) -> dict[str, Any]:
    """``benchmark_statistics`` from its sums. Pure."""

    def flagged(value: float | None) -> dict[str, bool]:
        scored = value is not None
        return {
            "candidates": True,
            "inconceivable": scored and value <= thresholds.conceivable,  # type: ignore[operator]
            "conceivable": scored and value > thresholds.conceivable,  # type: ignore[operator]
            "acceptable": scored and value > thresholds.acceptable,  # type: ignore[operator]
        }

    per_pos: dict[str, Counter[str]] = {name: Counter() for name in sums.targets}
    pos_candidates: Counter[str] = Counter()
    pos_labels: Counter[str] = Counter()
    groups: dict[int, dict[str, Any]] = {}
    # The categories a score falls in, worked out once a score: the cells share a few hundred of them.
    categories: dict[float | None, tuple[str, ...]] = {}
    labels_of = sums.labels
    for cell, size in sums.candidates.items():
        name, group, value = cell
        keys = categories.get(value)
        if keys is None:
            flags = flagged(value)
            keys = categories[value] = tuple(key for key in PER_TARGET_KEYS if flags[key])
        labelled = labels_of.get(cell, 0)
        counted_pos = per_pos[name]
        for key in keys:
            counted_pos[key] += size
        pos_candidates[name] += size
        pos_labels[name] += labelled
        counted = groups.get(group)
        if counted is None:
            counted = groups[group] = {
                "candidates": 0,
                "labels": 0,
                "scores": Counter(),
                **dict.fromkeys(PER_TARGET_KEYS[1:], 0),
            }
        counted["candidates"] += size
        counted["labels"] += labelled
        if value is not None:
            counted["scores"][value] += size
        for key in keys:
            if key != "candidates":
                counted[key] += size
    nonempty: dict[str, Counter[str]] = {name: Counter() for name in sums.targets}
    for (name, value), targets in sums.highest.items():
        nonempty[name]["candidates"] += targets
        flags = flagged(value)
        for key in ("conceivable", "acceptable"):
            if flags[key]:
                nonempty[name][key] += targets
    for (name, value), targets in sums.lowest.items():
        if flagged(value)["inconceivable"]:
            nonempty[name]["inconceivable"] += targets

    def per_target(summed: Counter[str], n: int) -> dict[str, float | None]:
        return {key: _mean(summed[key], n) for key in PER_TARGET_KEYS}

    def per_target_nonempty(summed: Counter[str], having: Counter[str]) -> dict[str, Any]:
        result: dict[str, Any] = {key: _mean(summed[key], having[key]) for key in PER_TARGET_KEYS}
        result["targets"] = {key: having[key] for key in PER_TARGET_KEYS}
        return result

    by_pos = {
        name: {
            "targets": sums.targets[name],
            "candidates": pos_candidates[name],
            "labels": pos_labels[name],
            "per_target": per_target(per_pos[name], sums.targets[name]),
            "per_target_nonempty": per_target_nonempty(per_pos[name], nonempty[name]),
        }
        for name in sorted(sums.targets)
    }
    n_candidates = sum(sums.candidates.values())
    by_source: dict[str, Any] = {}
    for number, group_name in enumerate(SOURCE_GROUPS):
        found = groups.get(number)
        if found is None:
            continue
        by_source[group_name] = {
            "candidates": found["candidates"],
            "share": float(found["candidates"]) / n_candidates,
            "labels": found["labels"],
            "mean_score": _exact_mean(found["scores"]),
            "inconceivable": found["inconceivable"],
            "conceivable": found["conceivable"],
            "acceptable": found["acceptable"],
            "score_histogram": _histogram(found["scores"], histogram_bins),
        }
    summed = sum(per_pos.values(), Counter())
    having = sum(nonempty.values(), Counter())
    labels = sum(sums.labels.values())
    return {
        "contexts": int(contexts),
        "targets": sum(sums.targets.values()),
        "candidates": n_candidates,
        "labels": labels,
        "unscored_candidates": sum(size for (_, _, value), size in sums.candidates.items() if value is None),
        "per_target": per_target(summed, sum(sums.targets.values())),
        "per_target_nonempty": per_target_nonempty(summed, having),
        "abstain_share": _mean(sums.abstains, labels),
        "accept_share": _mean(sums.accepts, labels),
        "thresholds": {"acceptable": thresholds.acceptable, "conceivable": thresholds.conceivable},
        "by_pos": by_pos,
        "by_source": by_source,
    }


def benchmark_statistics(
    *,
    contexts: int,
    target_pos: Sequence[str],
    candidate_target: npt.ArrayLike,
    counts: npt.ArrayLike,
    candidate_source_group: Sequence[str],
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
    histogram_bins: int = HISTOGRAM_BINS,
    decided: Sequence[str | None] | None = None,
) -> dict[str, Any]:
    """SWORDS Table 2 for one benchmark, plus breakdowns by part of speech and by source.

    ``candidate_target`` gives each candidate's 0-based row in ``target_pos``; ``counts`` is the
    candidates' (accept, reject, abstain) table of valid labels. Means "per target" divide by
    all targets; ``per_target_nonempty`` divides each category by the targets having at least
    one of it (the paper's acceptable column is computed this way). ``decided``: researchers'
    decisions per candidate (a category or None), applied to the scores when given (docs/design.md §17).
    A source group's mean score is exact, rounded once: the same whatever order its candidates
    come in, so the figures summed from parts of the benchmark (``table2_from_sums``) are these.
    """
    n_targets = len(target_pos)
    target_of = np.asarray(candidate_target, dtype=np.int64)
    table = np.asarray(counts, dtype=np.int64).reshape(-1, 3)
    groups = np.asarray(candidate_source_group, dtype=object)
    if not (target_of.size == table.shape[0] == groups.size):
        raise ValueError("candidate_target, counts and candidate_source_group need one row per candidate")
    if target_of.size and (target_of.min() < 0 or target_of.max() >= n_targets):
        raise ValueError("candidate_target points outside target_pos")
    index = {group: number for number, group in enumerate(SOURCE_GROUPS)}
    try:
        codes = np.fromiter((index[group] for group in groups.tolist()), dtype=np.int64, count=groups.size)
    except KeyError as error:
        raise ValueError(f"unknown source group {error.args[0]!r}") from None
    score = scores_from_counts(table)
    if decided is not None:
        score = apply_overrides(score, decided, thresholds)
    sums = table2_sums(
        target_pos=target_pos, candidate_target=target_of, counts=table, candidate_group=codes, score=score
    )
    return table2_from_sums(sums, contexts=contexts, thresholds=thresholds, histogram_bins=histogram_bins)
