"""answers-csv and answers-jsonl: every submission of every scheme as it was submitted, one row per
annotator and item, workers pseudonymised unless asked, whether each assignment counts, CSV cells
safe for spreadsheets and JSONL exact; offered on the exports page, the API and the command; and
streamed in bounded memory."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from analysis import services
from analysis.exports.answers import ANSWER_COLUMNS
from annotation.models import Benchmark, Worker, WorkerKind
from hits.models import Answer, Assignment, AssignmentStatus, HITItem
from tests.base import PASSWORD, Cast
from tests.hits.factories import make_batch, make_benchmark, make_hit, make_target
from tests.hits.submitted_work import (
    PROLEX_ANSWERS,
    SWS_SENTENCE,
    Submitted,
    generation_work,
    prolex_work,
    swords_work,
    sws_work,
)

pytestmark = pytest.mark.django_db


def _jsonl(benchmark: Benchmark, **options: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format="answers-jsonl", out=out, **options)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _csv(benchmark: Benchmark, **options: Any) -> list[dict[str, str]]:
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format="answers-csv", out=out, **options)
    reader = csv.DictReader(io.StringIO(out.getvalue()))
    assert tuple(reader.fieldnames or ()) == ANSWER_COLUMNS
    return list(reader)


def _expected_items(submitted: list[Submitted]) -> list[tuple[str, int, int, str]]:
    """(raw worker, assignment, item, item text) of every posted answer, in the export's order."""
    rows = []
    for submission in sorted(submitted, key=lambda s: s.assignment.pk):
        items = HITItem.objects.filter(pk__in=submission.posted).order_by("position")
        rows += [(submission.worker, submission.assignment.pk, item.pk, item.text) for item in items]
    return rows


def _check_common(rows: list[dict[str, Any]], benchmark: Benchmark, submitted: list[Submitted]) -> None:
    """The rows are the posted answers, each once, with their batch, HIT, assignment and timing."""
    expected = _expected_items(submitted)
    assert [(row["assignment_id"], row["item_id"]) for row in rows] == [(a, i) for _, a, i, _ in expected]
    by_assignment = {s.assignment.pk: s for s in submitted}
    for row in rows:
        submission = by_assignment[row["assignment_id"]]
        assignment = submission.assignment
        assert row["benchmark"] == benchmark.name
        assert (row["batch_id"], row["hit_id"]) == (assignment.hit.batch_id, assignment.hit_id)
        assert row["step"] == assignment.hit.batch.step
        assert row["target_id"] == assignment.hit.target_id and row["target"] == assignment.hit.target.word
        assert row["context_id"] == assignment.hit.target.context_id
        assert row["worker_kind"] == "local"
        assert assignment.seconds_on_page is not None and row["seconds_on_page"] == assignment.seconds_on_page
        assert assignment.submitted_at is not None and row["submitted_at"].startswith(
            assignment.submitted_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
        )
        assert row["status"] == "submitted" and row["counts"] == "valid"


def test_swords_rows_are_every_judgment_as_submitted_controls_included(cast: Cast) -> None:
    benchmark, submitted = swords_work(cast)
    rows = _jsonl(benchmark, raw_workers=True)
    _check_common(rows, benchmark, submitted)
    posted = {(s.worker, item): value for s in submitted for item, value in s.posted.items()}
    assert [(row["worker"], row["value"]) for row in rows] == [
        (f"local:{worker}", posted[(worker, item)]) for worker, _, item, _ in _expected_items(submitted)
    ]
    assert {row["value"] for row in rows} == {"accept", "reject", "abstain"}
    candidates = [row for row in rows if row["candidate_id"] is not None]
    assert {row["candidate"] for row in candidates} == {"perched", "rested"}
    assert any(row["control"] for row in rows) and all(row["data"] is None for row in rows)
    assert all(row["step"] == 2 for row in rows)


def test_prolex_rows_keep_the_1_minus_1_and_0_each_expert_gave(cast: Cast) -> None:
    benchmark, submitted = prolex_work(cast)
    rows = _jsonl(benchmark, raw_workers=True)
    _check_common(rows, benchmark, submitted)
    assert sorted((row["worker"], row["candidate"], row["value"]) for row in rows) == sorted(
        (f"local:{worker}", text, value)
        for worker, answers in PROLEX_ANSWERS.items()
        for text, value in answers.items()
    )
    assert not any(row["control"] for row in rows)


