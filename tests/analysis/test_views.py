import gzip
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from analysis.models import ExportJob
from annotation.models import Benchmark, Worker, WorkerKind
from hits.models import HIT, Assignment, AssignmentStatus, Batch
from tests.analysis.labelled import labelled_benchmark
from tests.base import Cast

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("x")</script>'


@pytest.fixture(autouse=True)
def media(settings: Settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path


@pytest.fixture
def benchmark() -> Benchmark:
    workers = [HOSTILE, *(f"w{i}" for i in range(9))]
    benchmark = labelled_benchmark(
        "crowd",
        [
            ("bright", "adj", [("clever", ["coinco", "roget"], "AAARARAARA"), ("shining", ["roget"], "RRRARRRRRR")]),
            ("run", "verb", [("sprint", ["roget"], "RRRAAARRRR"), ("dash", ["coinco"], "AARAAAAARA")]),
        ],
        workers=workers,
    )
    # Control answers of the hostile worker, so the scatter plot names them.
    batch = Batch.objects.create(benchmark=benchmark, step=2)
    hit = HIT.objects.create(batch=batch, target=benchmark.targets.get(word="bright"), part=0, assignments_required=3)
    now = timezone.now()
    Assignment.objects.create(
        hit=hit,
        worker=Worker.objects.get(kind=WorkerKind.IMPORTED, external_id=HOSTILE),
        status=AssignmentStatus.SUBMITTED,
        claimed_at=now,
        deadline=now + timedelta(minutes=30),
        controls_correct=7,
        controls_total=10,
    )
    return benchmark


@pytest.fixture
def researcher(cast: Cast) -> Client:
    client = Client()
    client.force_login(cast.researcher)
    return client


def test_the_statistics_page_shows_figures_plots_and_escapes_names(benchmark: Benchmark, researcher: Client) -> None:
    response = researcher.get("/benchmarks/crowd/statistics/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Per target (SWORDS Table 2)" in html
    assert html.count("<svg") == 2  # scores by source, workers (no re-annotation: no RBO plot)
    assert "Workers: control accuracy and agreement" in html
    assert HOSTILE not in html
    assert "&lt;script&gt;" in html
    assert "0.700" in html  # the hostile worker's control accuracy, flagged below the threshold


def test_the_statistics_page_reads_the_figures_key_once_a_request(benchmark: Benchmark, researcher: Client) -> None:
    for request in ("first, figures computed", "next, figures cached"):
        with CaptureQueriesContext(connection) as read:
            assert researcher.get("/benchmarks/crowd/statistics/").status_code == 200
        keys = [query for query in read.captured_queries if "SUM(touches), MAX(id)" in query["sql"]]
        assert len(keys) == 1, request


def test_pages_are_for_researchers_only(benchmark: Benchmark, cast: Cast) -> None:
    annotator = Client()
    annotator.force_login(cast.alice)
    for url in [
        "/benchmarks/crowd/statistics/",
        "/benchmarks/crowd/exports/",
        "/benchmarks/crowd/exports/stats/download",
        "/benchmarks/crowd/plots/scores.svg",
        "/benchmarks/crowd/plots/workers.png",
    ]:
        assert annotator.get(url).status_code == 403
        assert Client().get(url).status_code == 302  # to the login page


def test_the_benchmark_page_links_to_the_analysis(benchmark: Benchmark, researcher: Client) -> None:
    html = researcher.get("/benchmarks/crowd/").content.decode()
    assert "/benchmarks/crowd/statistics/" in html and "/benchmarks/crowd/exports/" in html


def test_marking_a_re_annotation_from_the_page(benchmark: Benchmark, researcher: Client) -> None:
    response = researcher.post("/benchmarks/crowd/statistics/reannotation", {"origin": "fixture"}, follow=True)
    assert b"Re-annotation: fixture." in response.content
    response = researcher.post("/benchmarks/crowd/statistics/reannotation", {"origin": "unknown"}, follow=True)
    assert b"were imported from" in response.content
    benchmark.refresh_from_db()
    assert benchmark.extra["analysis"]["reannotation_origin"] == "fixture"


def test_an_export_from_the_exports_page(
    benchmark: Benchmark, researcher: Client, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    assert b"Create export" in researcher.get("/benchmarks/crowd/exports/").content
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher.post(
            "/benchmarks/crowd/exports/", {"format": "labels-csv", "compress": "on"}, follow=True
        )
    job = ExportJob.objects.get()
    assert f"Export {job.pk} (labels-csv) queued.".encode() in response.content
    assert job.status == "done"
    download = researcher.get(f"/exports/{job.pk}/download")
    lines = gzip.decompress(b"".join(download.streaming_content)).decode().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 41
    assert researcher.post("/benchmarks/crowd/exports/", {"format": "xml"}, follow=True).status_code == 200
    assert ExportJob.objects.count() == 1


def test_a_direct_download_from_the_page(benchmark: Benchmark, researcher: Client) -> None:
    response = researcher.get("/benchmarks/crowd/exports/swords/download")
    assert response["Content-Disposition"] == 'attachment; filename="crowd-swords.json"'
    assert b'"substitute_labels"' in b"".join(response.streaming_content)  # type: ignore[attr-defined]
