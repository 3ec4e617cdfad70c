"""Signals that a worker is a bot or pastes answers from a language model, as pure functions.

Controls catch random clicking (review.spam); these catch work that passes the controls but
does not look like a person reading: implausibly fast pages, the same answer on every row,
abstaining far more than the crowd, answer vectors identical to another worker's beyond what
chance allows, and low agreement with the leave-one-out majority. Each signal comes with its
evidence so a researcher can judge it; none of them filters work by itself.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from itertools import combinations

from review.interaction import interaction_signals
from review.signal_types import (
    ABSTAIN,
    ABSTAIN_OVERUSE,
    ACCEPT,
    AWAY,
    DISAGREEMENT,
    FAST,
    IDENTICAL,
    INTERACTION_REASONS,
    NO_INPUT,
    PASTED,
    SIGNAL_REASONS,
    SIGNAL_WORDING,
    STRAIGHT_LINE,
    UNIFORM_TIMING,
    VALUES,
    RowAnswer,
    Signal,
    SignalSettings,
    SubmittedWork,
    WorkerSignals,
    rounded,
)

_EXAMPLES = 10


def worker_signals(work: Sequence[SubmittedWork], settings: SignalSettings) -> dict[int, WorkerSignals]:
    """Every worker's figures and signals over all the submitted work of one benchmark."""
    by_worker: dict[int, list[SubmittedWork]] = defaultdict(list)
    for assignment in work:
        by_worker[assignment.worker_id].append(assignment)
    result = {
        worker_id: WorkerSignals(worker_id=worker_id, assignments=len(rows)) for worker_id, rows in by_worker.items()
    }

    _fast(by_worker, result, settings)
    _straight_lining(by_worker, result, settings)
    _abstain(by_worker, result, settings)
    _identical(work, result, settings)
    _majority_agreement(work, result, settings)
    interaction_signals(by_worker, result, settings)
    return result


def _fast(
    by_worker: Mapping[int, list[SubmittedWork]], result: dict[int, WorkerSignals], settings: SignalSettings
) -> None:
    crowd = [spr for rows in by_worker.values() for a in rows if (spr := a.seconds_per_row) is not None]
    if not crowd:
        return
    crowd_median = statistics.median(crowd)
    for worker_id, rows in by_worker.items():
        timed = sorted((a for a in rows if a.seconds_per_row is not None), key=lambda a: a.seconds_per_row or 0.0)
        if not timed:
            continue
        median = statistics.median(a.seconds_per_row or 0.0 for a in timed)
        result[worker_id].median_seconds_per_row = median
        if len(timed) < settings.min_assignments or settings.fast_factor <= 0:
            continue
        if median < crowd_median / settings.fast_factor:
            result[worker_id].signals.append(
                Signal(
                    FAST,
                    {
                        "median_seconds_per_row": rounded(median),
                        "crowd_median_seconds_per_row": rounded(crowd_median),
                        "factor": settings.fast_factor,
                        "timed_assignments": len(timed),
                        "fastest": [
                            {
                                "assignment": a.assignment_id,
                                "hit": a.hit_id,
                                "seconds": rounded(a.seconds_on_page),
                                "rows": len(a.rows),
                            }
                            for a in timed[:_EXAMPLES]
                        ],
                    },
                )
            )


def _straight_lining(
    by_worker: Mapping[int, list[SubmittedWork]], result: dict[int, WorkerSignals], settings: SignalSettings
) -> None:
    for worker_id, rows in by_worker.items():
        straight = [a for a in rows if a.straight_lined]
        share = len(straight) / len(rows)
        result[worker_id].straight_lined_share = share
        if len(rows) >= settings.min_assignments and straight and share >= settings.straight_line_share:
            answers = Counter(a.rows[0].value for a in straight)
            result[worker_id].signals.append(
                Signal(
                    STRAIGHT_LINE,
                    {
                        "assignments": len(rows),
                        "straight_lined": len(straight),
                        "share": rounded(share),
                        "answers": dict(sorted(answers.items())),
                        "examples": [
                            {"assignment": a.assignment_id, "hit": a.hit_id, "answer": a.rows[0].value}
                            for a in straight[:_EXAMPLES]
                        ],
                    },
                )
            )


