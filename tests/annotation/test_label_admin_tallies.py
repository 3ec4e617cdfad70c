"""A label added, changed or deleted by hand in the admin moves what the platform keeps of its
benchmark as a submit's or an import's would (docs/design.md §7, "Tallies"): every tally of both
benchmarks equals a count from their labels afterwards, and the change key of each benchmark the label
left or joined moves, so no figure keeps the label it no longer has."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.changes import change_key
from annotation.models import Benchmark, Candidate, CandidateTally, Label, Worker, WorkerKind, WorkerTally
from annotation.tallies import tallies_benchmark_recount
from tests.annotation.test_moves import _change
from tests.base import Cast
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = pytest.mark.django_db


def _tallies(benchmark: Benchmark) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """The benchmark's candidate and worker tallies that count anything (a missing row counts nothing)."""
    candidates = set(
        CandidateTally.objects.filter(candidate__benchmark=benchmark).values_list(
            "candidate_id", "accepts", "rejects", "abstains", "labels", "step2_labels", "step2_accepts"
        )
    )
    workers = set(WorkerTally.objects.filter(benchmark=benchmark).values_list("worker_id", "labels"))
    return {row for row in candidates if any(row[1:])}, {row for row in workers if row[1]}


def _assert_counted(*benchmarks: Benchmark) -> None:
    """Each benchmark's tallies are what a count from its labels gives."""
    for benchmark in benchmarks:
        kept = _tallies(benchmark)
        tallies_benchmark_recount(benchmark_id=benchmark.pk)
        assert _tallies(benchmark) == kept, benchmark.name


def _keys(*benchmarks: Benchmark) -> list[str]:
    return [change_key(benchmark_id=benchmark.pk) for benchmark in benchmarks]


def _label(benchmark: Benchmark, worker: Worker) -> Label:
    """A label of ``worker`` on the benchmark's first candidate, its tallies counted as a submit's are."""
    candidate = Candidate.objects.filter(benchmark=benchmark).order_by("pk")[0]
    label = Label.objects.create(candidate=candidate, value="accept", origin="typed-in", worker=worker, step=2)
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    return label


@pytest.mark.parametrize("scheme", BENCHMARK_SCHEMES)
def test_a_label_changed_added_or_deleted_in_the_admin_is_counted_in_both_benchmarks(
    scheme: str, cast: Cast, root: Client
) -> None:
    first, _ = scheme_benchmark(scheme, cast)
    second, _ = scheme_benchmark(scheme, cast)
    if not Candidate.objects.filter(benchmark=second).exists():
        pytest.skip("the scheme's items have no candidates to label")
    worker = Worker.objects.create(kind=WorkerKind.IMPORTED, external_id=f"{scheme}-judge")
    label = _label(first, worker)
    _assert_counted(first, second)

    # Its value and its candidate changed, to one of the other benchmark: both are counted again.
    theirs = Candidate.objects.filter(benchmark=second).order_by("pk")[0]
    before = _keys(first, second)
    answer = _change(root, label, candidate=theirs.pk, value="reject")
    assert answer.status_code == 302, answer.content[:500]
    assert Label.objects.get(pk=label.pk).benchmark_id == second.pk
    assert WorkerTally.objects.get(benchmark=second, worker=worker).labels == 1
    assert WorkerTally.objects.get(benchmark=first, worker=worker).labels == 0
    assert CandidateTally.objects.get(candidate=theirs).rejects >= 1
    _assert_counted(first, second)
    assert all(old != new for old, new in zip(before, _keys(first, second), strict=True))

    # Added by hand.
    before = _keys(first)
    mine = Candidate.objects.filter(benchmark=first).order_by("pk")[0]
    added = root.post(
        reverse("admin:annotation_label_add"),
        {"candidate": mine.pk, "value": "accept", "step": 2, "origin": "typed-in", "position": 0, "worker": worker.pk},
    )
    assert added.status_code == 302, added.content[:500]
    assert WorkerTally.objects.get(benchmark=first, worker=worker).labels == 1
    _assert_counted(first, second)
    assert _keys(first) != before

    # Deleted one by one, then by the list's action.
    before = _keys(second)
    deleted = root.post(reverse("admin:annotation_label_delete", args=[label.pk]), {"post": "yes"})
    assert deleted.status_code == 302
    assert WorkerTally.objects.get(benchmark=second, worker=worker).labels == 0
    _assert_counted(first, second)
    assert _keys(second) != before
    before = _keys(first)
    chosen = list(Label.objects.filter(benchmark=first, worker=worker).values_list("pk", flat=True))
    action = root.post(
        reverse("admin:annotation_label_changelist"),
        {"action": "delete_selected", "_selected_action": chosen, "post": "yes"},
    )
    assert action.status_code == 302
    assert not Label.objects.filter(pk__in=chosen).exists()
    assert WorkerTally.objects.get(benchmark=first, worker=worker).labels == 0
    _assert_counted(first, second)
    assert _keys(first) != before


def test_rows_deleted_by_the_lists_action_move_the_key_of_each_of_their_benchmarks(root: Client, cast: Cast) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from hits.models import Assignment, HITFlag, HITFlagReason
    from hits.services.flags import hit_flag_set

    benchmarks = [scheme_benchmark(name, cast)[0] for name in BENCHMARK_SCHEMES[:2]]
    flags = [
        hit_flag_set(
            assignment=Assignment.objects.filter(hit__batch__benchmark=benchmark).get(), reason=HITFlagReason.BROKEN
        ).pk
        for benchmark in benchmarks
    ]
    before = _keys(*benchmarks)
    with CaptureQueriesContext(connection) as captured:
        action = root.post(
            reverse("admin:hits_hitflag_changelist"),
            {"action": "delete_selected", "_selected_action": flags, "post": "yes"},
        )
    assert action.status_code == 302
    assert not HITFlag.objects.filter(pk__in=flags).exists()
    after = _keys(*benchmarks)
    assert all(old != new for old, new in zip(before, after, strict=True))
    # The flags' benchmarks are read in one statement, not a walk of each flag's relations.
    reads = [query["sql"] for query in captured.captured_queries if "benchmark_id" in query["sql"]]
    assert sum(1 for sql in reads if "DISTINCT" in sql) == 1
