"""Filtered work measured against the benchmark: how often each filtered worker's labels match the
majority of the valid labels on the same candidates.

Spam filtering takes a worker's work out of the valid labels, so the leave-one-out agreement
(``agreement.leave_one_out_agreement``) never sees them: a plot of valid workers alone hides the
spammers it exists to show. Here their labels are compared with the valid labels' majority, which
they never were part of (so nothing is left out), on the same accept versus not-accept scale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from schemes.scores import ACCEPT

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["worker", "labels", "compared", "agreed", "agreement"]


def agreement_with_valid_majority(
    *, candidate: npt.ArrayLike, worker: npt.ArrayLike, value: npt.ArrayLike, valid_counts: npt.ArrayLike
) -> pd.DataFrame:
    """``candidate`` rows index ``valid_counts`` (n x 3 accept, reject, abstain valid labels).

    A label is compared when its candidate has valid labels with a unique majority (accept
    against not-accept). Returns one row per worker: worker, labels, compared, agreed, agreement
    (NaN when nothing could be compared).
    """
    import pandas as pd  # here, not at the top: every command would load it at start-up

    candidates = np.asarray(candidate, dtype=np.int64)
    workers = np.asarray(worker, dtype=np.int64)
    mine = np.where(np.asarray(value, dtype=np.int64) == ACCEPT, 0, 1)
    if candidates.size == 0:
        return pd.DataFrame(columns=COLUMNS)
    counts = np.asarray(valid_counts, dtype=np.int64)[candidates]
    accepts = counts[:, 0]
    others = counts[:, 1] + counts[:, 2]
    compared = accepts != others
    majority = np.where(accepts > others, 0, 1)
    # Sums per worker by bincount over the workers' ranks: no frame of a row per label.
    worker_ids, rank = np.unique(workers, return_inverse=True)
    rank = rank.ravel()
    result = pd.DataFrame(
        {
            "worker": worker_ids.astype(np.int64),
            "labels": np.bincount(rank, minlength=worker_ids.size).astype(np.int64),
            "compared": np.bincount(rank, weights=compared, minlength=worker_ids.size).astype(np.int64),
            "agreed": np.bincount(rank, weights=compared & (majority == mine), minlength=worker_ids.size).astype(
                np.int64
            ),
        }
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        result["agreement"] = np.where(result["compared"] > 0, result["agreed"] / result["compared"], np.nan)
    return result[COLUMNS]
