"""Signals that a worker is a bot or pastes answers from a language model, as pure functions.

Controls catch random clicking (review.spam); these catch work that passes the controls but
does not look like a person reading: implausibly fast pages, the same answer on every row,
abstaining far more than the crowd, answer vectors identical to another worker's beyond what
chance allows, and low agreement with the leave-one-out majority. Each signal comes with its
evidence so a researcher can judge it; none of them filters work by itself.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, NamedTuple

from hits.telemetry import Telemetry

ACCEPT = "accept"
ABSTAIN = "abstain"
VALUES = ("accept", "reject", "abstain")

# The reasons, as stored in analysis.models.FlagReason.
FAST = "fast"
STRAIGHT_LINE = "straight_line"
ABSTAIN_OVERUSE = "abstain"
IDENTICAL = "identical"
DISAGREEMENT = "disagreement"
# From the page's telemetry (review.interaction, docs/quality.md).
PASTED = "pasted"
AWAY = "away"
NO_INPUT = "no_input"
UNIFORM_TIMING = "uniform_timing"
INTERACTION_REASONS = (PASTED, AWAY, NO_INPUT, UNIFORM_TIMING)
SIGNAL_REASONS = (FAST, STRAIGHT_LINE, ABSTAIN_OVERUSE, IDENTICAL, DISAGREEMENT, *INTERACTION_REASONS)

_EXAMPLES = 10


@dataclass(frozen=True)
class SignalSettings:
    """Thresholds of the bot signals. A benchmark may override any of them (review.models.ReviewSettings)."""

    # No signal is judged on fewer submitted assignments than this.
    min_assignments: int = 3
    # Fast: the worker's median seconds per row is below the crowd's median divided by this.
    fast_factor: float = 4.0
    # Straight-lining: at least this share of the worker's assignments have one answer on every row.
    straight_line_share: float = 0.9
    # Abstain overuse: the worker's abstain share is above both this floor and abstain_factor times the crowd's.
    abstain_min_share: float = 0.3
    abstain_factor: float = 3.0
    # Labels a worker needs before abstain overuse and majority agreement are judged.
    min_labels: int = 30
    # Identical vectors: identical answers on every one of at least this many shared HITs...
    identical_min_shared_hits: int = 3
    # ...whose chance, given how the rest of the crowd agrees on those items, is below this.
    identical_max_chance: float = 1e-6
    # Agreement with the leave-one-out majority below this share is flagged.
    min_majority_agreement: float = 0.4
    # The telemetry signals (review.interaction) judge a worker on at least this many assignments with telemetry.
    interaction_min_assignments: int = 3
    # ...and only when at least this many of them show the signal: one pasted answer or one break proves nothing.
    interaction_min_marked: int = 2
    # Pasted: an assignment whose text fields took a paste of at least pasted_min_chars characters, or hold at
    # least burst_min_chars characters typed with fewer keys than burst_max_key_ratio per character (a burst)...
    pasted_min_chars: int = 4
    burst_min_chars: int = 12
    burst_max_key_ratio: float = 0.25
    # ...flags a worker when at least this share of their assignments with text fields is pasted.
    pasted_share: float = 0.3
    # Away: an assignment whose page was hidden at least this long before its last answer...
    away_min_seconds: float = 30.0
    # ...flags a worker when at least this share of their assignments is away.
    away_share: float = 0.3
    # No input: an answered assignment without a single trusted pointer, touch or key event, at this share.
    no_input_share: float = 0.5
    # Uniform timing: an assignment of at least uniform_min_items rows whose times between rows (the first
    # left out: it includes reading) vary less than uniform_max_cv (standard deviation / mean)...
    uniform_min_items: int = 6
    uniform_max_cv: float = 0.12
    # ...flags a worker when at least this share of such assignments is uniform.
    uniform_share: float = 0.5

    @classmethod
    def with_overrides(cls, overrides: Mapping[str, Any] | None) -> SignalSettings:
        """Defaults updated from a mapping; unknown names and values of the wrong type raise ValueError."""
        if not overrides:
            return cls()
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for name, raw in overrides.items():
            if name not in fields:
                raise ValueError(f"unknown signal setting {name!r}; known: {', '.join(sorted(fields))}")
            default = getattr(cls, name)
            if isinstance(raw, bool) or not isinstance(raw, int | float):
                raise ValueError(f"signal setting {name!r} must be a number, not {raw!r}")
            if isinstance(default, int) and not isinstance(default, bool):
                if raw != int(raw):
                    raise ValueError(f"signal setting {name!r} must be a whole number, not {raw!r}")
                raw = int(raw)
            else:
                raw = float(raw)
            if raw < 0:
                raise ValueError(f"signal setting {name!r} cannot be negative")
            values[name] = raw
        return dataclasses.replace(cls(), **values)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# Each signal setting as the settings page shows it: (label, one line on what it does, unit).
SIGNAL_WORDING: dict[str, tuple[str, str, str]] = {
    "min_assignments": (
        "Least assignments to judge",
        "no signal is judged on a worker with fewer submitted assignments",
        "assignments",
    ),
    "fast_factor": (
        "Too fast: times faster than the crowd",
        "flag a worker whose median time per row is below the crowd's median divided by this",
        "times",
    ),
    "straight_line_share": (
        "Same answer on every row: share",
        "flag a worker when at least this share of their assignments give one answer to every row",
        "share, 0 to 1",
    ),
    "abstain_min_share": (
        "Abstains: least share",
        "flag abstain overuse only above this share of a worker's labels",
        "share, 0 to 1",
    ),
    "abstain_factor": (
        "Abstains: times the crowd's share",
        "flag abstain overuse only above this multiple of the crowd's abstain share",
        "times",
    ),
    "min_labels": (
        "Least labels to judge",
        "labels a worker needs before abstain overuse and agreement with the majority are judged",
        "labels",
    ),
    "identical_min_shared_hits": (
        "Identical answers: least shared HITs",
        "two workers are compared only on at least this many HITs both answered",
        "HITs",
    ),
    "identical_max_chance": (
        "Identical answers: highest chance",
        "flag identical answers whose chance, given how the crowd agrees on those items, is below this",
        "probability, 0 to 1",
    ),
    "min_majority_agreement": (
        "Least agreement with the majority",
        "flag a worker whose labels agree with the majority of the others less often than this",
        "share, 0 to 1",
    ),
    "interaction_min_assignments": (
        "Page signals: least assignments",
        "the page signals (pasted, away, no input, uniform timing) judge a worker on at least this many "
        "assignments with page measurements",
        "assignments",
    ),
    "interaction_min_marked": (
        "Page signals: least marked assignments",
        "a page signal flags a worker only when at least this many assignments show it",
        "assignments",
    ),
    "pasted_min_chars": (
        "Pasted: least characters pasted",
        "a paste of at least this many characters into an answer marks the assignment as pasted",
        "characters",
    ),
    "burst_min_chars": (
        "Pasted: least characters in a burst",
        "an answer of at least this many characters typed with few keys counts as a burst",
        "characters",
    ),
    "burst_max_key_ratio": (
        "Pasted: most keys per character in a burst",
        "an answer typed with fewer keys per character than this counts as a burst (pasted another way)",
        "keys per character",
    ),
    "pasted_share": (
        "Pasted: share of assignments",
        "flag a worker when at least this share of their assignments with text answers is pasted",
        "share, 0 to 1",
    ),
    "away_min_seconds": (
        "Away: least time hidden",
        "an assignment whose page was hidden at least this long before its last answer counts as away",
        "seconds",
    ),
    "away_share": (
        "Away: share of assignments",
        "flag a worker when at least this share of their assignments is away",
        "share, 0 to 1",
    ),
    "no_input_share": (
        "No input: share of assignments",
        "flag a worker when at least this share of answered assignments had no pointer, touch or key event",
        "share, 0 to 1",
    ),
    "uniform_min_items": (
        "Uniform timing: least rows",
        "only assignments with at least this many rows are checked for evenly spaced answers",
        "rows",
    ),
    "uniform_max_cv": (
        "Uniform timing: most variation",
        "times between answers that vary less than this (standard deviation over mean) look machine-made",
        "coefficient of variation",
    ),
    "uniform_share": (
        "Uniform timing: share of assignments",
        "flag a worker when at least this share of the checked assignments is uniform",
        "share, 0 to 1",
    ),
}


class RowAnswer(NamedTuple):
    """One row of a submitted HIT page: its item, the candidate it shows (None for a control), the answer.

    A named tuple, not a dataclass: a benchmark's signals read every answer, and a tuple is built
    several times faster.
    """

    item_id: int
    candidate_id: int | None
    value: str


@dataclass(frozen=True)
class SubmittedWork:
    """One submitted assignment with every row's answer. ``filtered`` work still shows behaviour."""

    assignment_id: int
    worker_id: int
    hit_id: int
    seconds_on_page: float | None
    rows: tuple[RowAnswer, ...]
    filtered: bool = False
    # What the page recorded (hits.telemetry); None when nothing was sent (API clients, no script).
    telemetry: Telemetry | None = None

    @property
    def seconds_per_row(self) -> float | None:
        if self.seconds_on_page is None or not self.rows:
            return None
        return self.seconds_on_page / len(self.rows)

    @property
    def straight_lined(self) -> bool:
        return len(self.rows) > 1 and len({row.value for row in self.rows}) == 1


