"""The filter audit (SWORDS §4.4): what step 2's reduction would lose.

On candidates labeled in full without reduction, step 2 would have dropped those with fewer
than ``pass_min_accepts`` accepts among their first ``step2_labels`` labels. The audit counts
how many of those still get an accept from the full set of labels, and how many of these are
nonetheless not acceptable: the cost of the reduction researchers weigh when choosing the two
settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from schemes.scores import DEFAULT_THRESHOLDS, ScoreThresholds, is_acceptable, scores


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def accepts_in_first(
    *, label_candidate: npt.ArrayLike, label_accept: npt.ArrayLike, n_candidates: int, first: int
) -> npt.NDArray[np.int64]:
    """Accepts among each candidate's first ``first`` labels.

    Labels must come in collection order within each candidate (rows of different candidates
    may interleave).
    """
    rows = np.asarray(label_candidate, dtype=np.int64)
    accept = np.asarray(label_accept, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]]) if rows.size else np.zeros(0, int)
    sizes = np.diff(np.r_[starts, sorted_rows.size])
    position = np.arange(sorted_rows.size) - np.repeat(starts, sizes)
    early = position < first
    return np.bincount(sorted_rows[early], weights=accept[order][early], minlength=n_candidates).astype(np.int64)


def filter_audit(
    *,
    early_accepts: npt.ArrayLike,
    accepts: npt.ArrayLike,
    totals: npt.ArrayLike,
    pass_min_accepts: int = 1,
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
) -> dict[str, Any]:
    """Audit figures over the given candidates (each one labeled in full).

    ``early_accepts``: accepts among a candidate's first step-2 labels; ``accepts`` and ``totals``:
    over all its labels. Shares: ``share_dropped`` of all audited candidates;
    ``share_dropped_with_accept`` of the dropped ones; ``share_still_unacceptable`` of the dropped
    ones with an accept; ``share_of_acceptable_lost`` of all acceptable candidates.
    """
    if pass_min_accepts < 1:
        raise ValueError("pass_min_accepts must be at least 1")
    early = np.asarray(early_accepts, dtype=np.int64)
    accept = np.asarray(accepts, dtype=np.int64)
    total = np.asarray(totals, dtype=np.int64)
    if not early.shape == accept.shape == total.shape:
        raise ValueError("early_accepts, accepts and totals need one value per candidate")
    if np.any(early > accept):
        raise ValueError("a candidate cannot have more early accepts than accepts")
    acceptable = is_acceptable(scores(accept, total), thresholds)
    dropped = early < pass_min_accepts
    dropped_with_accept = dropped & (accept >= 1)
    dropped_acceptable = dropped & acceptable
    counts = {
        "audited": int(early.size),
        "dropped": int(dropped.sum()),
        "kept": int((~dropped).sum()),
        "dropped_with_accept": int(dropped_with_accept.sum()),
        "dropped_acceptable": int(dropped_acceptable.sum()),
        "dropped_with_accept_unacceptable": int((dropped_with_accept & ~acceptable).sum()),
        "acceptable": int(acceptable.sum()),
    }
    return {
        "pass_min_accepts": pass_min_accepts,
        **counts,
        "share_dropped": _share(counts["dropped"], counts["audited"]),
        "share_dropped_with_accept": _share(counts["dropped_with_accept"], counts["dropped"]),
        "share_still_unacceptable": _share(counts["dropped_with_accept_unacceptable"], counts["dropped_with_accept"]),
        "share_of_acceptable_lost": _share(counts["dropped_acceptable"], counts["acceptable"]),
    }


def filter_audit_grid(
    *,
    label_candidate: npt.ArrayLike,
    label_accept: npt.ArrayLike,
    n_candidates: int,
    step2_labels_options: Iterable[int],
    pass_min_accepts_options: Iterable[int],
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
) -> list[dict[str, Any]]:
    """The audit for every pair of settings, so researchers can compare them side by side."""
    rows = np.asarray(label_candidate, dtype=np.int64)
    accept = np.asarray(label_accept, dtype=np.int64)
    all_accepts = np.bincount(rows, weights=accept, minlength=n_candidates).astype(np.int64)
    totals = np.bincount(rows, minlength=n_candidates).astype(np.int64)
    minimums = list(pass_min_accepts_options)
    grid: list[dict[str, Any]] = []
    for step2_labels in step2_labels_options:
        early = accepts_in_first(
            label_candidate=rows, label_accept=accept, n_candidates=n_candidates, first=step2_labels
        )
        for minimum in minimums:
            audit = filter_audit(
                early_accepts=early,
                accepts=all_accepts,
                totals=totals,
                pass_min_accepts=minimum,
                thresholds=thresholds,
            )
            grid.append({"step2_labels": step2_labels, **audit})
    return grid
