"""Benchmark statistics as in SWORDS Table 2 and Fig. 1 (docs/design.md §7).

Everything here works on plain arrays: one row per candidate (its target's row number, its
accept / reject / abstain counts, its source group) and one row per target (its part of
speech). ``analysis.services`` loads those arrays from the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from schemes.scores import (
    ABSTAIN,
    ACCEPT,
    DEFAULT_THRESHOLDS,
    ScoreThresholds,
    apply_overrides,
    is_acceptable,
    is_conceivable,
    is_inconceivable,
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
    # Round before ceil so that 0.3 * 10 = 3.0000000000000004 still lands in (0.2, 0.3].
    index = np.where(scored > 0, np.ceil(np.round(scored * bins, 9)).astype(np.int64), 0)
    counts = np.bincount(index, minlength=bins + 1)
    labels = ["0"] + [f"({i / bins:g}, {(i + 1) / bins:g}]" for i in range(bins)]
    return {"bins": labels, "counts": [int(count) for count in counts]}


def _mean(total: float, n: int) -> float | None:
    return float(total) / n if n else None


def _per_target(per_target_counts: dict[str, npt.NDArray[np.int64]], n_targets: int) -> dict[str, float | None]:
    return {key: _mean(values.sum(), n_targets) for key, values in per_target_counts.items()}


def _per_target_nonempty(per_target_counts: dict[str, npt.NDArray[np.int64]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, values in per_target_counts.items():
        nonempty = values[values > 0]
        result[key] = _mean(nonempty.sum(), nonempty.size)
    result["targets"] = {key: int((values > 0).sum()) for key, values in per_target_counts.items()}
    return result


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
    """
    n_targets = len(target_pos)
    target_of = np.asarray(candidate_target, dtype=np.int64)
    table = np.asarray(counts, dtype=np.int64).reshape(-1, 3)
    groups = np.asarray(candidate_source_group, dtype=object)
    pos = np.asarray(target_pos, dtype=object)
    if not (target_of.size == table.shape[0] == groups.size):
        raise ValueError("candidate_target, counts and candidate_source_group need one row per candidate")
    if target_of.size and (target_of.min() < 0 or target_of.max() >= n_targets):
        raise ValueError("candidate_target points outside target_pos")

    score = scores_from_counts(table)
    if decided is not None:
        score = apply_overrides(score, decided, thresholds)
    flags = {
        "candidates": np.ones(target_of.size, dtype=bool),
        "inconceivable": is_inconceivable(score, thresholds),
        "conceivable": is_conceivable(score, thresholds),
        "acceptable": is_acceptable(score, thresholds),
    }
    per_target_counts = {
        key: np.bincount(target_of[flag], minlength=n_targets).astype(np.int64) for key, flag in flags.items()
    }
    labels = int(table.sum())

    by_pos: dict[str, Any] = {}
    for name in sorted(set(pos.tolist())):
        target_mask = pos == name
        candidate_mask = target_mask[target_of] if target_of.size else np.zeros(0, dtype=bool)
        subset = {key: values[target_mask] for key, values in per_target_counts.items()}
        pos_labels = int(table[candidate_mask].sum())
        by_pos[name] = {
            "targets": int(target_mask.sum()),
            "candidates": int(candidate_mask.sum()),
            "labels": pos_labels,
            "per_target": _per_target(subset, int(target_mask.sum())),
            "per_target_nonempty": _per_target_nonempty(subset),
        }

    by_source: dict[str, Any] = {}
    for group in SOURCE_GROUPS:
        mask = groups == group
        if not mask.any():
            continue
        group_score = score[mask]
        scored = group_score[~np.isnan(group_score)]
        by_source[group] = {
            "candidates": int(mask.sum()),
            "share": float(mask.sum()) / target_of.size,
            "labels": int(table[mask].sum()),
            "mean_score": float(scored.mean()) if scored.size else None,
            "inconceivable": int(flags["inconceivable"][mask].sum()),
            "conceivable": int(flags["conceivable"][mask].sum()),
            "acceptable": int(flags["acceptable"][mask].sum()),
            "score_histogram": score_histogram(group_score, histogram_bins),
        }

    return {
        "contexts": int(contexts),
        "targets": n_targets,
        "candidates": int(target_of.size),
        "labels": labels,
        "unscored_candidates": int(np.isnan(score).sum()),
        "per_target": _per_target(per_target_counts, n_targets),
        "per_target_nonempty": _per_target_nonempty(per_target_counts),
        "abstain_share": _mean(table[:, ABSTAIN].sum(), labels),
        "accept_share": _mean(table[:, ACCEPT].sum(), labels),
        "thresholds": {"acceptable": thresholds.acceptable, "conceivable": thresholds.conceivable},
        "by_pos": by_pos,
        "by_source": by_source,
    }