@dataclass(frozen=True)
class Signal:
    reason: str
    evidence: dict[str, Any]


@dataclass
class WorkerSignals:
    """One worker's behaviour figures (shown for everyone) and the signals that crossed a threshold."""

    worker_id: int
    assignments: int = 0
    median_seconds_per_row: float | None = None
    straight_lined_share: float | None = None
    abstain_share: float | None = None
    majority_agreement: float | None = None
    majority_compared: int = 0
    signals: list[Signal] = field(default_factory=list)

    def metrics(self) -> dict[str, Any]:
        return {
            "assignments": self.assignments,
            "median_seconds_per_row": _round(self.median_seconds_per_row),
            "straight_lined_share": _round(self.straight_lined_share),
            "abstain_share": _round(self.abstain_share),
            "majority_agreement": _round(self.majority_agreement),
            "majority_compared": self.majority_compared,
        }


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


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
    # Imported here: review.interaction builds on this module's types.
    from review.interaction import interaction_signals

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
                        "median_seconds_per_row": _round(median),
                        "crowd_median_seconds_per_row": _round(crowd_median),
                        "factor": settings.fast_factor,
                        "timed_assignments": len(timed),
                        "fastest": [
                            {
                                "assignment": a.assignment_id,
                                "hit": a.hit_id,
                                "seconds": _round(a.seconds_on_page),
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
                        "share": _round(share),
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
                        "share": _round(share),
                        "crowd_share": _round(crowd_share),
                        "limit": _round(limit),
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
                        "agreement": _round(agreement),
                        "labels_compared": signals.majority_compared,
                        "crowd_median_agreement": _round(crowd_median),
                        "threshold": settings.min_majority_agreement,
                    },
                )
            )
