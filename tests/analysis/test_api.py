import gzip
import json
from pathlib import Path

import pytest
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings
from rest_framework.test import APIClient

from analysis.models import ExportJob, ExportStatus
from annotation.models import Benchmark
from annotation.services import benchmark_import
from tests.base import Cast

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "swords_small.json"
READS = ["statistics", "agreement", "filter-audit", "exports", "export/stats", "plots", "plots/scores.png"]


@pytest.fixture
def benchmark(cast: Cast) -> Benchmark:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="small")
    return Benchmark.objects.get(name="small")


@pytest.fixture
def researcher(cast: Cast) -> APIClient:
    client = APIClient()
    client.force_authenticate(cast.researcher)
    return client


@pytest.fixture(autouse=True)
def media(settings: Settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.mark.parametrize("endpoint", READS)
def test_only_researchers_may_read(endpoint: str, benchmark: Benchmark, cast: Cast) -> None:
    url = f"/api/benchmarks/{benchmark.name}/{endpoint}"
    assert APIClient().get(url).status_code in (401, 403)
    annotator = APIClient()
    annotator.force_authenticate(cast.alice)
    assert annotator.get(url).status_code == 403


@pytest.mark.parametrize(
    ("method", "url", "data"),
    [
        ("post", "/api/benchmarks/small/exports", {"format": "stats"}),
        ("put", "/api/benchmarks/small/reannotation", {"origin": None}),
        ("get", "/api/exports/1", None),
        ("get", "/api/exports/1/download", None),
    ],
)
def test_only_researchers_may_export_or_mark(
    method: str, url: str, data: object, benchmark: Benchmark, cast: Cast
) -> None:
    annotator = APIClient()
    annotator.force_authenticate(cast.alice)
    assert getattr(annotator, method)(url, data, format="json").status_code == 403
    assert ExportJob.objects.count() == 0


def test_statistics_come_with_parameters(benchmark: Benchmark, researcher: APIClient) -> None:
    response = researcher.get("/api/benchmarks/small/statistics")
    assert response.status_code == 200
    body = response.json()
    assert (body["contexts"], body["targets"], body["candidates"], body["labels"]) == (4, 3, 9, 55)
    assert set(body["by_source"]) <= {"coinco-only", "both", "thesaurus-only", "other"}
    strict = researcher.get("/api/benchmarks/small/statistics", {"acceptable": 0.9}).json()
    assert strict["per_target"]["acceptable"] <= body["per_target"]["acceptable"]
    assert (
        researcher.get("/api/benchmarks/small/statistics", {"acceptable": 0.1, "conceivable": 0.5}).status_code == 400
    )
    assert researcher.get("/api/benchmarks/nope/statistics").status_code == 404


def test_agreement_and_audit(benchmark: Benchmark, researcher: APIClient) -> None:
    agreement = researcher.get("/api/benchmarks/small/agreement", {"resamples": "100", "pairs": "false"}).json()
    assert agreement["alpha"]["resamples"] == 100
    assert "pairs" not in agreement["kappa"]
    audit = researcher.get("/api/benchmarks/small/filter-audit", {"step2_labels": 2, "min_labels": 5}).json()
    assert (audit["step2_labels"], audit["min_labels"]) == (2, 5)
    assert researcher.get("/api/benchmarks/small/filter-audit", {"step2_labels": 0}).status_code == 400


def test_a_re_annotation_is_marked_and_cleared(benchmark: Benchmark, researcher: APIClient) -> None:
    assert researcher.put("/api/benchmarks/small/reannotation", {"origin": "nope"}, format="json").status_code == 400
    response = researcher.put("/api/benchmarks/small/reannotation", {"origin": "swords_small.json"}, format="json")
    assert response.json() == {"benchmark": "small", "origin": "swords_small.json"}
    assert researcher.get("/api/benchmarks/small/statistics").json()["labels"] == 0
    researcher.put("/api/benchmarks/small/reannotation", {"origin": None}, format="json")
    assert researcher.get("/api/benchmarks/small/statistics").json()["labels"] == 55


def test_an_export_job_runs_on_commit_and_its_file_downloads(
    benchmark: Benchmark, researcher: APIClient, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher.post("/api/benchmarks/small/exports", {"format": "swords"}, format="json")
    assert response.status_code == 201
    job = researcher.get(f"/api/exports/{response.json()['id']}").json()
    assert (job["status"], job["progress"]) == ("done", 1.0)
    assert job["download_url"].endswith(f"/api/exports/{job['id']}/download")
    download = researcher.get(f"/api/exports/{job['id']}/download")
    assert download.status_code == 200
    assert download["Content-Disposition"] == 'attachment; filename="small-swords.json.gz"'
    content = gzip.decompress(b"".join(download.streaming_content)).decode("utf-8")  # type: ignore[attr-defined]
    assert content == FIXTURE.read_text(encoding="utf-8")
    assert [row["id"] for row in researcher.get("/api/benchmarks/small/exports").json()["results"]] == [job["id"]]


def test_a_job_that_is_not_done_has_no_file(benchmark: Benchmark, researcher: APIClient) -> None:
    job = ExportJob.objects.create(benchmark=benchmark, format="swords", path="exports/1-x.json")
    assert researcher.get(f"/api/exports/{job.pk}/download").status_code == 404
    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.DONE, path="../../etc/passwd")
    assert researcher.get(f"/api/exports/{job.pk}/download").status_code == 404


def test_a_direct_download_streams_and_large_benchmarks_need_a_job(
    benchmark: Benchmark, researcher: APIClient, settings: Settings
) -> None:
    response = researcher.get("/api/benchmarks/small/export/candidates-csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    lines = b"".join(response.streaming_content).decode().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 10 and lines[0].startswith("candidate_id,")
    stats = json.loads(b"".join(researcher.get("/api/benchmarks/small/export/stats").streaming_content))  # type: ignore[attr-defined]
    assert stats["statistics"]["labels"] == 55 and "filter_audit" in stats and "agreement" in stats
    settings.ANALYSIS_DIRECT_EXPORT_MAX_LABELS = 10
    assert researcher.get("/api/benchmarks/small/export/swords").status_code == 409
    # The candidate table carries posteriors fitted over every label: it follows the same limit.
    assert researcher.get("/api/benchmarks/small/export/candidates-csv").status_code == 409
    assert researcher.get("/api/benchmarks/small/export/stats").status_code == 200
    assert researcher.get("/api/benchmarks/small/export/xml").status_code == 404


def test_session_clients_reach_the_api_too(benchmark: Benchmark, cast: Cast) -> None:
    client = Client()
    client.force_login(cast.researcher)
    assert client.get("/api/benchmarks/small/statistics").status_code == 200
