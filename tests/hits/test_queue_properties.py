"""Whatever annotators do, in any order, the slot counters stay exact (property test)."""

import contextlib
from datetime import timedelta

import pytest
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Label, Worker, WorkerKind
from hits.models import HIT, Assignment, AssignmentStatus
from hits.services import (
    SubmissionRefused,
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    assignments_expire_overdue,
)
from schemes.swords.items import ItemKind
from tests.hits.factories import honest_answers, make_benchmark, make_hits

pytestmark = pytest.mark.django_db

WORKERS = 4
operations = st.lists(
    st.tuples(
        st.sampled_from(["claim", "submit", "return", "expire", "late-submit"]),
        st.integers(min_value=0, max_value=WORKERS - 1),
        st.integers(min_value=0, max_value=45),  # minutes that pass before the operation
    ),
    max_size=25,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(steps=operations)
def test_counters_match_the_assignments_after_any_sequence_of_operations(
    db: None, steps: list[tuple[str, int, int]]
) -> None:
    with transaction.atomic():
        benchmark = make_benchmark()
        make_hits(benchmark, 3, assignments_per_hit=2)
        workers = [Worker.objects.create(kind=WorkerKind.SIMULATED, external_id=f"w{i}") for i in range(WORKERS)]
        now = timezone.now()
        for operation, index, minutes in steps:
            now += timedelta(minutes=minutes)
            worker = workers[index]
            latest = Assignment.objects.filter(worker=worker).order_by("-id").first()
            if operation == "claim":
                assignment_claim_next(worker=worker, benchmark=benchmark, now=now)
            elif operation == "expire":
                assignments_expire_overdue(now=now)
            elif latest is not None and operation == "return":
                with contextlib.suppress(SubmissionRefused):
                    assignment_return(assignment=latest)
            elif latest is not None:  # submit, possibly after the deadline
                with contextlib.suppress(SubmissionRefused):
                    assignment_submit(assignment=latest, answers=honest_answers(latest.hit), now=now)

        live = Q(assignments__status=AssignmentStatus.CLAIMED) | Q(
            assignments__status=AssignmentStatus.SUBMITTED, assignments__filtered=False
        )
        for hit in HIT.objects.filter(batch__benchmark=benchmark).annotate(counted=Count("assignments", filter=live)):
            assert hit.assignments_active == hit.counted <= hit.assignments_required
        submitted = Assignment.objects.filter(hit__batch__benchmark=benchmark, status=AssignmentStatus.SUBMITTED)
        for assignment in submitted:
            candidates = assignment.hit.items.filter(kind=ItemKind.CANDIDATE).count()
            assert Label.objects.filter(assignment=assignment).count() == candidates
        assert (
            not Label.objects.filter(assignment__hit__batch__benchmark=benchmark)
            .exclude(assignment__in=submitted)
            .exists()
        )
        transaction.set_rollback(True)