def _abstain(
    by_worker: Mapping[int, list[SubmittedWork]], result: dict[int, WorkerSignals], settings: SignalSettings
) -> None:
    counts: dict[int, tuple[int, int]] = {}
    for worker_id, rows in by_worker.items():
        values = [row.value for a in rows for row in a.rows if row.candidate_id is not None]
        abstains = values.count(ABSTAIN)
        counts[worker_id] = (abstains, len(values))
        if values:
            result[worker_id].abstain_share = abstains / len(values)
    all_abstains = sum(a for a, _ in counts.values())
    all_labels = sum(n for _, n in counts.values())
    if not all_labels:
        return
    crowd_share = all_abstains / all_labels
    limit = max(settings.abstain_min_share, settings.abstain_factor * crowd_share)
    for worker_id, (abstains, labels) in counts.items():
        if labels < settings.min_labels or len(by_worker[worker_id]) < settings.min_assignments:
            continue
        share = abstains / labels
        if share > limit:
            result[worker_id].signals.append(
                Signal(
                    ABSTAIN_OVERUSE,
                    {
                        "abstains": abstains,
                        "labels": labels,
                        "share": rounded(share),
                        "crowd_share": rounded(crowd_share),
                        "limit": rounded(limit),
                    },
                )
            )


def _pair_match_rate(counts: Mapping[str, int]) -> tuple[float, int]:
    """Share of ordered pairs of distinct answers that agree, and the number of such pairs."""
    total = sum(counts.values())
    pairs = total * (total - 1)
    if pairs <= 0:
        return 0.0, 0
    return sum(n * (n - 1) for n in counts.values()) / pairs, pairs


def _identical(work: Sequence[SubmittedWork], result: dict[int, WorkerSignals], settings: SignalSettings) -> None:
    """Pairs of workers whose candidate answers are identical on every shared HIT, against the odds.

    The odds of two independent people agreeing on an item are estimated from how the rest of
    the crowd agrees on that same item (pairwise match rate), shrunk towards the crowd-wide
    rate when few others answered; items everyone agrees on therefore count for almost nothing.
    """
    by_hit: dict[int, list[SubmittedWork]] = defaultdict(list)
    for assignment in work:
        by_hit[assignment.hit_id].append(assignment)

    # Plain dicts: one Counter per item made this the costliest step of all the signals.
    item_counts: dict[int, dict[str, int]] = {}
    for assignment in work:
        for item_id, candidate_id, value in assignment.rows:
            if candidate_id is not None:
                counts = item_counts.get(item_id)
                if counts is None:
                    item_counts[item_id] = {value: 1}
                else:
                    counts[value] = counts.get(value, 0) + 1
    rates = [_pair_match_rate(counts) for counts in item_counts.values()]
    matched = sum(rate * n for rate, n in rates)
    pairs = sum(n for _, n in rates)
    crowd_rate = matched / pairs if pairs else 1 / len(VALUES)
    prior_pairs = 2.0

    shared: dict[tuple[int, int], list[int]] = defaultdict(list)
    identical: dict[tuple[int, int], list[int]] = defaultdict(list)
    log10_chance: dict[tuple[int, int], float] = defaultdict(float)
    items: dict[tuple[int, int], int] = defaultdict(int)
    for hit_id, assignments in by_hit.items():
        vectors = {
            a.worker_id: tuple(sorted((row.item_id, row.value) for row in a.rows if row.candidate_id is not None))
            for a in assignments
        }
        for first, second in combinations(sorted(vectors), 2):
            pair = (first, second)
            shared[pair].append(hit_id)
            if not vectors[first] or vectors[first] != vectors[second]:
                continue
            identical[pair].append(hit_id)
            for item_id, value in vectors[first]:
                others = Counter(item_counts[item_id])
                others[value] -= 2
                rate, other_pairs = _pair_match_rate(+others)
                chance = (rate * other_pairs + crowd_rate * prior_pairs) / (other_pairs + prior_pairs)
                log10_chance[pair] += math.log10(max(chance, 1e-12))
                items[pair] += 1

    for pair, hits in shared.items():
        if len(hits) < settings.identical_min_shared_hits or len(identical[pair]) != len(hits):
            continue
        if log10_chance[pair] >= math.log10(max(settings.identical_max_chance, 1e-300)):
            continue
        for worker_id, other_id in (pair, pair[::-1]):
            existing = next((s for s in result[worker_id].signals if s.reason == IDENTICAL), None)
            entry = {
                "worker": other_id,
                "shared_hits": sorted(hits),
                "items": items[pair],
                "log10_chance": round(log10_chance[pair], 2),
            }
            if existing is None:
                result[worker_id].signals.append(Signal(IDENTICAL, {"others": [entry]}))
            else:
                existing.evidence["others"].append(entry)


