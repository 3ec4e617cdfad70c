"""What the page would record of each simulated worker (``hits.telemetry.Telemetry``), for the simulated
crowd (``review.simulation``).

People differ: some are fast and some slow, some work on a phone (touches, a notification now and
then that hides the page for a few seconds), some on a desktop with a mouse, some with the keyboard
alone, and anyone may take a break in the middle of a HIT. Workers who ask a language model either
copy the text to a chatbot in another tab and come back with its answers (the page is hidden for a
while before they answer), or let a browser agent answer (no input event a person's device makes, and
rows answered at an even pace). These are models for rehearsal, not measurements: real behaviour must
be checked on real crowds (docs/quality.md).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hits.telemetry import Telemetry

DESKTOP = "desktop"
PHONE = "phone"
KEYBOARD = "keyboard"
# How language-model users work.
CHATBOT_TAB = "chatbot-tab"
AGENT = "agent"


@dataclass(frozen=True)
class Habits:
    """One simulated worker's way of working: device, pace (1.0 = the crowd's typical pace)."""

    device: str
    pace: float
    llm: str = ""


def honest_habits(rng: random.Random) -> Habits:
    draw = rng.random()
    device = PHONE if draw < 0.3 else KEYBOARD if draw < 0.4 else DESKTOP
    # Some people are twice as fast as the typical worker, some twice as slow.
    return Habits(device=device, pace=rng.choice((0.5, 0.75, 1.0, 1.0, 1.5, 2.0)))


def llm_habits(rank: int, rng: random.Random) -> Habits:
    """Chatbot users and agents in turn, on a desktop or a phone, at a careful person's pace."""
    style = CHATBOT_TAB if rank % 2 == 1 else AGENT
    device = PHONE if style == CHATBOT_TAB and rng.random() < 0.3 else DESKTOP
    return Habits(device=device, pace=rng.choice((1.0, 1.5)), llm=style)


def _row_times(rng: random.Random, rows: int, seconds_per_row: float, spread: float) -> list[int]:
    return [max(150, round(1000 * seconds_per_row * rng.lognormvariate(0.0, spread))) for _ in range(rows)]


def _input(rng: random.Random, device: str, rows: int) -> tuple[int, int, int]:
    """(pointer, touch, key) events for answering ``rows`` rows on a device."""
    if device == PHONE:
        return 0, rows + rng.randint(2, 12), 0
    if device == KEYBOARD:
        return 0, 0, rows + rng.randint(1, 6)
    return rows + rng.randint(0, 6), 0, rng.randint(0, 3)


def human_telemetry(rng: random.Random, habits: Habits, rows: int, seconds_per_row: float) -> Telemetry:
    """A person answering ``rows`` rows themselves at ``seconds_per_row`` (times vary row to row)."""
    reading = 1000 * rng.uniform(3, 12) * habits.pace
    items = _row_times(rng, rows, seconds_per_row * habits.pace, 0.5)
    items[0] += round(reading)
    pointer, touch, key = _input(rng, habits.device, rows)
    hidden = away = 0
    # A notification on a phone, a glance at another tab: seconds; a real break: now and then.
    if rng.random() < (0.15 if habits.device == PHONE else 0.05):
        hidden, away = 1, round(1000 * rng.uniform(2, 15))
    if rng.random() < 0.02:
        hidden, away = hidden + 1, away + round(1000 * rng.uniform(30, 180))
    return Telemetry(
        ms_to_first_answer=items[0],
        item_ms=tuple(items),
        pointer=pointer,
        touch=touch,
        key=key,
        hidden=hidden,
        away_ms=away,
        away_answering_ms=away,
        copies=1 if rng.random() < 0.01 else 0,
    )


def llm_telemetry(rng: random.Random, habits: Habits, rows: int, seconds_per_row: float) -> Telemetry:
    """A worker whose answers come from a language model, the way ``habits.llm`` says."""
    if habits.llm == AGENT:
        # An agent clicks through the rows at its own even pace, with no event a person's device makes.
        pace = 1000 * seconds_per_row * habits.pace * rng.uniform(0.4, 0.8)
        items = [max(150, round(pace * rng.uniform(0.97, 1.03))) for _ in range(rows)]
        items[0] += round(1000 * rng.uniform(2, 5))
        return Telemetry(ms_to_first_answer=items[0], item_ms=tuple(items))
    # A chatbot in another tab: the text is copied out (or typed over on a phone), the page hidden while the
    # model answers and the answers are read off, then the rows are clicked quickly.
    items = _row_times(rng, rows, seconds_per_row * 0.4, 0.4)
    asked = rng.random() < 0.85
    away = round(1000 * rng.uniform(25, 90)) if asked else 0
    items[0] += round(1000 * rng.uniform(2, 6))
    pointer, touch, key = _input(rng, habits.device, rows)
    return Telemetry(
        ms_to_first_answer=items[0],
        item_ms=tuple(items),
        pointer=pointer,
        touch=touch,
        key=key + (2 if asked and habits.device == DESKTOP else 0),
        hidden=1 if asked else 0,
        away_ms=away,
        away_answering_ms=away,
        copies=1 if asked and habits.device == DESKTOP else 0,
    )


def script_telemetry(rng: random.Random, rows: int, seconds_per_row: float) -> Telemetry:
    """A bot driving the page with a script: no trusted input, rows at an even pace."""
    items = [max(50, round(1000 * seconds_per_row * rng.uniform(0.98, 1.02))) for _ in range(rows)]
    return Telemetry(ms_to_first_answer=items[0], item_ms=tuple(items))
