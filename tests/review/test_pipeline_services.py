"""Spam filtering with re-collection, worker review and advancement, through the real queue (docs/design.md §5, §6)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import Count, Q

from annotation.models import Benchmark, Candidate, CandidateStage, Label, Target, TargetStage
from annotation.selectors import valid_labels
from annotation.tallies import tallies_targets_recount
from crowds.services import assignment_reject
from hits.models import HIT, Assignment, Batch, BatchStatus, FilteredPolicy
from hits.services import BatchStateError, batch_close, batch_reopen
from review.models import FlagReason, ReviewSettings, WorkerFlag
from review.selectors import pipeline_progress
from review.services import (
    benchmark_refresh,
    review_settings_update,
    signals_gap,
    worker_block,
    worker_flag_clear,
    worker_unblock,
)
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db


def active_slots(hit: HIT) -> int:
    hit.refresh_from_db()
    return hit.assignments_active


def fill_step2(benchmark: Benchmark, verdicts: dict[str, str] | None = None, *, workers: int = 3) -> None:
    """Honest workers take every step-2 slot, then the pipeline refreshes."""
    crowd = [simulated(f"honest-{i}") for i in range(workers)]
    progress = True
    while progress:
        progress = False
        for worker in crowd:
            progress |= work_once(worker, benchmark, honest(verdicts)) is not None
    benchmark_refresh(benchmark=benchmark)


def test_a_spammers_assignment_is_filtered_and_its_slot_reopens_for_someone_else() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    [hit] = HIT.objects.filter(batch__benchmark=benchmark)
    sam = simulated("sam")
    assignment = work_once(sam, benchmark, spammer)
    assert assignment is not None and active_slots(hit) == 1

    result = benchmark_refresh(benchmark=benchmark)

    assignment.refresh_from_db()
    assert assignment.filtered and result.filtered == 1
    assert active_slots(hit) == 0
    assert not valid_labels().filter(assignment=assignment).exists()
    assert WorkerFlag.objects.get(worker=sam, reason=FlagReason.CONTROL_ACCURACY).active
    # The spammer may not retake it (one assignment per worker per HIT) but three others fill it.
    assert work_once(sam, benchmark, honest()) is None
    fill_step2(benchmark)
    assert active_slots(hit) == 3
    assert Assignment.objects.filter(hit=hit, filtered=False).count() == 3


def test_the_flag_names_the_failed_controls_and_hits() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    sam = simulated("sam")
    assignment = work_once(sam, benchmark, spammer)
    assert assignment is not None
    benchmark_refresh(benchmark=benchmark)

    evidence = WorkerFlag.objects.get(worker=sam).evidence
    assert evidence["accuracy"] == 0.0 and evidence["threshold"] == 0.9
    assert evidence["failed_hits"] == [assignment.hit_id]
    [failed] = evidence["failed_assignments"]
    assert failed["target"] == "sat" and failed["step"] == 2
    kinds = {control["kind"]: (control["answer"], control["correct"]) for control in failed["controls"]}
    assert kinds == {"control_target": ("reject", False), "control_distractor": ("accept", False)}


def test_a_target_advances_when_every_candidate_has_three_valid_labels() -> None:
    benchmark = make_benchmark(targets=1, candidates=12)
    step2_batch(benchmark)
    target = Target.objects.get(benchmark=benchmark)
    fill_step2(benchmark, {"perched": "accept", "rested": "accept"})

    target.refresh_from_db()
    assert target.stage == TargetStage.SCORE
    stages = dict(Candidate.objects.filter(target=target).values_list("text", "stage"))
    assert stages.pop("perched") == stages.pop("rested") == CandidateStage.SCORE
    assert set(stages.values()) == {CandidateStage.DROPPED}
    [step3] = Batch.objects.filter(benchmark=benchmark, step=3)
    assert step3.assignments_per_hit == 7
    [hit] = step3.hits.all()
    assert hit.assignments_required == 7
    assert set(hit.items.filter(candidate__isnull=False).values_list("text", flat=True)) == {"perched", "rested"}


def test_a_target_whose_candidates_all_fail_is_done_without_step3() -> None:
    benchmark = make_benchmark(targets=1, candidates=5)
    step2_batch(benchmark)
    fill_step2(benchmark)  # every candidate rejected by all three
    target = Target.objects.get(benchmark=benchmark)
    assert target.stage == TargetStage.DONE
    assert not Batch.objects.filter(benchmark=benchmark, step=3).exists()
    assert set(target.candidates.values_list("stage", flat=True)) == {CandidateStage.DROPPED}


def test_nothing_advances_while_a_filtered_label_leaves_a_hole() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    work_once(simulated("sam"), benchmark, spammer)
    for name in ("a", "b"):
        work_once(simulated(name), benchmark, honest())
    benchmark_refresh(benchmark=benchmark)
    assert Target.objects.get(benchmark=benchmark).stage == TargetStage.REDUCE
    work_once(simulated("c"), benchmark, honest())
    benchmark_refresh(benchmark=benchmark)
    assert Target.objects.get(benchmark=benchmark).stage == TargetStage.DONE


def test_refreshing_twice_changes_nothing_the_second_time() -> None:
    benchmark = make_benchmark(targets=2, candidates=6)
    step2_batch(benchmark)
    work_once(simulated("sam"), benchmark, spammer)
    fill_step2(benchmark, {"perched": "accept"})
    batches = Batch.objects.count()

    again = benchmark_refresh(benchmark=benchmark, full=True)

    assert not again.changed
    assert Batch.objects.count() == batches


def test_a_cleared_flag_lets_the_work_count_again_when_the_hit_has_room(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    hit = HIT.objects.get(batch__benchmark=benchmark)
    sam = simulated("sam")
    assignment = work_once(sam, benchmark, spammer)
    assert assignment is not None
    benchmark_refresh(benchmark=benchmark)
    flag = WorkerFlag.objects.get(worker=sam)

    worker_flag_clear(flag=flag, by=cast.researcher)
    benchmark_refresh(benchmark=benchmark)

    assignment.refresh_from_db()
    flag.refresh_from_db()
    assert not assignment.filtered and active_slots(hit) == 1
    assert not flag.active and flag.cleared_by == cast.researcher
    assert flag.evidence["cleared"]["by"] == "researcher"
    # The researcher's decision holds on later refreshes...
    benchmark_refresh(benchmark=benchmark, full=True)
    flag.refresh_from_db()
    assert not flag.active


def test_a_cleared_flag_comes_back_when_new_work_fails_again(cast: Cast) -> None:
    benchmark = make_benchmark(targets=2, candidates=4)
    step2_batch(benchmark)
    sam = simulated("sam")
    work_once(sam, benchmark, spammer)
    benchmark_refresh(benchmark=benchmark)
    worker_flag_clear(flag=WorkerFlag.objects.get(worker=sam), by=cast.researcher)
    benchmark_refresh(benchmark=benchmark)

    work_once(sam, benchmark, spammer)
    benchmark_refresh(benchmark=benchmark)

    flag = WorkerFlag.objects.get(worker=sam)
    assert flag.active and flag.evidence["failed_count"] == 2
    assert not Assignment.objects.filter(worker=sam, filtered=False).exists()


def test_unfiltering_never_overfills_a_hit(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    hit = HIT.objects.get(batch__benchmark=benchmark)
    sam = simulated("sam")
    spam = work_once(sam, benchmark, spammer)
    assert spam is not None
    benchmark_refresh(benchmark=benchmark)
    fill_step2(benchmark)  # three honest workers take every slot
    assert active_slots(hit) == 3

    worker_flag_clear(flag=WorkerFlag.objects.get(worker=sam), by=cast.researcher)
    benchmark_refresh(benchmark=benchmark)

    spam.refresh_from_db()
    assert spam.filtered, "no room: the spammer's work stays out as surplus"
    assert active_slots(hit) == 3
    assert valid_labels().filter(candidate__target__benchmark=benchmark).values("worker").distinct().count() == 3


def test_blocking_a_worker_filters_their_work_and_unblocking_restores_it(
    cast: Cast, django_capture_on_commit_callbacks: pytest.FixtureRequest
) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    hit = HIT.objects.get(batch__benchmark=benchmark)
    alice = simulated("alice")
    assignment = work_once(alice, benchmark, honest())
    assert assignment is not None

    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        worker_block(worker=alice, reason="copies answers", by=cast.researcher)
    alice.refresh_from_db()
    assignment.refresh_from_db()
    assert alice.blocked and alice.blocked_reason == "copies answers (rita)"
    assert assignment.filtered and active_slots(hit) == 0
    assert work_once(alice, benchmark, honest()) is None

    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        worker_unblock(worker=alice, by=cast.researcher)
    assignment.refresh_from_db()
    assert not assignment.filtered and active_slots(hit) == 1


def test_spammers_are_blocked_automatically_only_when_the_researcher_asks(cast: Cast) -> None:
    benchmark = make_benchmark(targets=2, candidates=4)
    step2_batch(benchmark)
    sam = simulated("sam")
    work_once(sam, benchmark, spammer)
    benchmark_refresh(benchmark=benchmark)
    sam.refresh_from_db()
    assert not sam.blocked

    review_settings_update(benchmark=benchmark, auto_block_spammers=True, by=cast.researcher)
    benchmark_refresh(benchmark=benchmark)

    sam.refresh_from_db()
    assert sam.blocked and sam.blocked_reason.startswith("automatic: control accuracy")
    assert work_once(sam, benchmark, spammer) is None
    # Clearing the flag that caused an automatic block lifts the block.
    worker_flag_clear(flag=WorkerFlag.objects.get(worker=sam), by=cast.researcher)
    sam.refresh_from_db()
    assert not sam.blocked


def test_review_settings_refuse_unknown_signal_thresholds() -> None:
    from django.core.exceptions import ValidationError

    benchmark = make_benchmark(targets=1, candidates=2)
    with pytest.raises(ValidationError, match="unknown signal setting 'speed'"):
        review_settings_update(benchmark=benchmark, signal_overrides={"speed": 3})
    assert not ReviewSettings.objects.filter(benchmark=benchmark).exists()


def test_the_signals_wait_nine_times_their_last_run_between_runs_within_bounds() -> None:
    assert signals_gap(last_seconds=0.01) == timedelta(seconds=2)
    assert signals_gap(last_seconds=1.0) == timedelta(seconds=9)
    assert signals_gap(last_seconds=30.0) == timedelta(seconds=270)
    assert signals_gap(last_seconds=3600.0) == timedelta(minutes=10)


def test_every_candidate_ends_with_three_or_ten_valid_labels_from_distinct_workers() -> None:
    from review.simulation import crowd_simulate

    benchmark = make_benchmark(targets=4, candidates=14)
    # The run is deterministic for a seed and the benchmark's content (see review.simulation).
    report = crowd_simulate(benchmark=benchmark, honest=18, spammers=3, bots=0, seed=5)

    assert report.finished, report.stuck
    assert report.spammers_caught == 3 and report.honest_flagged == 0
    assert report.followup_batches == 1
    assert report.filtered_assignments > 0 and report.recollected_hits > 0
    counts = (
        Candidate.objects.filter(target__benchmark=benchmark)
        .annotate(
            valid=Count("labels", filter=Q(labels__assignment__filtered=False)),
            workers=Count("labels__worker", filter=Q(labels__assignment__filtered=False), distinct=True),
        )
        .values_list("stage", "valid", "workers")
    )
    for stage, valid, workers in counts:
        assert (stage, valid) in {(CandidateStage.DROPPED, 3), (CandidateStage.FINAL, 10)}
        assert workers == valid
    spammers = [w for w in Assignment.objects.values_list("worker__external_id", flat=True) if "spammer" in w]
    assert spammers, "the spammers did work"
    assert not valid_labels().filter(worker__external_id__contains="spammer").exists()
    for hit in HIT.objects.filter(batch__benchmark=benchmark):
        assert hit.assignments_active == hit.assignments_required
        assert hit.assignments.filter(filtered=False).count() == hit.assignments_required
    assert set(Target.objects.filter(benchmark=benchmark).values_list("stage", flat=True)) == {TargetStage.DONE}


def test_a_done_target_reopens_when_late_filtering_takes_labels_away_and_closes_after_recollection(
    cast: Cast, django_capture_on_commit_callbacks: pytest.FixtureRequest
) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    fill_step2(benchmark)  # all rejected: dropped, and the target is done
    target = Target.objects.get(benchmark=benchmark)
    assert target.stage == TargetStage.DONE
    late = simulated("honest-0")

    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        worker_block(worker=late, reason="found copying", by=cast.researcher)

    target.refresh_from_db()
    assert target.stage == TargetStage.SCORE
    hit = HIT.objects.get(batch__benchmark=benchmark)
    assert active_slots(hit) == 2
    assert work_once(simulated("newcomer"), benchmark, honest()) is not None
    benchmark_refresh(benchmark=benchmark)
    target.refresh_from_db()
    assert target.stage == TargetStage.DONE
    assert set(target.candidates.values_list("stage", flat=True)) == {CandidateStage.DROPPED}


def import_labels(candidate: Candidate, values: list[str], *, first_position: int = 0) -> None:
    """Labels from an imported file, numbered as an import numbers them."""
    Label.objects.bulk_create(
        Label(candidate=candidate, value=value, step=2 if position < 3 else 3, origin="late.csv", position=position)
        for position, value in enumerate(values, start=first_position)
    )
    # Written through the ORM, not a service: the candidate's tally is counted again, as after an import.
    tallies_targets_recount(target_ids=[candidate.target_id])


def test_a_done_target_goes_back_at_the_same_refresh_when_work_is_rejected_between_refreshes() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    fill_step2(benchmark)  # all rejected: dropped, and the target is done
    target = Target.objects.get(benchmark=benchmark)
    assert target.stage == TargetStage.DONE
    # A rejection on the crowd filters the work itself, so the next refresh finds filtering unchanged.
    assignment_reject(assignment=Assignment.objects.filter(hit__target=target)[0], message="Not usable.")

    result = benchmark_refresh(benchmark=benchmark)

    target.refresh_from_db()
    assert (target.stage, result.reopened_targets, result.filtered) == (TargetStage.SCORE, [target.pk], 0)
    assert work_once(simulated("newcomer"), benchmark, honest()) is not None
    benchmark_refresh(benchmark=benchmark)
    target.refresh_from_db()
    assert target.stage == TargetStage.DONE


def test_a_closed_batch_holds_no_open_slots() -> None:
    benchmark = make_benchmark(targets=2, candidates=4)
    batch = step2_batch(benchmark)
    work_once(simulated("a"), benchmark, honest())
    assert pipeline_progress(benchmark=benchmark).steps[0].open_slots == 5

    batch_close(batch=batch)

    progress = pipeline_progress(benchmark=benchmark)
    assert progress.steps[0].open_slots == 0
    assert {target.open_slots for target in progress.targets} == {0}


def test_once_the_pipeline_is_finished_no_step3_hit_is_left_open() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    fill_step2(benchmark, {"perched": "accept"})
    [hit] = HIT.objects.filter(batch__step=3, batch__benchmark=benchmark)
    assert work_once(simulated("scorer"), benchmark, honest({"perched": "accept"})) is not None
    # The six labels still missing arrive from an import instead of the step-3 HIT.
    perched = Candidate.objects.get(target__benchmark=benchmark, text="perched")
    import_labels(perched, ["accept"] * 6, first_position=3)

    benchmark_refresh(benchmark=benchmark)

    progress = pipeline_progress(benchmark=benchmark)
    assert progress.finished
    assert active_slots(hit) == 1 < hit.assignments_required
    assert progress.steps[1].open_slots == 0
    assert work_once(simulated("latecomer"), benchmark, honest()) is None


def fill_first_hit(benchmark: Benchmark, verdicts: dict[str, str]) -> None:
    """Three workers in turn: the queue gives each the fullest HIT, so together they fill one target's HIT."""
    for name in ("w1", "w2", "w3"):
        assert work_once(simulated(name), benchmark, honest(verdicts)) is not None
    benchmark_refresh(benchmark=benchmark)


