"""Agreement between annotators (docs/design.md §7): Krippendorff's alpha with a bootstrap interval,
each worker's agreement with the leave-one-out majority, Cohen's kappa per pair of workers,
and the rank-biased overlap of re-annotated rankings against k (SWORDS App. C.1, Fig. 4).

Inputs are plain arrays with one row per label: the candidate's 0-based row, the worker's
0-based row (-1 when a label names no worker, as in the public SWORDS files) and the value
code from ``schemes.scores`` (ACCEPT, REJECT, ABSTAIN).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from analysis.rbo import rbo_ext_same_items
from analysis.slices import label_slices, slice_rows
from schemes.scores import ABSTAIN, ACCEPT, REJECT

# pandas is imported by the functions that use it: it takes about a second to import, which
# every command and web process paid at start-up (analysis registers its formats at start).
if TYPE_CHECKING:
    import pandas as pd

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


# --- Krippendorff's alpha -------------------------------------------------------------------


def krippendorff_alpha(counts: npt.ArrayLike) -> float:
    """Nominal alpha from a unit x category count table (one row per candidate).

    The count table is what the ``krippendorff`` package handles fast: the worker x unit
    matrix of the same labels takes seconds and gigabytes (docs/design.md §15). Units with fewer than
    two labels carry no pairable value and are left out. NaN when fewer than two categories
    occur among pairable values (agreement by chance is then undefined).
    """
    table = np.asarray(counts, dtype=np.float64)
    table = table[table.sum(axis=1) >= 2]
    if table.shape[0] == 0 or np.count_nonzero(table.sum(axis=0)) < 2:
        return float("nan")
    return _nominal_alpha(table)


def _nominal_alpha(table: FloatArray) -> float:
    """``krippendorff.alpha(value_counts=table, level_of_measurement="nominal")``, to the last digit,
    with the units' coincidence matrices made a slice of units at a time (a sixteenth of
    ``LABEL_SLICE``: a unit takes three 3 x 3 float arrays where a label takes a few integers).

    The package makes a units x categories x categories array of them in one go, several times
    over (350 MB at ten times SWORDS). numpy sums such an array over its first axis one unit after
    the other, so carrying the running sum into the next slice as its first row adds the same
    numbers in the same order: the result is the package's, bit for bit (a test holds it to that).
    """
    categories = table.shape[1]
    identity = np.eye(categories)[np.newaxis, ...]
    coincidences: FloatArray | None = None
    step = max(1, slice_rows() // 16)
    for start in range(0, table.shape[0], step):
        units = table[start : start + step]
        pairable = np.maximum(units.sum(axis=1), 2)
        diagonals = units[:, np.newaxis, :] * identity
        unnormalized = units[..., np.newaxis] * units[:, np.newaxis, :] - diagonals
        part = np.divide(unnormalized, (pairable - 1).reshape((-1, 1, 1)), dtype=np.float64)
        if coincidences is not None:
            part = np.concatenate([coincidences[np.newaxis, ...], part])
        coincidences = part.sum(axis=0)
    assert coincidences is not None
    n_v = coincidences.sum(axis=0)
    expected = np.divide(np.outer(n_v, n_v) - np.diagflat(n_v), n_v.sum() - 1, dtype=np.float64)
    domain = np.arange(categories)
    distance = (domain[:, np.newaxis] != domain[np.newaxis, :]).astype(np.float64)
    return float(1 - (coincidences * distance).sum() / (expected * distance).sum())


def _alpha_from_sums(diagonal: FloatArray, marginals: FloatArray) -> FloatArray:
    """Alpha from the coincidence matrix's diagonal total and its category marginals (any leading shape)."""
    n = marginals.sum(axis=-1)
    expected = n * n - (marginals * marginals).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1.0) * (n - diagonal) / np.where(expected > 0, expected, 1), np.nan)


