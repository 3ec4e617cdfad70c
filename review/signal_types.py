"""The words and shapes the bot signals share (docs/quality.md): the reasons a signal gives, its
settings (``SignalSettings``, with their wording for people), the submitted work the signals read
and what they find of a worker. ``review.signals`` computes the signals of the answers and
``review.interaction`` those of the page's telemetry, both over these.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
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
            "median_seconds_per_row": rounded(self.median_seconds_per_row),
            "straight_lined_share": rounded(self.straight_lined_share),
            "abstain_share": rounded(self.abstain_share),
            "majority_agreement": rounded(self.majority_agreement),
            "majority_compared": self.majority_compared,
        }


def rounded(value: float | None, digits: int = 3) -> float | None:
    """A figure of a signal's evidence, rounded for people (None stays None)."""
    return None if value is None else round(value, digits)
