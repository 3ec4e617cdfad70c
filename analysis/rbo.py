"""Rank-biased overlap, extrapolated (Webber, Moffat and Zobel 2010, eq. 32).

Written here rather than taken from the ``rbo`` package: that package pins numpy < 2 and one of
its entry points is wrong for lists of different lengths (docs/design.md §15).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt


def rbo_ext(first: Sequence[Hashable], second: Sequence[Hashable], p: float = 0.9) -> float:
    """Extrapolated RBO of two rankings without ties (each item at most once in a list).

    With s and l the lengths of the shorter and longer list and X_d the overlap of their
    prefixes of depth d (for d > s, the whole shorter list against L[:d]):

        RBO_ext = (1-p)/p * (sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d)
                  + ((X_l - X_s)/l + X_s/s) p^l

    Two identical lists score 1, two disjoint lists 0. Two empty lists score 1.
    """
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    if len(set(first)) != len(first) or len(set(second)) != len(second):
        raise ValueError("a ranking lists each item at most once")
    short, long = (first, second) if len(first) <= len(second) else (second, first)
    n_short, n_long = len(short), len(long)
    if n_long == 0:
        return 1.0
    if n_short == 0:
        return 0.0
    seen_short: set[Hashable] = set()
    seen_long: set[Hashable] = set()
    overlap = 0
    overlaps = np.zeros(n_long + 1, dtype=np.float64)  # overlaps[d] = X_d
    for depth in range(1, n_long + 1):
        item_long = long[depth - 1]
        if depth <= n_short:
            item_short = short[depth - 1]
            if item_short == item_long:
                overlap += 1
            else:
                overlap += (item_short in seen_long) + (item_long in seen_short)
            seen_short.add(item_short)
        else:
            overlap += item_long in seen_short
        seen_long.add(item_long)
        overlaps[depth] = overlap
    depths = np.arange(1, n_long + 1, dtype=np.float64)
    weights = p**depths
    x_s, x_l = overlaps[n_short], overlaps[n_long]
    total = float(np.sum(overlaps[1:] / depths * weights))
    tail_depths = depths[n_short:]
    total += float(np.sum(x_s * (tail_depths - n_short) / (n_short * tail_depths) * weights[n_short:]))
    return (1 - p) / p * total + ((x_l - x_s) / n_long + x_s / n_short) * p**n_long


def rbo_ext_same_items(
    group: npt.ArrayLike, rank_first: npt.ArrayLike, rank_second: npt.ArrayLike, p: float = 0.9
) -> npt.NDArray[np.float64]:
    """Extrapolated RBO per group, for many pairs of rankings of the same items at once.

    One row per item: ``group`` is its 0-based group (e.g. the target), ``rank_first`` and
    ``rank_second`` its 0-based position in the two rankings of that group. Both lists of a
    group hold the same items, so an item is in both prefixes of depth d exactly when its
    larger rank is below d, and X_d is a cumulative count. Returns one value per group (NaN
    for a group without items).
    """
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    groups = np.asarray(group, dtype=np.int64)
    later = np.maximum(np.asarray(rank_first, dtype=np.int64), np.asarray(rank_second, dtype=np.int64))
    if groups.size == 0:
        return np.zeros(0, dtype=np.float64)
    n_groups = int(groups.max()) + 1
    sizes = np.bincount(groups, minlength=n_groups)
    depth = int(sizes.max())
    if later.size and later.max() >= depth:
        raise ValueError("a rank is beyond the size of its group")
    overlaps = np.bincount(groups * depth + later, minlength=n_groups * depth).reshape(n_groups, depth).cumsum(axis=1)
    depths = np.arange(1, depth + 1, dtype=np.float64)
    weights = p**depths
    inside = depths[None, :] <= sizes[:, None]
    body = ((overlaps / depths) * weights * inside).sum(axis=1)
    result = np.full(n_groups, np.nan)
    present = sizes > 0
    n = sizes[present]
    # Lists of the same items overlap fully at their end: X_n / n = 1.
    result[present] = (1 - p) / p * body[present] + p ** n.astype(np.float64)
    return result
