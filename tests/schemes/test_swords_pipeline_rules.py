"""The step-2 pass rule and target readiness, without a database (docs/design.md §6)."""

from hypothesis import given
from hypothesis import strategies as st

from schemes.swords.pipeline import (
    CandidateProgress,
    Step2Outcome,
    advance_target,
    candidate_passes,
    labels_required,
    step2_outcome,
    target_done,
    target_ready_to_advance,
)

values = st.sampled_from(["accept", "reject", "abstain"])


def test_one_accept_among_three_labels_is_enough_to_go_on() -> None:
    assert step2_outcome(["reject", "accept", "abstain"], step2_labels=3, pass_min_accepts=1) == Step2Outcome.PASS
    assert step2_outcome(["reject", "reject", "abstain"], step2_labels=3, pass_min_accepts=1) == Step2Outcome.DROP
    assert step2_outcome(["accept", "accept"], step2_labels=3, pass_min_accepts=1) == Step2Outcome.PENDING


@given(st.lists(values, max_size=12), st.integers(1, 6), st.integers(1, 6))
def test_the_pass_rule_counts_accepts_only_once_the_labels_are_in(
    labels: list[str], step2_labels: int, pass_min_accepts: int
) -> None:
    outcome = step2_outcome(labels, step2_labels=step2_labels, pass_min_accepts=pass_min_accepts)
    if len(labels) < step2_labels:
        assert outcome == Step2Outcome.PENDING
    elif labels.count("accept") >= pass_min_accepts:
        assert outcome == Step2Outcome.PASS
    else:
        assert outcome == Step2Outcome.DROP


@given(st.lists(values, min_size=3, max_size=12), values, st.integers(1, 4))
def test_an_extra_accept_never_drops_a_passing_candidate(labels: list[str], extra: str, minimum: int) -> None:
    before = step2_outcome(labels, step2_labels=3, pass_min_accepts=minimum)
    after = step2_outcome([*labels, "accept"], step2_labels=3, pass_min_accepts=minimum)
    if before == Step2Outcome.PASS:
        assert after == Step2Outcome.PASS
    assert candidate_passes(accepts=labels.count("accept"), pass_min_accepts=minimum) == (before == Step2Outcome.PASS)


@given(st.lists(st.integers(0, 5), max_size=20), st.integers(1, 5))
def test_a_target_advances_once_every_candidate_has_its_step2_labels(counts: list[int], needed: int) -> None:
    assert target_ready_to_advance(counts, step2_labels=needed) == all(c >= needed for c in counts)


def progress(pk: int, stage: str, step2: int, accepts: int, total: int) -> CandidateProgress:
    return CandidateProgress(candidate_id=pk, stage=stage, step2_valid=step2, step2_accepts=accepts, valid_total=total)


def test_advancing_splits_candidates_by_the_pass_rule() -> None:
    candidates = [progress(1, "reduce", 3, 0, 3), progress(2, "reduce", 3, 2, 3), progress(3, "reduce", 3, 1, 3)]
    advancement = advance_target(candidates, step2_labels=3, pass_min_accepts=1)
    assert advancement is not None
    assert advancement.passed == (2, 3)
    assert advancement.dropped == (1,)
    assert advance_target([*candidates, progress(4, "reduce", 2, 2, 2)], step2_labels=3, pass_min_accepts=1) is None


def test_a_target_is_done_when_dropped_candidates_have_three_and_survivors_ten_labels() -> None:
    assert labels_required("dropped", step2_labels=3, step3_labels=7) == 3
    assert labels_required("score", step2_labels=3, step3_labels=7) == 10
    done = [progress(1, "dropped", 3, 0, 3), progress(2, "score", 3, 1, 10)]
    assert target_done(done, step2_labels=3, step3_labels=7)
    assert not target_done([*done, progress(3, "score", 3, 1, 9)], step2_labels=3, step3_labels=7)
    assert not target_done([*done, progress(3, "reduce", 3, 1, 3)], step2_labels=3, step3_labels=7)
    # A spammer's filtered step-2 label leaves a hole even if step 3 over-delivered.
    assert not target_done([progress(1, "score", 2, 1, 10)], step2_labels=3, step3_labels=7)


def test_an_excluded_candidate_needs_no_labels_and_never_holds_its_target_back() -> None:
    assert labels_required("excluded", step2_labels=3, step3_labels=7) == 0
    done = [progress(1, "dropped", 3, 0, 3), progress(2, "score", 3, 1, 10)]
    assert target_done([*done, progress(3, "excluded", 0, 0, 0)], step2_labels=3, step3_labels=7)
    assert target_done([progress(3, "excluded", 1, 1, 1)], step2_labels=3, step3_labels=7)


@given(
    st.lists(st.tuples(st.sampled_from(["dropped", "score", "final"]), st.integers(0, 12)), max_size=10),
)
def test_done_means_every_candidate_has_what_its_stage_requires(rows: list[tuple[str, int]]) -> None:
    candidates = [progress(i, stage, min(total, 3), 1, total) for i, (stage, total) in enumerate(rows)]
    expected = all(total >= (3 if stage == "dropped" else 10) for stage, total in rows)
    assert target_done(candidates, step2_labels=3, step3_labels=7) == expected
