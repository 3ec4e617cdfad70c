"""Candidate scores and categories (docs/design.md §7, SWORDS §3.3).

A candidate's score is its share of accepts among its valid labels. Abstain counts as
not-accept in the score, as in SWORDS, but it is counted on its own so that it can be
reported or excluded later. The three categories nest: every acceptable candidate is also
conceivable, so Table 2's "conceivable" and "inconceivable" add up to all scored candidates.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

ACCEPT, REJECT, ABSTAIN = 0, 1, 2
#: Column order of every label-count table in this package.
VALUES: tuple[str, str, str] = ("accept", "reject", "abstain")
VALUE_CODES: dict[str, int] = {value: code for code, value in enumerate(VALUES)}

ACCEPTABLE, CONCEIVABLE, INCONCEIVABLE, UNSCORED = "acceptable", "conceivable", "inconceivable", "unscored"

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ScoreThresholds:
    """Scores strictly above ``acceptable`` are acceptable; strictly above ``conceivable``, conceivable."""

    acceptable: float = 0.5
    conceivable: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.conceivable <= self.acceptable <= 1.0:
            raise ValueError("thresholds must satisfy 0 <= conceivable <= acceptable <= 1")


#: SWORDS's thresholds: acceptable above 0.5, conceivable above 0.
DEFAULT_THRESHOLDS = ScoreThresholds()


def encode_values(values: Iterable[str]) -> IntArray:
    """Label values as the integer codes ACCEPT / REJECT / ABSTAIN."""
    try:
        return np.fromiter((VALUE_CODES[value] for value in values), dtype=np.int64)
    except KeyError as error:
        raise ValueError(f"unknown label value {error.args[0]!r}; expected one of {', '.join(VALUES)}") from None


def count_table(candidate_index: npt.ArrayLike, value_codes: npt.ArrayLike, n_candidates: int) -> IntArray:
    """Per-candidate counts of accept, reject and abstain: an ``n_candidates`` x 3 table.

    ``candidate_index`` holds 0-based row numbers, one per label.
    """
    rows = np.asarray(candidate_index, dtype=np.int64)
    codes = np.asarray(value_codes, dtype=np.int64)
    if rows.shape != codes.shape:
        raise ValueError("one candidate index per label value is needed")
    if rows.size and (rows.min() < 0 or rows.max() >= n_candidates):
        raise ValueError("candidate index out of range")
    flat = np.bincount(rows * 3 + codes, minlength=n_candidates * 3)
    return flat.reshape(n_candidates, 3).astype(np.int64)


def scores(accepts: npt.ArrayLike, totals: npt.ArrayLike) -> FloatArray:
    """accepts / totals per candidate; NaN where a candidate has no valid label yet."""
    accepts_array = np.asarray(accepts, dtype=np.float64)
    totals_array = np.asarray(totals, dtype=np.float64)
    if np.any(accepts_array > totals_array) or np.any(accepts_array < 0):
        raise ValueError("accepts must lie between 0 and the number of labels")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals_array > 0, accepts_array / np.where(totals_array > 0, totals_array, 1), np.nan)


def scores_from_counts(counts: npt.ArrayLike) -> FloatArray:
    """Scores from an n x 3 (accept, reject, abstain) table."""
    table = np.asarray(counts)
    return scores(table[:, ACCEPT], table.sum(axis=1))


def is_acceptable(score: FloatArray, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS) -> npt.NDArray[np.bool_]:
    return np.nan_to_num(score, nan=-1.0) > thresholds.acceptable


def is_conceivable(score: FloatArray, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS) -> npt.NDArray[np.bool_]:
    return np.nan_to_num(score, nan=-1.0) > thresholds.conceivable


def is_inconceivable(score: FloatArray, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS) -> npt.NDArray[np.bool_]:
    """Scored and not conceivable (score = 0 with the default thresholds); unscored candidates are not."""
    return ~np.isnan(score) & (np.nan_to_num(score, nan=0.0) <= thresholds.conceivable)


def categories(score: FloatArray, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS) -> npt.NDArray[np.str_]:
    """The most specific category of each candidate: acceptable, conceivable, inconceivable or unscored."""
    result = np.full(score.shape, UNSCORED, dtype=object)
    result[is_inconceivable(score, thresholds)] = INCONCEIVABLE
    result[is_conceivable(score, thresholds)] = CONCEIVABLE
    result[is_acceptable(score, thresholds)] = ACCEPTABLE
    return result.astype(str)


def category_of(score: float | None, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS) -> str:
    """The category of one score (None or NaN: unscored)."""
    if score is None or score != score:
        return UNSCORED
    if score > thresholds.acceptable:
        return ACCEPTABLE
    if score > thresholds.conceivable:
        return CONCEIVABLE
    return INCONCEIVABLE


#: The categories a researcher may decide for a candidate (docs/design.md §17).
OVERRIDE_CATEGORIES: tuple[str, str, str] = (ACCEPTABLE, CONCEIVABLE, INCONCEIVABLE)


def override_score(category: str, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS) -> float:
    """The score a candidate takes when a researcher decides its category and the benchmark applies
    such decisions (docs/design.md §17): 1 for acceptable, 0 for inconceivable, and for conceivable
    the acceptable threshold itself, the highest score that is conceivable and not acceptable (with
    equal thresholds no score is, and the candidate reads as inconceivable)."""
    if category == ACCEPTABLE:
        return 1.0
    if category == CONCEIVABLE:
        return thresholds.acceptable
    if category == INCONCEIVABLE:
        return 0.0
    raise ValueError(f"unknown category {category!r}; expected one of {', '.join(OVERRIDE_CATEGORIES)}")


def apply_overrides(
    score: FloatArray, decided: Iterable[str | None], thresholds: ScoreThresholds = DEFAULT_THRESHOLDS
) -> FloatArray:
    """``score`` with each decided candidate's score replaced by ``override_score`` of its decision;
    ``decided`` holds one category (or None: no decision) per candidate, in the same order."""
    result = np.array(score, dtype=np.float64, copy=True)
    decisions = list(decided)
    if len(decisions) != result.size:
        raise ValueError("one decision (or None) per candidate is needed")
    for row, category in enumerate(decisions):
        if category is not None:
            result[row] = override_score(category, thresholds)
    return result
