"""Signals from how the page was worked on (``hits.telemetry``), as pure functions: ``pasted``, ``away``,
``no_input`` and ``uniform_timing`` (docs/quality.md).

Each assignment with telemetry gets its marks (:func:`assignment_marks`); a worker is flagged for a mark
when a share of their assignments carries it (one pasted answer or one coffee break proves nothing,
a habit does). Like the other bot signals they flag for review and filter nothing by themselves.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hits.telemetry import Telemetry
from review.signal_types import (
    AWAY,
    NO_INPUT,
    PASTED,
    UNIFORM_TIMING,
    Signal,
    SignalSettings,
    SubmittedWork,
    WorkerSignals,
)

_EXAMPLES = 10


def timing_spread(telemetry: Telemetry) -> float | None:
    """Coefficient of variation (standard deviation / mean) of the times between rows, the first row left
    out (its time includes reading the text); None with fewer than two such times or a zero mean."""
    gaps = telemetry.item_ms[1:]
    if len(gaps) < 2:
        return None
    mean = statistics.fmean(gaps)
    if mean <= 0:
        return 0.0
    return statistics.pstdev(gaps) / mean


def has_text(telemetry: Telemetry) -> bool:
    """Whether the page had text typed or pasted into it (the generation task, suggestions)."""
    return telemetry.typed_chars > 0 or bool(telemetry.pastes)


def pasted(telemetry: Telemetry, settings: SignalSettings) -> bool:
    if telemetry.pasted_chars >= max(1, settings.pasted_min_chars):
        return True
    # Text that arrived with far fewer keys than characters came in bursts (pasted, or filled by a tool).
    # Phones' word suggestions insert whole words, so the limit leaves room for them.
    return (
        telemetry.typed_chars >= max(1, settings.burst_min_chars)
        and telemetry.typed_keys < settings.burst_max_key_ratio * telemetry.typed_chars
    )


def away(telemetry: Telemetry, settings: SignalSettings) -> bool:
    return telemetry.away_answering_ms >= settings.away_min_seconds * 1000


def no_input(telemetry: Telemetry) -> bool:
    return telemetry.ms_to_first_answer is not None and telemetry.input_events == 0


def uniform_eligible(telemetry: Telemetry, settings: SignalSettings) -> bool:
    return len(telemetry.item_ms) >= max(3, settings.uniform_min_items)


def uniform(telemetry: Telemetry, settings: SignalSettings) -> bool:
    spread = timing_spread(telemetry)
    return uniform_eligible(telemetry, settings) and spread is not None and spread < settings.uniform_max_cv


def assignment_marks(telemetry: Telemetry, settings: SignalSettings) -> frozenset[str]:
    """The signals one assignment's telemetry shows by itself."""
    marks = set()
    if pasted(telemetry, settings):
        marks.add(PASTED)
    if away(telemetry, settings):
        marks.add(AWAY)
    if no_input(telemetry):
        marks.add(NO_INPUT)
    if uniform(telemetry, settings):
        marks.add(UNIFORM_TIMING)
    return frozenset(marks)


@dataclass(frozen=True)
class _Rule:
    reason: str
    share: float
    # Which assignments the share is taken over.
    eligible: Any


def _rules(settings: SignalSettings) -> tuple[_Rule, ...]:
    return (
        _Rule(PASTED, settings.pasted_share, has_text),
        _Rule(AWAY, settings.away_share, lambda t: True),
        _Rule(NO_INPUT, settings.no_input_share, lambda t: t.ms_to_first_answer is not None),
        _Rule(UNIFORM_TIMING, settings.uniform_share, lambda t: uniform_eligible(t, settings)),
    )


def _figures(reason: str, work: SubmittedWork, telemetry: Telemetry) -> dict[str, Any]:
    """What a researcher needs to judge one example assignment of a signal."""
    example: dict[str, Any] = {"assignment": work.assignment_id, "hit": work.hit_id}
    if reason == PASTED:
        example.update(
            pastes=list(telemetry.pastes[:5]),
            typed_chars=telemetry.typed_chars,
            typed_keys=telemetry.typed_keys,
            largest_insert=telemetry.largest_insert,
        )
    elif reason == AWAY:
        example.update(
            away_seconds=round(telemetry.away_answering_ms / 1000, 1), hidden=telemetry.hidden, copies=telemetry.copies
        )
    elif reason == NO_INPUT:
        example.update(pointer=telemetry.pointer, touch=telemetry.touch, key=telemetry.key, rows=len(work.rows))
    else:
        spread = timing_spread(telemetry)
        example.update(
            spread=None if spread is None else round(spread, 3),
            item_seconds=[round(ms / 1000, 2) for ms in telemetry.item_ms[:12]],
        )
    return example


def interaction_signals(
    by_worker: Mapping[int, Sequence[SubmittedWork]], result: dict[int, WorkerSignals], settings: SignalSettings
) -> None:
    """Add the telemetry signals to each worker's figures, with their evidence."""
    for worker_id, work in by_worker.items():
        recorded = [(a, a.telemetry) for a in work if a.telemetry is not None]
        if len(recorded) < settings.interaction_min_assignments:
            continue
        copies = sum(t.copies for _, t in recorded)
        for rule in _rules(settings):
            eligible = [(a, t) for a, t in recorded if rule.eligible(t)]
            if len(eligible) < settings.interaction_min_assignments or rule.share <= 0:
                continue
            marked = [(a, t) for a, t in eligible if rule.reason in assignment_marks(t, settings)]
            share = len(marked) / len(eligible)
            if not marked or len(marked) < settings.interaction_min_marked or share < rule.share:
                continue
            result[worker_id].signals.append(
                Signal(
                    rule.reason,
                    {
                        "assignments": len(eligible),
                        "marked": len(marked),
                        "share": round(share, 3),
                        "threshold_share": rule.share,
                        "copies_of_text": copies,
                        "examples": [_figures(rule.reason, a, t) for a, t in marked[:_EXAMPLES]],
                    },
                )
            )
