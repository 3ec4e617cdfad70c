"""Statements the ORM builds once per process (``crowdlex.statements.shaped_rows``): the rows are the
ORM's own for any arguments (lists of any length, none, empty; numbers of a small column; moments;
booleans and None that change the statement), the statement is built once per shape, and a
statement whose text depends on an argument's value is refused rather than run with a stale text."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Worker, WorkerKind
from crowdlex import statements
from crowdlex.statements import Searched, shaped_objects, shaped_rows
from hits.models import HIT, Assignment, BatchStatus
from hits.services import assignment_claim_next, assignment_submit
from tests.base import Cast
from tests.hits.factories import honest_answers, make_batch, make_benchmark, make_hit, make_target

pytestmark = pytest.mark.django_db

BUILDS: list[tuple[Any, ...]] = []


def _hits(benchmark_id: int, step: int | None, target_ids: list[int] | None) -> QuerySet[HIT, tuple[Any, ...]]:
    BUILDS.append(("hits", benchmark_id, step, target_ids))
    hits = HIT.objects.filter(batch__benchmark_id=benchmark_id)
    if step is not None:
        hits = hits.filter(batch__step=step)
    if target_ids is not None:
        hits = hits.filter(target_id__in=target_ids)
    return hits.values_list("pk", "target_id", "batch__step").order_by("pk")


def _open_or_closed(benchmark_id: int, closed: bool) -> QuerySet[HIT, tuple[Any, ...]]:
    hits = HIT.objects.filter(batch__benchmark_id=benchmark_id)
    hits = hits.filter(batch__status=BatchStatus.CLOSED) if closed else hits.exclude(batch__status=BatchStatus.CLOSED)
    return hits.values_list("pk", flat=False).order_by("pk")


def _of_status(benchmark_id: int, status: str) -> QuerySet[HIT, tuple[Any, ...]]:
    return HIT.objects.filter(batch__benchmark_id=benchmark_id, batch__status=status).values_list("pk").order_by("pk")


def _submitted_since(benchmark_id: int, since: Any) -> QuerySet[Assignment, tuple[Any, ...]]:
    return (
        Assignment.objects.filter(hit__batch__benchmark_id=benchmark_id, submitted_at__gt=since)
        .values_list("pk", "submitted_at")
        .order_by("pk")
    )


def _hits_with_batches(benchmark_id: int, target_ids: list[int]) -> QuerySet[HIT]:
    return (
        HIT.objects.filter(batch__benchmark_id=benchmark_id, target_id__in=target_ids)
        .select_related("batch", "target")
        .annotate(works=Count("assignments"))
        .order_by("pk")
    )


def _first(benchmark_id: int, count: int) -> QuerySet[HIT, tuple[Any, ...]]:
    return HIT.objects.filter(batch__benchmark_id=benchmark_id).values_list("pk").order_by("pk")[:count]


@pytest.fixture
def hits(cast: Cast) -> tuple[int, list[int]]:
    benchmark = make_benchmark()
    targets = [make_target(benchmark) for _ in range(5)]
    step2 = make_batch(benchmark, step=2, assignments_per_hit=1)
    step3 = make_batch(benchmark, step=3, status=BatchStatus.CLOSED)
    for target in targets:
        make_hit(step2, target)
        make_hit(step3, target)
    worker = Worker.objects.get(user=cast.alice)
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None
    assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit))
    return benchmark.pk, [target.pk for target in targets]


def test_the_rows_are_the_orms_for_any_arguments(hits: tuple[int, list[int]]) -> None:
    benchmark_id, targets = hits
    for step in (None, 2, 3):
        for target_ids in (None, targets[:1], targets[1:3], targets[:3], targets[2:], targets, [], [10**9]):
            rows = shaped_rows(_hits, benchmark_id, step, target_ids)
            assert rows == list(_hits(benchmark_id, step, target_ids)), (step, target_ids)
    # Some rows were read: the comparisons above compared something.
    assert len(shaped_rows(_hits, benchmark_id, 3, targets[:3])) == 3
    assert shaped_rows(_hits, benchmark_id + 1, None, None) == []
    for closed in (False, True):
        assert shaped_rows(_open_or_closed, benchmark_id, closed) == list(_open_or_closed(benchmark_id, closed))
    assert shaped_rows(_open_or_closed, benchmark_id, True) != shaped_rows(_open_or_closed, benchmark_id, False)
    # A text is part of the shape: each its own statement.
    for status in (BatchStatus.CLOSED, BatchStatus.OPEN, "no such status"):
        assert shaped_rows(_of_status, benchmark_id, str(status)) == list(_of_status(benchmark_id, str(status)))
    assert shaped_rows(_of_status, benchmark_id, str(BatchStatus.CLOSED)) != []
    now = timezone.now()
    for since in (now - timedelta(hours=1), now + timedelta(hours=1)):
        assert shaped_rows(_submitted_since, benchmark_id, since) == list(_submitted_since(benchmark_id, since))
    assert len(shaped_rows(_submitted_since, benchmark_id, now - timedelta(hours=1))) == 1


def _works(hit: HIT) -> int:
    return int(getattr(hit, "works"))  # noqa: B009 (the annotation, which the model does not declare)


def test_instances_are_the_orms_with_their_related_objects_and_annotations(hits: tuple[int, list[int]]) -> None:
    benchmark_id, targets = hits
    for target_ids in (targets[:1], targets[1:4], targets):
        built = shaped_objects(_hits_with_batches, benchmark_id, target_ids)
        wanted = list(_hits_with_batches(benchmark_id, target_ids))
        assert [(hit.pk, hit.batch_id, _works(hit)) for hit in built] == [
            (hit.pk, hit.batch_id, _works(hit)) for hit in wanted
        ]
        with CaptureQueriesContext(connection) as read:
            related = [(hit.batch.status, hit.target.word, hit.batch.benchmark_id) for hit in built]
        assert related == [(hit.batch.status, hit.target.word, hit.batch.benchmark_id) for hit in wanted]
        assert not read.captured_queries, "the related objects come with the instances"
        assert all(not hit._state.adding for hit in built)
    assert sum(_works(hit) for hit in shaped_objects(_hits_with_batches, benchmark_id, targets)) == 1


def test_a_statement_is_built_once_per_shape(hits: tuple[int, list[int]]) -> None:
    benchmark_id, targets = hits
    statements._SHAPES.clear()
    BUILDS.clear()
    shaped_rows(_hits, benchmark_id, 2, targets[:3])
    built = len(BUILDS)
    assert built >= 1
    # Other values of the same shape (three ids, padded as four; two ids and four too): not built again.
    shaped_rows(_hits, benchmark_id, 3, targets[2:5])
    shaped_rows(_hits, benchmark_id + 1, 2, targets[:4])
    assert len(BUILDS) == built
    shaped_rows(_hits, benchmark_id, None, targets[:3])
    assert len(BUILDS) > built


def test_a_statement_whose_text_depends_on_a_value_is_refused(hits: tuple[int, list[int]]) -> None:
    benchmark_id, _ = hits
    with pytest.raises(ValueError, match="depends on its arguments"):
        shaped_rows(_first, benchmark_id, 2)


def _first_three(benchmark_id: int, target_ids: list[int]) -> QuerySet[HIT, tuple[Any, ...]]:
    return HIT.objects.filter(batch__benchmark_id=benchmark_id, target_id__in=target_ids).values_list("pk")[:3]


def _every(benchmark_id: int, target_ids: list[int]) -> QuerySet[HIT, tuple[Any, ...]]:
    return HIT.objects.filter(batch__benchmark_id=benchmark_id, target_id__in=target_ids).values_list("pk")


def test_a_shaped_statement_is_counted_as_the_orm_counts_it(hits: tuple[int, list[int]]) -> None:
    """``shaped_rows_counted``: the rows of the statement up to its slice's end, for any arguments, in
    one statement; none where the statement can select nothing."""
    benchmark_id, targets = hits
    counts = []
    for build in (_first_three, _every):
        for target_ids in (targets, targets[:1], targets[2:4], [10**9]):
            found = statements.shaped_rows_counted(build, benchmark_id, target_ids)
            assert found == build(benchmark_id, target_ids).count(), (build, target_ids)
            counts.append(found)
    assert counts == [3, 2, 3, 0, 10, 2, 4, 0]
    assert statements.shaped_rows_counted(_every, benchmark_id + 1, targets) == 0
    with CaptureQueriesContext(connection) as queries:
        assert statements.shaped_rows_counted(_every, benchmark_id, []) == 0
        assert statements.shaped_rows_counted(_every, benchmark_id, targets) == 10
    assert len(queries) == 1


SEARCHED_BUILDS: list[str] = []


def _workers_searched(contained: str, exact: str) -> QuerySet[Worker, tuple[Any, ...]]:
    SEARCHED_BUILDS.append(contained)
    found = Q(external_id__icontains=contained) | Q(external_id=exact)
    return Worker.objects.filter(found, kind=WorkerKind.IMPORTED).values_list("external_id").order_by("external_id")


def test_a_searched_text_is_a_parameter_compared_whole_or_contained_as_the_orm_compares_it() -> None:
    """A ``Searched`` text is a parameter of one statement, found whole (``=``) and inside the pattern
    of a search (``icontains``), its pattern characters (``%``, ``_``, a backslash) taken as they
    are, as the ORM takes them."""
    for name in ("a%b", "aXb", "a_b", "ayb", "a\\b", "A%Bc", "plain", "crowdlex_searched_0_1_"):
        Worker.objects.create(kind=WorkerKind.IMPORTED, external_id=name)
    SEARCHED_BUILDS.clear()
    texts = ("a%b", "a_b", "a\\b", "A%B", "%", "_", "\\", "x", "PLAIN", "plain", "searched_1")
    for contained in texts:
        for exact in ("plain", "aXb", "%"):
            shaped = shaped_rows(_workers_searched, Searched(contained), Searched(exact))
            assert shaped == list(_workers_searched(contained, exact)), (contained, exact)
    assert set(shaped_rows(_workers_searched, Searched("%"), Searched(""))) == {("a%b",), ("A%Bc",)}
    assert set(shaped_rows(_workers_searched, Searched("Y"), Searched("aXb"))) == {("aXb",), ("ayb",)}
    # Built once (its two builds with stand-ins), then run for every text: the other builds are the
    # ORM's own above, one a pair of texts.
    assert len(SEARCHED_BUILDS) == 2 + len(texts) * 3
    assert not set(SEARCHED_BUILDS[:2]) & set(texts)
