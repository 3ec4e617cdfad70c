"""The simulated crowd finishes what the README asks of it: it waits for a claim a person left open,
takes an active qualification test, and leaves data that says it was simulated, with times in the past."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db.models import Max, Min
from django.utils import timezone

from analysis.exports.base import benchmark_worker_names
from analysis.services import benchmark_dataset_write
from analysis.services.exports import stats_document
from annotation.models import Label, Worker, WorkerKind
from annotation.selectors import benchmark_simulated
from hits.models import Assignment, AssignmentStatus
from hits.qualification import qualification_build
from hits.qualification.models import QualificationAttempt
from hits.services import assignment_claim_next
from review.simulation import crowd_simulate
from tests.hits.qualification_data import gold_items
from tests.review.builders import make_benchmark, step2_batch

pytestmark = pytest.mark.django_db


def _person(name: str) -> Worker:
    return Worker.objects.create(kind=WorkerKind.LOCAL, external_id=name)


def test_the_crowd_waits_for_a_claim_a_person_left_open() -> None:
    benchmark = make_benchmark(targets=1, candidates=8)
    step2_batch(benchmark)
    held = assignment_claim_next(worker=_person("left-open"), benchmark=benchmark)
    assert held is not None

    report = crowd_simulate(benchmark=benchmark, honest=12, spammers=0, seed=3)

    assert report.finished, report.stuck
    held.refresh_from_db()
    assert held.status == AssignmentStatus.EXPIRED


def test_simulated_workers_take_an_active_qualification_test_and_only_those_who_pass_work() -> None:
    benchmark = make_benchmark(targets=1, candidates=8)
    step2_batch(benchmark)
    test = qualification_build(benchmark=benchmark, items=gold_items(), length=8, pass_mark=0.8)

    report = crowd_simulate(benchmark=benchmark, honest=12, spammers=3, seed=3)

    assert report.finished, report.stuck
    attempts = QualificationAttempt.objects.filter(test=test)
    assert attempts.count() == 15
    assert attempts.filter(worker__external_id__contains=":honest-", passed=True).count() == 12
    failed = set(attempts.filter(passed=False).values_list("worker_id", flat=True))
    assert failed, "random answers passed all three spammers"
    assert not Assignment.objects.filter(worker_id__in=failed).exists()


def test_a_simulated_benchmark_says_so_and_its_times_are_in_the_past(tmp_path: Path) -> None:
    benchmark = make_benchmark(targets=2, candidates=8)
    step2_batch(benchmark)
    started = timezone.now()

    report = crowd_simulate(benchmark=benchmark, honest=12, spammers=2, seed=5)
    finished = timezone.now()

    assert report.finished, report.stuck
    benchmark.refresh_from_db()
    assert benchmark_simulated(benchmark)
    submitted = Assignment.objects.filter(hit__batch__benchmark=benchmark, submitted_at__isnull=False)
    times = submitted.aggregate(first=Min("claimed_at"), last=Max("submitted_at"))
    # The simulated clock ran hours ahead of the real one; the stored times end by now and start earlier.
    assert times["last"] <= finished
    assert times["first"] < started - timedelta(minutes=10)
    labels = Label.objects.filter(candidate__target__benchmark=benchmark, assignment__isnull=False)
    assert labels.exists()
    assert all(created == at for created, at in labels.values_list("created_at", "assignment__submitted_at"))
    assert all(a.submitted_at is not None and a.claimed_at <= a.submitted_at <= finished for a in submitted)

    assert stats_document(benchmark, benchmark_worker_names(benchmark=benchmark), None)["simulated"] is True
    card = (benchmark_dataset_write(benchmark=benchmark, directory=tmp_path / "d").path / "README.md").read_text()
    assert "Simulated data." in card
    assert "implied hourly pay" not in card and "no hourly pay is reported" in card


def test_a_collected_benchmark_reports_its_hourly_pay_and_is_not_called_simulated(tmp_path: Path) -> None:
    benchmark = make_benchmark(targets=1, candidates=8)
    step2_batch(benchmark)
    person = _person("person")
    assignment = assignment_claim_next(worker=person, benchmark=benchmark)
    assert assignment is not None
    from hits.models import HITItem
    from hits.services import assignment_submit

    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: "accept" for item in items}, seconds_on_page=60)

    assert not benchmark_simulated(benchmark)
    card = (benchmark_dataset_write(benchmark=benchmark, directory=tmp_path / "d").path / "README.md").read_text()
    assert "Simulated data." not in card and "implied hourly pay: $" in card


@pytest.mark.parametrize("on_request", [True, False])
def test_the_queue_expires_overdue_claims_when_asked_for_work_where_no_beat_runs(
    settings: Any, on_request: bool
) -> None:
    settings.EXPIRE_CLAIMS_ON_REQUEST = on_request
    benchmark = make_benchmark(targets=1, candidates=8)
    step2_batch(benchmark)
    long_ago = timezone.now() - timedelta(days=1)
    overdue = assignment_claim_next(worker=_person("gone"), benchmark=benchmark, now=long_ago)
    assert overdue is not None and overdue.deadline < timezone.now()

    assert assignment_claim_next(worker=_person("here"), benchmark=benchmark) is not None

    overdue.refresh_from_db()
    assert overdue.status == (AssignmentStatus.EXPIRED if on_request else AssignmentStatus.CLAIMED)
