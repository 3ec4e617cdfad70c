"""The telemetry signals (pasted, away, no_input, uniform_timing) as pure rules, without a database."""

import random
from collections.abc import Sequence

import pytest

from hits.telemetry import Telemetry
from review.interaction import assignment_marks, timing_spread
from review.signals import (
    AWAY,
    INTERACTION_REASONS,
    NO_INPUT,
    PASTED,
    UNIFORM_TIMING,
    RowAnswer,
    SignalSettings,
    SubmittedWork,
    WorkerSignals,
    worker_signals,
)
from review.simulation_telemetry import (
    AGENT,
    CHATBOT_TAB,
    DESKTOP,
    KEYBOARD,
    PHONE,
    Habits,
    human_telemetry,
    llm_telemetry,
)

SETTINGS = SignalSettings()
ROWS = tuple(RowAnswer(item_id=i, candidate_id=i, value="accept" if i % 3 else "reject") for i in range(12))


def person(**fields: object) -> Telemetry:
    base: dict[str, object] = {
        "ms_to_first_answer": 9000,
        "item_ms": (9000, 4100, 7300, 2900, 8800, 5200, 3900, 6100, 4700, 10100, 3300, 5600),
        "pointer": 14,
    }
    return Telemetry(**{**base, **fields})  # type: ignore[arg-type]


def work(worker: int, telemetry: Sequence[Telemetry | None]) -> list[SubmittedWork]:
    return [
        SubmittedWork(
            assignment_id=worker * 100 + n,
            worker_id=worker,
            hit_id=n,
            seconds_on_page=60.0,
            rows=ROWS,
            telemetry=recorded,
        )
        for n, recorded in enumerate(telemetry)
    ]


def reasons(found: dict[int, WorkerSignals], worker: int) -> set[str]:
    return {signal.reason for signal in found[worker].signals} & set(INTERACTION_REASONS)


def test_a_person_answering_at_their_own_pace_shows_no_signal() -> None:
    assert assignment_marks(person(), SETTINGS) == frozenset()
    assert timing_spread(person()) > 0.3  # type: ignore[operator]


def test_each_mark_needs_its_own_evidence() -> None:
    assert assignment_marks(person(pastes=(48,)), SETTINGS) == {PASTED}
    assert assignment_marks(person(pastes=(2,)), SETTINGS) == frozenset()  # a pasted "of" is not an answer
    # Forty characters arrived with three key presses: a burst.
    assert assignment_marks(person(typed_chars=40, typed_keys=3), SETTINGS) == {PASTED}
    # A phone's word suggestions insert words whole, but the word was begun by hand.
    assert assignment_marks(person(typed_chars=16, typed_keys=7), SETTINGS) == frozenset()
    assert assignment_marks(person(away_ms=90_000, away_answering_ms=45_000), SETTINGS) == {AWAY}
    # Leaving after the last answer (before pressing Submit) is no sign of anything.
    assert assignment_marks(person(away_ms=90_000, away_answering_ms=2_000), SETTINGS) == frozenset()
    assert assignment_marks(person(pointer=0), SETTINGS) == {NO_INPUT}
    # Nothing answered: nothing to judge.
    assert assignment_marks(person(pointer=0, ms_to_first_answer=None, item_ms=()), SETTINGS) == frozenset()
    even = person(item_ms=(9000, *(2000 + 10 * (i % 3) for i in range(11))))
    assert assignment_marks(even, SETTINGS) == {UNIFORM_TIMING}
    assert assignment_marks(person(item_ms=(9000, 2000, 2000, 2000)), SETTINGS) == frozenset()  # too few rows


def test_thresholds_come_from_the_settings() -> None:
    strict = SignalSettings.with_overrides({"away_min_seconds": 10, "pasted_min_chars": 2, "uniform_max_cv": 0.6})
    marks = assignment_marks(person(away_ms=15_000, away_answering_ms=15_000, pastes=(2,)), strict)
    assert marks == {AWAY, PASTED, UNIFORM_TIMING}
    with pytest.raises(ValueError, match="whole number"):
        SignalSettings.with_overrides({"pasted_min_chars": 2.5})


def test_a_worker_is_flagged_for_a_habit_with_the_examples_as_evidence() -> None:
    pasting = work(1, [person(pastes=(30,), typed_chars=30)] * 3 + [person(typed_chars=12, typed_keys=14)])
    found = worker_signals(pasting, SETTINGS)
    [signal] = [s for s in found[1].signals if s.reason == PASTED]
    assert signal.evidence["assignments"] == 4 and signal.evidence["marked"] == 3
    assert signal.evidence["share"] == 0.75 and signal.evidence["threshold_share"] == SETTINGS.pasted_share
    assert signal.evidence["examples"][0] == {
        "assignment": 100,
        "hit": 0,
        "pastes": [30],
        "typed_chars": 30,
        "typed_keys": 0,
        "largest_insert": 0,
    }


def test_one_break_or_one_paste_flags_nobody() -> None:
    once = work(1, [person(away_ms=60_000, away_answering_ms=60_000), person(), person()])
    assert reasons(worker_signals(once, SETTINGS), 1) == set()
    # Pasted is judged only over pages with text fields.
    pasted_once = work(2, [person(pastes=(20,), typed_chars=20), person(), person(), person()])
    assert reasons(worker_signals(pasted_once, SETTINGS), 2) == set()


def test_work_without_telemetry_is_not_judged_by_it() -> None:
    silent = work(1, [None] * 6 + [person(pointer=0)] * 2)
    assert reasons(worker_signals(silent, SETTINGS), 1) == set()
    agent = work(2, [person(pointer=0)] * 3)
    assert reasons(worker_signals(agent, SETTINGS), 2) == {NO_INPUT}


@pytest.mark.parametrize("device", [DESKTOP, PHONE, KEYBOARD])
@pytest.mark.parametrize("pace", [0.5, 1.0, 2.0])
def test_simulated_people_of_every_device_and_pace_are_not_flagged(device: str, pace: float) -> None:
    rng = random.Random(f"{device}{pace}")
    habits = Habits(device=device, pace=pace)
    crowd = [
        a for worker in range(1, 21) for a in work(worker, [human_telemetry(rng, habits, 12, 8.0) for _ in range(8)])
    ]
    found = worker_signals(crowd, SETTINGS)
    assert all(not reasons(found, worker) for worker in range(1, 21))


@pytest.mark.parametrize(("style", "expected"), [(CHATBOT_TAB, {AWAY}), (AGENT, {NO_INPUT, UNIFORM_TIMING})])
def test_simulated_language_model_users_are_flagged(style: str, expected: set[str]) -> None:
    rng = random.Random(style)
    habits = Habits(device=DESKTOP, pace=1.0, llm=style)
    found = worker_signals(work(1, [llm_telemetry(rng, habits, 12, 8.0) for _ in range(8)]), SETTINGS)
    assert reasons(found, 1) == expected