def _patterns(counts: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Distinct count rows of pairable units, their frequency, and each one's coincidence diagonal."""
    table = np.asarray(counts, dtype=np.int64)
    table = table[table.sum(axis=1) >= 2]
    if table.shape[0] == 0:
        return np.zeros((0, 0)), np.zeros(0), np.zeros(0)
    # One integer per row (mixed radix) makes the distinct rows a 1-D unique, far faster than axis=0.
    base = int(table.max()) + 1
    weights = base ** np.arange(table.shape[1] - 1, -1, -1, dtype=np.int64)
    _, first, frequency = np.unique(table @ weights, return_index=True, return_counts=True)
    patterns_f = table[first].astype(np.float64)
    pairable = patterns_f.sum(axis=1)
    diagonal = (patterns_f * (patterns_f - 1)).sum(axis=1) / (pairable - 1)
    return patterns_f, frequency.astype(np.float64), diagonal


def krippendorff_alpha_fast(counts: npt.ArrayLike) -> float:
    """The same nominal alpha computed directly from the coincidence matrix (used by the bootstrap)."""
    patterns, frequency, diagonal = _patterns(counts)
    if frequency.size == 0:
        return float("nan")
    return float(_alpha_from_sums(np.asarray(frequency @ diagonal), frequency @ patterns))


@dataclass(frozen=True)
class AlphaEstimate:
    alpha: float
    low: float
    high: float
    confidence: float
    units: int
    labels: int
    resamples: int

    def as_dict(self) -> dict[str, Any]:
        return {key: _json_float(value) for key, value in asdict(self).items()}


def krippendorff_alpha_bootstrap(
    counts: npt.ArrayLike, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> AlphaEstimate:
    """Nominal alpha with a percentile bootstrap interval over units (candidates).

    A resample of units is a multinomial draw over the distinct count rows, which gives
    exactly the distribution of resampling the units themselves while only touching the few
    dozen distinct rows a crowd benchmark has.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must lie strictly between 0 and 1")
    table = np.asarray(counts, dtype=np.int64)
    pairable_rows = table[table.sum(axis=1) >= 2]
    alpha = krippendorff_alpha(table)
    patterns, frequency, diagonal = _patterns(table)
    units = int(frequency.sum())
    low = high = float("nan")
    if units and resamples > 0 and not np.isnan(alpha):
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(units, frequency / units, size=resamples).astype(np.float64)
        samples = _alpha_from_sums(draws @ diagonal, draws @ patterns)
        samples = samples[~np.isnan(samples)]
        if samples.size:
            tail = (1.0 - confidence) / 2.0
            low, high = (float(v) for v in np.quantile(samples, [tail, 1.0 - tail]))
    return AlphaEstimate(
        alpha=alpha,
        low=low,
        high=high,
        confidence=confidence,
        units=units,
        labels=int(pairable_rows.sum()),
        resamples=resamples,
    )


# --- each worker against the leave-one-out majority ------------------------------------------


def leave_one_out_agreement(
    *,
    candidate: npt.ArrayLike,
    worker: npt.ArrayLike,
    value: npt.ArrayLike,
    collapse_abstain: bool = True,
) -> pd.DataFrame:
    """How often each worker's label matches the majority of the other labels on the same candidate.

    With ``collapse_abstain`` the comparison is accept versus not-accept, the distinction the
    score makes (abstain counts as not-accept); otherwise the three values are compared.
    A label is compared only when the candidate has another label and the others' majority
    is unique; ties are counted apart. Labels without a worker (-1) still vote for others.
    Returns one row per worker: worker, labels, compared, agreed, ties, agreement.

    The arrays may be of any integer type and any order; they are read a slice of labels at a
    time (``LABEL_SLICE``), so memory holds the candidates' table and one slice's temporaries,
    not several 64-bit copies of every label.
    """
    import pandas as pd

    candidates, workers, values = np.asarray(candidate), np.asarray(worker), np.asarray(value)
    columns = ["worker", "labels", "compared", "agreed", "ties", "agreement"]
    if candidates.size == 0:
        return pd.DataFrame(columns=columns)
    n_values = 2 if collapse_abstain else 3

    def codes_of(part: slice) -> IntArray:
        codes = values[part].astype(np.int64)
        return np.where(codes == ACCEPT, 0, 1) if collapse_abstain else codes

    n_candidates = int(candidates.max()) + 1
    flat = np.zeros(n_candidates * n_values, dtype=np.int64)
    for part in label_slices(candidates.size):
        flat += np.bincount(candidates[part].astype(np.int64) * n_values + codes_of(part), minlength=flat.size)
    table = flat.reshape(n_candidates, n_values)
    # Sums per worker by bincount: over the worker rows themselves when they are dense (as
    # label_arrays numbers them), else over their ranks among the distinct workers.
    n_rows = int(workers.max()) + 1
    ranks: IntArray | None = None
    worker_ids = np.arange(n_rows)
    if n_rows > 4 * workers.size + 1024:
        mine_all = workers >= 0
        worker_ids, inverse = np.unique(workers[mine_all], return_inverse=True)
        ranks = np.full(workers.size, -1, dtype=np.int64)
        ranks[mine_all] = inverse.ravel()
        n_rows = worker_ids.size
    sums = np.zeros((4, max(n_rows, 0)), dtype=np.int64)
    for part in label_slices(candidates.size):
        rank = workers[part].astype(np.int64) if ranks is None else ranks[part]
        mine = rank >= 0
        rank = rank[mine]
        codes = codes_of(part)[mine]
        others = table[candidates[part][mine]]
        others[np.arange(others.shape[0]), codes] -= 1
        has_others = others.sum(axis=1) > 0
        top = others.max(axis=1)
        unique_top = (others == top[:, None]).sum(axis=1) == 1
        majority = others.argmax(axis=1)
        compared = has_others & unique_top
        agreed = compared & (majority == codes)
        tie = has_others & ~unique_top
        for row, flags in enumerate((None, compared, agreed, tie)):
            sums[row] += np.bincount(rank, weights=flags, minlength=n_rows).astype(np.int64)
    # The workers that have a label, in the order of their rows.
    present = np.flatnonzero(sums[0])
    result = pd.DataFrame(
        {
            "worker": worker_ids[present].astype(np.int64),
            "labels": sums[0][present],
            "compared": sums[1][present],
            "agreed": sums[2][present],
            "ties": sums[3][present],
        }
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        result["agreement"] = np.where(result["compared"] > 0, result["agreed"] / result["compared"], np.nan)
    return result[columns]


# --- Cohen's kappa per pair of workers -------------------------------------------------------


def _pairs_by_offset(candidate: IntArray) -> Iterator[tuple[IntArray, IntArray]]:
    """Index pairs (i, j), i < j, of labels on the same candidate, one offset at a time: (i, i +
    offset) for each label i whose candidate has a label ``offset`` places further on.
    ``candidate`` must be sorted."""
    n = candidate.size
    if n == 0:
        return
    starts = np.flatnonzero(np.r_[True, candidate[1:] != candidate[:-1]])
    sizes = np.diff(np.r_[starts, n])
    group_end = np.repeat(starts + sizes, sizes)
    index = np.arange(n)
    for offset in range(1, int(sizes.max())):
        i = index[index + offset < group_end]
        yield i, i + offset


def _candidate_bands(candidate: npt.NDArray[np.integer[Any]]) -> Iterator[slice]:
    """Slices of about ``LABEL_SLICE`` labels that never split a candidate's labels (one candidate
    with more labels than that is a band of its own). ``candidate`` must be sorted."""
    start, size, rows = 0, candidate.size, slice_rows()
    while start < size:
        end = start + rows
        if end >= size:
            end = size
        else:
            # Back to the first label of the candidate the slice would cut, or on past its last.
            end = int(np.searchsorted(candidate, candidate[end], side="left"))
            if end <= start:
                end = int(np.searchsorted(candidate, candidate[start], side="right"))
        yield slice(start, end)
        start = end


def pairwise_cohen_kappa(
    *, candidate: npt.ArrayLike, worker: npt.ArrayLike, value: npt.ArrayLike, min_overlap: int = 1
) -> pd.DataFrame:
    """Cohen's kappa for every pair of workers who judged common candidates, abstain excluded.

    As ProLex does with its 0 labels, abstentions are dropped before pairing, so kappa compares
    accept against reject. A worker's repeated label on one candidate counts once (the first).
    Returns one row per pair with at least ``min_overlap`` common candidates: worker_a < worker_b,
    items, both_accept, a_accept_b_reject, a_reject_b_accept, both_reject, observed, kappa
    (NaN when chance agreement is 1, i.e. both used a single identical value throughout).
    """
    import pandas as pd

    candidates, workers, codes = np.asarray(candidate), np.asarray(worker), np.asarray(value)
    columns = [
        "worker_a",
        "worker_b",
        "items",
        "both_accept",
        "a_accept_b_reject",
        "a_reject_b_accept",
        "both_reject",
        "observed",
        "kappa",
    ]
    n_workers = int(workers.max()) + 1 if workers.size else 0
    if n_workers <= 0:
        return pd.DataFrame(columns=columns)
    # Pairs lie within a candidate, so the labels are taken a band of whole candidates at a time
    # (bands of the labels as given when they come grouped by candidate, as label_arrays gives
    # them; else of a stable sort by candidate, which keeps each worker's first label first).
    if not bool(np.all(candidates[1:] >= candidates[:-1])):
        order = np.argsort(candidates, kind="stable")
        candidates, workers, codes = candidates[order], workers[order], codes[order]
        del order
    # Cell 0: both accept, 1: a accepts and b rejects, 2: a rejects and b accepts, 3: both reject.
    # Pairs are counted one offset within the candidate at a time (labels i and i + offset), so
    # memory holds the pairs of one offset, not the tens of millions of a large benchmark at once.
    few_workers = n_workers * n_workers <= 4_000_000
    counted: IntArray | dict[int, IntArray] = np.zeros(n_workers * n_workers * 4, dtype=np.int64) if few_workers else {}
    for band in _candidate_bands(candidates):
        band_workers = workers[band].astype(np.int64)
        band_codes = codes[band].astype(np.int64)
        keep = (band_workers >= 0) & (band_codes != ABSTAIN)
        if not keep.any():
            continue
        band_candidates = candidates[band][keep].astype(np.int64)
        band_workers = band_workers[keep]
        band_rejects = (band_codes[keep] != ACCEPT).astype(np.int64)
        # Order by candidate then worker; keep each worker's first label on a candidate.
        order = np.argsort((band_candidates - band_candidates[0]) * n_workers + band_workers, kind="stable")
        band_candidates, band_workers, band_rejects = band_candidates[order], band_workers[order], band_rejects[order]
        first = np.r_[True, (band_candidates[1:] != band_candidates[:-1]) | (band_workers[1:] != band_workers[:-1])]
        band_candidates, band_workers, band_rejects = band_candidates[first], band_workers[first], band_rejects[first]
        for i, j in _pairs_by_offset(band_candidates):
            # Sorted by worker within a candidate, so workers[i] < workers[j].
            code = (band_workers[i] * n_workers + band_workers[j]) * 4 + band_rejects[i] * 2 + band_rejects[j]
            if isinstance(counted, dict):
                found, times = np.unique(code, return_counts=True)
                for key, count in zip(found.tolist(), times.tolist(), strict=True):
                    counted[key] = counted.get(key, 0) + count
            else:
                counted += np.bincount(code, minlength=counted.size)
    if isinstance(counted, dict):
        if not counted:
            return pd.DataFrame(columns=columns)
        codes_seen = np.fromiter(counted, dtype=np.int64, count=len(counted))
        keys, pair = np.unique(codes_seen // 4, return_inverse=True)
        weights = np.fromiter(counted.values(), dtype=np.int64, count=len(counted))
        cells = np.bincount(pair.ravel() * 4 + codes_seen % 4, weights=weights, minlength=keys.size * 4)
        cells = cells.reshape(keys.size, 4).astype(np.float64)
    else:
        # Few workers: every possible pair was counted directly; keep those that occur.
        all_cells = counted.reshape(-1, 4)
        keys = np.flatnonzero(all_cells.sum(axis=1))
        if keys.size == 0:
            return pd.DataFrame(columns=columns)
        cells = all_cells[keys].astype(np.float64)
    items = cells.sum(axis=1)
    observed = (cells[:, 0] + cells[:, 3]) / items
    a_accepts = (cells[:, 0] + cells[:, 1]) / items
    b_accepts = (cells[:, 0] + cells[:, 2]) / items
    chance = a_accepts * b_accepts + (1 - a_accepts) * (1 - b_accepts)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(chance < 1.0, (observed - chance) / np.where(chance < 1.0, 1.0 - chance, 1.0), np.nan)
    result = pd.DataFrame(
        {
            "worker_a": keys // n_workers,
            "worker_b": keys % n_workers,
            "items": items.astype(np.int64),
            "both_accept": cells[:, 0].astype(np.int64),
            "a_accept_b_reject": cells[:, 1].astype(np.int64),
            "a_reject_b_accept": cells[:, 2].astype(np.int64),
            "both_reject": cells[:, 3].astype(np.int64),
            "observed": observed,
            "kappa": kappa,
        }
    )
    return result[result["items"] >= min_overlap].reset_index(drop=True)[columns]


def kappa_summary(pairs: pd.DataFrame) -> dict[str, Any]:
    """Pairs, their mean kappa, and the mean weighted by common items (pairs with undefined kappa left out)."""
    defined = pairs[pairs["kappa"].notna()] if len(pairs) else pairs
    weights = defined["items"].to_numpy(dtype=np.float64) if len(defined) else np.zeros(0)
    values = defined["kappa"].to_numpy(dtype=np.float64) if len(defined) else np.zeros(0)
    return {
        "pairs": len(pairs),
        "pairs_with_kappa": len(defined),
        "mean": _json_float(values.mean()) if values.size else None,
        "median": _json_float(np.median(values)) if values.size else None,
        "weighted_mean": _json_float((values * weights).sum() / weights.sum()) if values.size else None,
        "items": int(pairs["items"].sum()) if len(pairs) else 0,
    }


@dataclass(frozen=True)
class KappaEstimate:
    """Cohen's kappa over items judged by two annotators, with a percentile bootstrap interval."""

    kappa: float
    low: float
    high: float
    confidence: float
    items: int
    resamples: int

    def as_dict(self) -> dict[str, Any]:
        return {key: _json_float(value) for key, value in asdict(self).items()}


def _kappa_from_cells(cells: FloatArray) -> FloatArray:
    """Kappa of each row of 2x2 tables (both accept, a only, b only, both reject); NaN where chance is 1."""
    items = cells.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (cells[..., 0] + cells[..., 3]) / items
        first = (cells[..., 0] + cells[..., 1]) / items
        second = (cells[..., 0] + cells[..., 2]) / items
        chance = first * second + (1 - first) * (1 - second)
        return np.where(chance < 1.0, (observed - chance) / (1.0 - chance), np.nan)


def cohen_kappa_interval(
    first: npt.ArrayLike, second: npt.ArrayLike, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> KappaEstimate:
    """Cohen's kappa of two parallel arrays of accept / reject codes (one pair of labels per item),
    as ProLex measures it on its doubly annotated subset (abstentions are left out before). The
    interval resamples items: a resample is a multinomial draw over the four cells of the table."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must lie strictly between 0 and 1")
    a = np.asarray(first, dtype=np.int64) == ACCEPT
    b = np.asarray(second, dtype=np.int64) == ACCEPT
    if a.shape != b.shape:
        raise ValueError("the two annotators need one label each per item")
    cell = (~a).astype(np.int64) * 2 + (~b).astype(np.int64)
    cells = np.bincount(cell, minlength=4).astype(np.float64)
    items = int(cells.sum())
    kappa = float(_kappa_from_cells(cells)) if items else float("nan")
    low = high = float("nan")
    if items and resamples > 0 and not np.isnan(kappa):
        draws = np.random.default_rng(seed).multinomial(items, cells / items, size=resamples).astype(np.float64)
        samples = _kappa_from_cells(draws)
        samples = samples[~np.isnan(samples)]
        if samples.size:
            tail = (1.0 - confidence) / 2.0
            low, high = (float(v) for v in np.quantile(samples, [tail, 1.0 - tail]))
    return KappaEstimate(kappa=kappa, low=low, high=high, confidence=confidence, items=items, resamples=resamples)


def _jaccard(first: frozenset[Any], second: frozenset[Any]) -> float | None:
    union = first | second
    return len(first & second) / len(union) if union else None


def pairwise_jaccard(annotations: Iterable[Mapping[int, Mapping[Any, frozenset[str]]]]) -> dict[str, Any]:
    """Smart Word Suggestions' agreement over sentences, each annotator's targets (span ->
    suggestions) per sentence: PA-det, the mean Jaccard of two annotators' sets of targets over
    every pair of annotators of a sentence, and PA-sug, the mean Jaccard of their suggestion sets
    over every target both marked. A pair that marked nothing at all is left out of PA-det."""
    detection: list[float] = []
    suggestion: list[float] = []
    for sentence in annotations:
        marked = list(sentence.values())
        for index, first in enumerate(marked):
            for second in marked[index + 1 :]:
                shared = first.keys() & second.keys()
                if (value := _jaccard(frozenset(first), frozenset(second))) is not None:
                    detection.append(value)
                suggestion.extend(
                    value for span in shared if (value := _jaccard(first[span], second[span])) is not None
                )
    return {
        "pa_det": float(np.mean(detection)) if detection else None,
        "pa_sug": float(np.mean(suggestion)) if suggestion else None,
        "pairs": len(detection),
        "shared_targets": len(suggestion),
    }


# --- rank-biased overlap against k re-annotated labels ----------------------------------------


@dataclass(frozen=True)
class RboPoint:
    k: int
    mean: float
    std: float
    samples: int


def _ranks_within(group: IntArray, primary: FloatArray, tiebreak: npt.NDArray[Any]) -> IntArray:
    """0-based rank of each row within its group, by ``primary`` ascending then ``tiebreak``."""
    order = np.lexsort((tiebreak, primary, group))
    sorted_group = group[order]
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    sizes = np.diff(np.r_[starts, sorted_group.size])
    positions = np.arange(sorted_group.size) - np.repeat(starts, sizes)
    ranks = np.empty(group.size, dtype=np.int64)
    ranks[order] = positions
    return ranks


def rbo_against_k(
    *,
    candidate_target: npt.ArrayLike,
    reference_score: npt.ArrayLike,
    label_candidate: npt.ArrayLike,
    label_accept: npt.ArrayLike,
    ks: Iterable[int] = range(1, 10),
    samples: int = 100,
    p: float = 0.9,
    seed: int = 0,
) -> list[RboPoint]:
    """RBO between the benchmark's ranking and rankings from k sampled re-annotation labels.

    SWORDS App. C.1 / Fig. 4: for each k and each of ``samples`` draws, every candidate keeps k of
    its re-annotation labels drawn without replacement (all of them when it has fewer), the draw's
    scores rank each target's candidates, and the extrapolated RBO against the reference ranking is
    averaged over targets. Returns each k's mean and standard deviation over the draws.

    One row per candidate in ``candidate_target`` (its target's row) and ``reference_score``;
    one row per re-annotation label in ``label_candidate`` and ``label_accept`` (1 accept, 0 not).
    The reference ranking breaks ties by candidate row; a draw breaks its ties at random, so that
    ties cannot copy the reference's order.
    """
    targets = np.asarray(candidate_target, dtype=np.int64)
    reference = np.asarray(reference_score, dtype=np.float64)
    label_rows = np.asarray(label_candidate, dtype=np.int64)
    accepts = np.asarray(label_accept, dtype=np.float64)
    k_values = [int(k) for k in ks]
    if any(k < 1 for k in k_values):
        raise ValueError("k must be at least 1")
    # Only candidates with re-annotation labels take part; targets are renumbered densely.
    n_candidates = targets.size
    has_labels = np.bincount(label_rows, minlength=n_candidates) > 0
    present = np.flatnonzero(has_labels & ~np.isnan(reference))
    if present.size == 0:
        return [RboPoint(k=k, mean=float("nan"), std=float("nan"), samples=0) for k in k_values]
    row_map = np.full(n_candidates, -1, dtype=np.int64)
    row_map[present] = np.arange(present.size)
    _, group = np.unique(targets[present], return_inverse=True)
    group = group.astype(np.int64)
    reference_rank = _ranks_within(group, -reference[present], np.arange(present.size))

    keep = row_map[label_rows] >= 0
    label_rows, accepts = row_map[label_rows[keep]], accepts[keep]
    order = np.argsort(label_rows, kind="stable")
    label_rows, accepts = label_rows[order], accepts[order]
    rng = np.random.default_rng(seed)
    points: list[RboPoint] = []
    for k in k_values:
        values = np.empty(samples, dtype=np.float64)
        for sample in range(samples):
            position = _ranks_within(label_rows, rng.random(label_rows.size), np.zeros(label_rows.size))
            chosen = position < k
            totals = np.bincount(label_rows[chosen], minlength=present.size)
            drawn = np.bincount(label_rows[chosen], weights=accepts[chosen], minlength=present.size) / totals
            drawn_rank = _ranks_within(group, -drawn, rng.random(present.size))
            values[sample] = float(np.mean(rbo_ext_same_items(group, reference_rank, drawn_rank, p)))
        points.append(
            RboPoint(
                k=k,
                mean=float(values.mean()) if samples else float("nan"),
                std=float(values.std(ddof=1)) if samples > 1 else 0.0,
                samples=samples,
            )
        )
    return points


def _json_float(value: Any) -> Any:
    """NaN and infinities become None so that results serialise as strict JSON."""
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if np.isfinite(number) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


__all__ = [
    "ACCEPT",
    "REJECT",
    "AlphaEstimate",
    "KappaEstimate",
    "RboPoint",
    "cohen_kappa_interval",
    "kappa_summary",
    "krippendorff_alpha",
    "krippendorff_alpha_bootstrap",
    "krippendorff_alpha_fast",
    "leave_one_out_agreement",
    "pairwise_cohen_kappa",
    "pairwise_jaccard",
    "rbo_against_k",
]
