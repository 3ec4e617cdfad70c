"""Bot and language-model signals, without a database."""

import random

import pytest

from review.signals import (
    ABSTAIN_OVERUSE,
    DISAGREEMENT,
    FAST,
    IDENTICAL,
    STRAIGHT_LINE,
    RowAnswer,
    SignalSettings,
    SubmittedWork,
    worker_signals,
)

ITEMS_PER_HIT = 10


def hit_rows(
    hit: int, answers: list[str], *, controls: tuple[str, str] = ("accept", "reject")
) -> tuple[RowAnswer, ...]:
    rows = [RowAnswer(item_id=hit * 100 + i, candidate_id=hit * 100 + i, value=v) for i, v in enumerate(answers)]
    rows.append(RowAnswer(item_id=hit * 100 + 98, candidate_id=None, value=controls[0]))
    rows.append(RowAnswer(item_id=hit * 100 + 99, candidate_id=None, value=controls[1]))
    return tuple(rows)


class Crowd:
    """A crowd of honest workers answering from per-candidate acceptance rates, plus whoever a test adds."""

    def __init__(self, seed: int = 1, honest: int = 8, hits: int = 12, per_hit: int = 5) -> None:
        self.rng = random.Random(seed)
        self.truth = {
            (hit, i): self.rng.choice([0.02, 0.1, 0.3, 0.5, 0.7, 0.9]) for hit in range(hits) for i in range(10)
        }
        self.work: list[SubmittedWork] = []
        self.hits = hits
        self.next_id = 1
        self.honest = list(range(1, honest + 1))
        for hit in range(hits):
            for worker in self.rng.sample(self.honest, per_hit):
                self.add(worker, hit, [self.honest_answer(hit, i) for i in range(ITEMS_PER_HIT)])

    def honest_answer(self, hit: int, item: int) -> str:
        if self.rng.random() < 0.03:
            return "abstain"
        return "accept" if self.rng.random() < self.truth[(hit, item)] else "reject"

    def add(
        self,
        worker: int,
        hit: int,
        answers: list[str],
        *,
        seconds: float | None = None,
        controls: tuple[str, str] = ("accept", "reject"),
    ) -> None:
        self.work.append(
            SubmittedWork(
                assignment_id=self.next_id,
                worker_id=worker,
                hit_id=hit,
                seconds_on_page=seconds if seconds is not None else self.rng.uniform(60, 150),
                rows=hit_rows(hit, answers, controls=controls),
            )
        )
        self.next_id += 1

    def reasons(self, settings: SignalSettings | None = None) -> dict[int, list[str]]:
        signals = worker_signals(self.work, settings or SignalSettings())
        return {w: sorted(s.reason for s in ws.signals) for w, ws in signals.items() if ws.signals}


def test_an_honest_crowd_raises_no_signal() -> None:
    for seed in range(5):
        assert Crowd(seed=seed).reasons() == {}


def test_a_worker_who_answers_instantly_is_flagged_as_fast_with_the_assignments() -> None:
    crowd = Crowd()
    for hit in range(4):
        crowd.add(99, hit, [crowd.honest_answer(hit, i) for i in range(10)], seconds=2.0)
    signals = worker_signals(crowd.work, SignalSettings())[99]
    fast = next(s for s in signals.signals if s.reason == FAST)
    assert fast.evidence["median_seconds_per_row"] < fast.evidence["crowd_median_seconds_per_row"] / 4
    assert len(fast.evidence["fastest"]) == 4
    assert crowd.reasons().keys() == {99}


def test_a_worker_who_accepts_everything_is_straight_lining() -> None:
    crowd = Crowd()
    for hit in range(4):
        crowd.add(99, hit, ["accept"] * 10, controls=("accept", "accept"))
    assert STRAIGHT_LINE in crowd.reasons()[99]
    evidence = next(s for s in worker_signals(crowd.work, SignalSettings())[99].signals if s.reason == STRAIGHT_LINE)
    assert evidence.evidence["answers"] == {"accept": 4}


def test_a_worker_who_mostly_abstains_is_flagged() -> None:
    crowd = Crowd()
    for hit in range(4):
        crowd.add(99, hit, ["abstain"] * 8 + ["reject"] * 2)
    assert crowd.reasons() == {99: [ABSTAIN_OVERUSE]}


def test_two_workers_with_identical_answers_on_shared_hits_are_flagged_together() -> None:
    crowd = Crowd()
    for hit in range(5):
        answers = ["accept" if (hit + i) % 3 else "reject" for i in range(10)]
        crowd.add(98, hit, answers)
        crowd.add(99, hit, answers)
    reasons = crowd.reasons()
    assert IDENTICAL in reasons[98] and IDENTICAL in reasons[99]
    identical = next(s for s in worker_signals(crowd.work, SignalSettings())[98].signals if s.reason == IDENTICAL)
    assert identical.evidence["others"][0]["worker"] == 99
    assert identical.evidence["others"][0]["shared_hits"] == [0, 1, 2, 3, 4]


def test_identical_answers_on_items_everyone_agrees_on_are_not_suspicious() -> None:
    crowd = Crowd(hits=0)
    for hit in range(5):
        for worker in range(1, 9):
            crowd.add(worker, hit, ["reject"] * 10)
    # Everyone rejects everything: identical, but exactly what chance predicts. Only the straight-lining
    # of candidates would be suspicious, and controls break the line.
    assert crowd.reasons() == {}


def test_a_worker_who_contradicts_the_majority_is_flagged() -> None:
    crowd = Crowd(hits=12, per_hit=5)
    majority: dict[int, list[bool]] = {}
    for w in crowd.work:
        for row in w.rows:
            if row.candidate_id is not None:
                majority.setdefault(row.candidate_id, []).append(row.value == "accept")
    for hit in range(8):
        answers = []
        for i in range(10):
            votes = majority[hit * 100 + i]
            answers.append("reject" if sum(votes) * 2 > len(votes) else "accept")
        crowd.add(99, hit, answers)
    assert DISAGREEMENT in crowd.reasons()[99]


def test_settings_take_overrides_and_refuse_unknown_names() -> None:
    assert SignalSettings.with_overrides({"fast_factor": 5}).fast_factor == 5.0
    assert SignalSettings.with_overrides({"min_labels": 10.0}).min_labels == 10
    with pytest.raises(ValueError, match="unknown signal setting 'speed'"):
        SignalSettings.with_overrides({"speed": 1})
    with pytest.raises(ValueError, match="must be a number"):
        SignalSettings.with_overrides({"fast_factor": "fast"})
    with pytest.raises(ValueError, match="whole number"):
        SignalSettings.with_overrides({"min_labels": 2.5})