def _majority_agreement(
    work: Sequence[SubmittedWork], result: dict[int, WorkerSignals], settings: SignalSettings
) -> None:
    """Share of a worker's labels that match the majority (accept vs not) of the other valid labels.

    Candidates with fewer than two other valid labels, or a tied majority, are skipped.
    """
    accepts: dict[int, int] = defaultdict(int)
    totals: dict[int, int] = defaultdict(int)
    own: dict[int, dict[int, tuple[bool, bool]]] = defaultdict(dict)  # worker -> candidate -> (accepted, counted)
    for assignment in work:
        counted = not assignment.filtered
        judged = own[assignment.worker_id]
        for _, candidate_id, value in assignment.rows:
            if candidate_id is None:
                continue
            accepted = value == ACCEPT
            judged[candidate_id] = (accepted, counted)
            if counted:
                accepts[candidate_id] += accepted
                totals[candidate_id] += 1

    shares: list[float] = []
    for worker_id, judged in own.items():
        agree = compared = 0
        for candidate_id, (accepted, counted) in judged.items():
            other_accepts = accepts[candidate_id] - (int(accepted) if counted else 0)
            other_total = totals[candidate_id] - (1 if counted else 0)
            if other_total < 2 or 2 * other_accepts == other_total:
                continue
            majority_accepts = 2 * other_accepts > other_total
            compared += 1
            agree += int(majority_accepts == accepted)
        result[worker_id].majority_compared = compared
        if compared:
            result[worker_id].majority_agreement = agree / compared
            shares.append(agree / compared)
    crowd_median = statistics.median(shares) if shares else None
    for signals in result.values():
        agreement = signals.majority_agreement
        if agreement is None or signals.majority_compared < settings.min_labels:
            continue
        if signals.assignments < settings.min_assignments:
            continue
        if agreement < settings.min_majority_agreement:
            signals.signals.append(
                Signal(
                    DISAGREEMENT,
                    {
                        "agreement": rounded(agreement),
                        "labels_compared": signals.majority_compared,
                        "crowd_median_agreement": rounded(crowd_median),
                        "threshold": settings.min_majority_agreement,
                    },
                )
            )


# The shared words and shapes (review.signal_types) are read from here too.
__all__ = [
    "ABSTAIN",
    "ABSTAIN_OVERUSE",
    "ACCEPT",
    "AWAY",
    "DISAGREEMENT",
    "FAST",
    "IDENTICAL",
    "INTERACTION_REASONS",
    "NO_INPUT",
    "PASTED",
    "SIGNAL_REASONS",
    "SIGNAL_WORDING",
    "STRAIGHT_LINE",
    "UNIFORM_TIMING",
    "VALUES",
    "RowAnswer",
    "Signal",
    "SignalSettings",
    "SubmittedWork",
    "WorkerSignals",
    "rounded",
    "worker_signals",
]