def test_sws_rows_hold_each_annotators_spans_suggestions_and_types(cast: Cast, tmp_path: Path) -> None:
    benchmark, submitted = sws_work(cast, tmp_path)
    rows = _jsonl(benchmark, raw_workers=True)
    _check_common(rows, benchmark, submitted)
    assert [(row["worker"], row["value"], row["item_kind"], row["candidate"]) for row in rows] == [
        ("local:alice", "marked", "sentence", None),
        ("local:bob", "marked", "sentence", None),
        ("local:carol", "discarded", "sentence", None),
    ]
    alice, bob, carol = (row["data"] for row in rows)
    very_good = SWS_SENTENCE.index("very good")
    assert alice == {
        "targets": [
            {
                "start": very_good,
                "end": very_good + 9,
                "text": "very good",
                "suggestions": ["excellent", "great"],
                "type": "refine-usage",
            },
            {
                "start": SWS_SENTENCE.index("quick"),
                "end": SWS_SENTENCE.index("quick") + 5,
                "text": "quick",
                "suggestions": ["fast"],
                "type": "diversify-expression",
            },
        ],
        "discard": "",
    }
    assert bob["targets"][0]["suggestions"] == ["<b>outcomes</b>"]
    assert carol == {"targets": [], "discard": "It is <i>garbled</i>."}
    # The CSV holds the same structured answer as JSON text.
    table = _csv(benchmark, raw_workers=True)
    assert [json.loads(row["data"]) for row in table] == [alice, bob, carol]
    assert [row["context_external_id"] for row in table] == ["n-1"] * 3


def test_generation_rows_hold_each_annotators_proposals(cast: Cast) -> None:
    benchmark, submitted = generation_work(cast)
    rows = _jsonl(benchmark, raw_workers=True)
    _check_common(rows, benchmark, submitted)
    assert [(row["worker"], row["value"], row["step"]) for row in rows] == [
        ("local:alice", "proposed", 1),
        ("local:bob", "none", 1),
    ]
    assert rows[0]["data"]["substitutes"] == ["perched", "was seated"] and rows[0]["data"]["none"] is False
    assert rows[1]["data"]["substitutes"] == [] and rows[1]["data"]["none"] is True


def test_workers_are_pseudonymised_unless_asked_and_each_assignment_says_whether_it_counts(cast: Cast) -> None:
    benchmark, submitted = swords_work(cast)
    alice, bob = (s.assignment for s in submitted)
    Assignment.objects.filter(pk=bob.pk).update(filtered=True)
    rows = _csv(benchmark)
    workers = {row["assignment_id"]: row["worker"] for row in rows}
    assert set(workers) == {str(alice.pk), str(bob.pk)}
    assert not {"alice", "bob", "local:alice", "local:bob"} & set(workers.values())
    assert workers[str(alice.pk)] != workers[str(bob.pk)]
    # The same pseudonym as the labels export gives the same worker.
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format="labels-csv", out=out)
    assert workers[str(alice.pk)] in {row["worker"] for row in csv.DictReader(io.StringIO(out.getvalue()))}
    counts = {row["assignment_id"]: row["counts"] for row in rows}
    assert counts == {str(alice.pk): "valid", str(bob.pk): "filtered"}
    # Crowd work no sync confirmed, and rejected work, are exported and marked so.
    Assignment.objects.filter(pk=bob.pk).update(filtered=False, external_id="A-1", external_status="")
    Assignment.objects.filter(pk=alice.pk).update(status=AssignmentStatus.REJECTED)
    counts = {row["assignment_id"]: row["counts"] for row in _csv(benchmark)}
    assert counts == {str(alice.pk): "rejected", str(bob.pk): "unconfirmed"}


def test_work_not_submitted_is_not_exported(cast: Cast) -> None:
    benchmark = make_benchmark("unsubmitted")
    hit = make_hit(make_batch(benchmark), make_target(benchmark))
    now = timezone.now()
    for status in (AssignmentStatus.CLAIMED, AssignmentStatus.RETURNED, AssignmentStatus.EXPIRED):
        worker = Worker.objects.create(kind=WorkerKind.LOCAL, external_id=f"w-{status}")
        assignment = Assignment.objects.create(
            hit=hit, worker=worker, status=status, claimed_at=now, deadline=now + timedelta(minutes=5)
        )
        Answer.objects.create(assignment=assignment, item=hit.items.earliest("position"), value="accept")
    assert _jsonl(benchmark) == [] and _csv(benchmark) == []