def test_targets_advancing_in_separate_rounds_share_one_step3_batch_made_with_its_parents_settings() -> None:
    benchmark = make_benchmark(targets=2, candidates=4)
    parent = step2_batch(benchmark)
    Batch.objects.filter(pk=parent.pk).update(
        reward=Decimal("0.25"),
        assignment_duration=timedelta(minutes=12),
        filtered_policy=FilteredPolicy.REJECT,
        qualifications={"locale": "GB"},
    )
    fill_first_hit(benchmark, {"perched": "accept"})
    [child] = Batch.objects.filter(benchmark=benchmark, step=3)
    assert child.parent == parent and child.hits.count() == 1
    assert (child.reward, child.assignment_duration, child.filtered_policy, child.qualifications) == (
        Decimal("0.25"),
        timedelta(minutes=12),
        FilteredPolicy.REJECT,
        {"locale": "GB"},
    )
    # Settings are inherited when the step-3 batch is made; later changes to the parent stay there.
    Batch.objects.filter(pk=parent.pk).update(reward=Decimal("0.50"))

    fill_first_hit(benchmark, {"rested": "accept"})

    [same] = Batch.objects.filter(benchmark=benchmark, step=3)
    assert same.pk == child.pk and same.reward == Decimal("0.25")
    assert set(same.hits.values_list("target_id", flat=True)) == set(
        Target.objects.filter(benchmark=benchmark).values_list("pk", flat=True)
    )


def test_a_closed_step3_batch_is_followed_by_a_new_one_and_cannot_reopen_beside_it() -> None:
    benchmark = make_benchmark(targets=2, candidates=4)
    parent = step2_batch(benchmark)
    fill_first_hit(benchmark, {"perched": "accept"})
    [first] = Batch.objects.filter(benchmark=benchmark, step=3)
    batch_close(batch=first)

    fill_first_hit(benchmark, {"rested": "accept"})

    second = Batch.objects.get(benchmark=benchmark, step=3, status=BatchStatus.OPEN)
    assert second.parent == parent and second.pk != first.pk
    with pytest.raises(BatchStateError, match=f"batch {second.pk} now collects step 3 of batch {parent.pk}"):
        batch_reopen(batch=first)
