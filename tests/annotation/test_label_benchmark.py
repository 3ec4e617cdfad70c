"""Each label names its candidate's benchmark (docs/design.md §7, "Labels by benchmark"): whichever path
wrote it (an import's new candidates, an import adding labels to candidates it finds, a submit, a
crowd's confirmed work), in an installation holding other benchmarks; the migration's fill names it
for labels written before; and the data browser's labels of one benchmark are that benchmark's alone."""

from __future__ import annotations

import importlib
import io
import json

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.urls import reverse

from annotation.importers import benchmark_import
from annotation.models import Benchmark, Candidate, Label
from annotation.selectors import labels_misplaced
from hits.models import Assignment, Batch
from hits.services import assignment_claim_next, assignment_confirm, assignment_submit
from tests.base import Cast
from tests.crowds.crowd_helpers import make_batch, mturk_worker, publish_locally, submitted_assignment
from tests.review.builders import simulated
from tests.scheme_benchmarks import scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db

SENTENCE = "The cat sat on the mat all afternoon."


def _import(benchmark: Benchmark, origin: str, words: dict[str, list[str]], sentence: str = SENTENCE) -> None:
    line = {
        "context": sentence,
        "target": "sat",
        "offset": sentence.index("sat"),
        "pos": "verb",
        "candidates": [{"text": word, "labels": labels} for word, labels in words.items()],
    }
    stream = io.BytesIO((json.dumps(line) + "\n").encode())
    benchmark_import(path_or_file=stream, benchmark_name=benchmark.name, fmt="jsonl", origin=origin, new_label_set=True)


def _own_labels(benchmark: Benchmark) -> set[int]:
    return set(Label.objects.filter(candidate__target__benchmark=benchmark).values_list("pk", flat=True))


def test_every_path_that_writes_labels_names_the_candidates_benchmark(cast: Cast) -> None:
    # Batches numbered apart from benchmarks, so a label naming its batch for its benchmark shows: 1,000
    # batches written and deleted (ids are never given twice, on either database).
    scratch = Benchmark.objects.create(name="numbered-apart")
    Batch.objects.bulk_create(Batch(benchmark=scratch, step=2) for _ in range(1000))
    scratch.delete()
    first, _ = scheme_benchmark("swords", cast)
    second, _ = scheme_benchmark("swords", cast)
    for benchmark in (first, second):
        # New candidates (their labels written as COPY lines), then labels added to candidates found.
        _import(benchmark, "release.jsonl", {"perched": ["accept", "reject"], "lounged": ["abstain"]})
        _import(benchmark, "second.jsonl", {"perched": ["accept"], "rested": ["reject", "accept"]})
    worker = simulated("judge")
    assignment = assignment_claim_next(worker=worker, benchmark=second)
    assert assignment is not None
    scheme = "swords"
    answers = {item.pk: scheme_answer(scheme, item) for item in assignment.hit.items.all()}
    assignment_submit(assignment=assignment, answers=answers)
    # A crowd's work becomes labels when it is confirmed.
    crowd = make_batch(name="crowd-labels")
    publish_locally(crowd)
    confirmed = submitted_assignment(crowd.hits.order_by("pk")[0], mturk_worker("W1"), external_id="A1")
    assert assignment_confirm(assignment=confirmed, external_status="Submitted")

    assert labels_misplaced() == 0
    for benchmark in (first, second, crowd.benchmark):
        own = _own_labels(benchmark)
        assert own, benchmark.name
        assert set(Label.objects.filter(benchmark=benchmark).values_list("pk", flat=True)) == own
    candidate_items = assignment.hit.items.filter(candidate__isnull=False, kind="candidate").count()
    assert Label.objects.filter(assignment=assignment, benchmark=second).count() == candidate_items > 0
    assert Label.objects.filter(assignment=confirmed).exists()
    assert Assignment.objects.get(pk=confirmed.pk).labels.filter(benchmark=crowd.benchmark).exists()


def test_the_migrations_fill_names_the_benchmark_of_labels_written_before(cast: Cast) -> None:
    first, _ = scheme_benchmark("swords", cast)
    second, _ = scheme_benchmark("swords", cast)
    for benchmark in (first, second):
        _import(benchmark, "release.jsonl", {"perched": ["accept", "reject"], "lounged": ["abstain"]})
    table = Label._meta.db_table
    with connection.cursor() as cursor:
        # Labels as a wrong writer would leave them: every one naming the first benchmark.
        cursor.execute(f"UPDATE {table} SET benchmark_id = %s", [first.pk])
    assert labels_misplaced() == len(_own_labels(second)) > 0
    fill = importlib.import_module("annotation.migrations.0031_label_benchmark").FILL
    with connection.cursor() as cursor:
        cursor.execute(fill)
    assert labels_misplaced() == 0
    assert set(Label.objects.filter(benchmark=second).values_list("pk", flat=True)) == _own_labels(second)


def test_the_data_browsers_labels_of_a_benchmark_are_its_own(cast: Cast, client) -> None:
    first, _ = scheme_benchmark("swords", cast)
    second, _ = scheme_benchmark("swords", cast)
    _import(first, "first.jsonl", {"perched": ["accept"] * 7})
    _import(second, "second.jsonl", {"lounged": ["reject", "abstain"]})
    client.force_login(cast.researcher)
    for benchmark in (first, second):
        page = client.get(f"/benchmarks/{benchmark.name}/data/labels.csv")
        assert page.status_code == 200
        rows = b"".join(page.streaming_content if page.streaming else [page.content]).decode().splitlines()[1:]
        assert {int(row.split(",")[0]) for row in rows} == _own_labels(benchmark)


def test_labels_written_through_the_orm_or_the_admin_name_their_candidates_benchmark(cast: Cast, client) -> None:
    first, _ = scheme_benchmark("swords", cast)
    second, _ = scheme_benchmark("swords", cast)
    mine = Candidate.objects.filter(target__benchmark=second).order_by("pk")[0]
    theirs = Candidate.objects.filter(target__benchmark=first).order_by("pk")[0]
    created = Label.objects.create(candidate=mine, value="accept", origin="typed-in")
    Label.objects.bulk_create([Label(candidate=mine, value="reject", origin="typed-in", position=1)])
    mine.labels.bulk_create([Label(candidate=mine, value="abstain", origin="typed-in", position=2)])
    assert labels_misplaced() == 0
    assert Label.objects.filter(origin="typed-in", benchmark=second).count() == 3

    client.force_login(User.objects.create_superuser("root", password="x"))
    form = client.get(reverse("admin:annotation_label_add")).context["adminform"].form
    assert "benchmark" not in form.fields
    response = client.post(
        reverse("admin:annotation_label_change", args=[created.pk]),
        {"candidate": theirs.pk, "value": "accept", "step": 2, "origin": "typed-in", "position": 0, "raw_value": ""},
    )
    assert response.status_code == 302, response.content[:500]
    assert Label.objects.get(pk=created.pk).benchmark_id == first.pk
    assert labels_misplaced() == 0