def test_csv_cells_are_neutralised_for_spreadsheets_and_jsonl_is_exact(cast: Cast, tmp_path: Path) -> None:
    benchmark, _ = sws_work(cast, tmp_path)
    Answer.objects.filter(assignment__worker__external_id="carol").update(
        data={"targets": [], "discard": "=HYPERLINK(1)"}
    )
    [carol] = [row for row in _csv(benchmark, raw_workers=True) if row["worker"] == "local:carol"]
    assert json.loads(carol["data"])["discard"] == "=HYPERLINK(1)"  # JSON text starts with "{": safe as is
    Answer.objects.filter(assignment__worker__external_id="carol").update(value="=cmd")
    [carol] = [row for row in _csv(benchmark, raw_workers=True) if row["worker"] == "local:carol"]
    assert carol["value"] == "'=cmd"
    [exact] = [row for row in _jsonl(benchmark, raw_workers=True) if row["worker"] == "local:carol"]
    assert exact["value"] == "=cmd" and exact["data"]["discard"] == "=HYPERLINK(1)"


def test_the_formats_are_offered_on_the_page_the_api_and_the_command(cast: Cast, tmp_path: Path) -> None:
    benchmark, _ = sws_work(cast, tmp_path)
    client = Client()
    client.login(username="rita", password=PASSWORD)
    page = client.get(f"/benchmarks/{benchmark.name}/exports/").content.decode()
    assert 'value="answers-csv"' in page and 'value="answers-jsonl"' in page
    response = client.get(f"/benchmarks/{benchmark.name}/exports/answers-jsonl/download")
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()  # type: ignore[attr-defined]
    assert [json.loads(line)["value"] for line in lines] == ["marked", "marked", "discarded"]
    api = APIClient()
    api.force_authenticate(cast.researcher)
    streamed = api.get(f"/api/benchmarks/{benchmark.name}/export/answers-csv")
    assert streamed.status_code == 200 and streamed["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(streamed.streaming_content).decode())))  # type: ignore[attr-defined]
    assert [row["value"] for row in rows] == ["marked", "marked", "discarded"]
    streamed = api.get(f"/api/benchmarks/{benchmark.name}/export/answers-jsonl")
    assert streamed["Content-Type"].startswith("application/jsonl")
    path = tmp_path / "answers.csv"
    call_command(
        "export_benchmark", benchmark.name, "--format", "answers-csv", "--output", str(path), stderr=io.StringIO()
    )
    with path.open(newline="") as file:
        assert [row["value"] for row in csv.DictReader(file)] == ["marked", "marked", "discarded"]


def _peak_while_exporting(benchmark: Benchmark, path: Path) -> tuple[int, int]:
    tracemalloc.start()
    try:
        services.benchmark_export_to_path(benchmark=benchmark, format="answers-jsonl", path=path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, path.stat().st_size


def _answered(name: str, assignments: int) -> Benchmark:
    """A benchmark whose one HIT has ``assignments`` submitted assignments with structured answers."""
    benchmark = make_benchmark(name)
    hit = make_hit(make_batch(benchmark), make_target(benchmark))
    items = list(hit.items.all())
    now = timezone.now()
    workers = Worker.objects.bulk_create(
        [Worker(kind=WorkerKind.SIMULATED, external_id=f"{name}-{n}") for n in range(assignments)]
    )
    made = Assignment.objects.bulk_create(
        [
            Assignment(
                hit=hit,
                worker=worker,
                status=AssignmentStatus.SUBMITTED,
                claimed_at=now,
                deadline=now,
                submitted_at=now,
            )
            for worker in workers
        ]
    )
    Answer.objects.bulk_create(
        [
            Answer(assignment=assignment, item=item, value="accept", data={"note": "x" * 40, "n": assignment.pk})
            for assignment in made
            for item in items
        ]
    )
    return benchmark


def test_the_export_holds_a_chunk_of_rows_in_memory_never_the_file(tmp_path: Path) -> None:
    small, large = _answered("small", 400), _answered("large", 2000)
    small_peak, small_size = _peak_while_exporting(small, tmp_path / "small.jsonl")
    large_peak, large_size = _peak_while_exporting(large, tmp_path / "large.jsonl")
    assert large_size > 4.5 * small_size
    assert large_peak < 1.5 * small_peak, (small_peak, large_peak)
    assert large_peak < 0.6 * large_size, (large_peak, large_size)
