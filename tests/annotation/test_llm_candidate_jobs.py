"""Candidates from a language model through the benchmark's page and the API: a job like an
import's, followed on the import job's page, against a local fake OpenAI-compatible endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from annotation.importers.jobs import candidates_job_create, import_job_run
from annotation.llm import ModelRequest
from annotation.models import Benchmark, Candidate, Context, ImportJob, ImportJobStatus, Target
from tests.annotation.fake_chat import FakeChat, Reply, fake_chat, substitutes
from tests.base import Cast

MODEL = "fake-model"


@pytest.fixture
def fake(settings: Any) -> Iterator[FakeChat]:
    with fake_chat() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = ""
        settings.LLM_BACKOFF_SECONDS = 0.01
        settings.LLM_REQUESTS_PER_MINUTE = 60_000
        settings.LLM_MAX_ATTEMPTS = 2
        settings.LLM_MODEL = MODEL
        server.default = lambda word: substitutes(f"{word}-like", f"very {word}")
        yield server


def _benchmark(name: str = "llm-page", scheme: str = "swords") -> Benchmark:
    benchmark = Benchmark.objects.create(name=name, scheme=scheme)
    for text, word in (("A quick reply came.", "quick"), ("The bright sun rose.", "bright")):
        context = Context.objects.create(benchmark=benchmark, text=text)
        Target.objects.create(benchmark=benchmark, context=context, word=word, offset=text.index(word), pos="adj")
    return benchmark


def _client(cast: Cast) -> Client:
    client = Client()
    client.force_login(cast.researcher)
    return client


@pytest.mark.django_db
def test_the_page_form_starts_a_job_whose_page_shows_the_candidates_it_added(
    fake: FakeChat, cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = _benchmark()
    client = _client(cast)

    page = client.get(f"/benchmarks/{benchmark.name}/").content.decode()
    assert "Candidates from a language model" in page and f'value="{MODEL}"' in page
    assert "{marked_context}" in page  # the scheme's prompt, shown as the placeholder
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/benchmarks/{benchmark.name}/candidates/",
            {"source": "llm", "model": MODEL, "per_target": "2", "temperature": "0.3", "targets": ""},
        )

    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/import-jobs/{job.pk}/"
    assert (job.status, job.format, job.origin) == (ImportJobStatus.DONE, "llm", f"llm:{MODEL}")
    assert job.parameters["model"]["per_target"] == 2 and job.parameters["model"]["temperature"] == 0.3
    texts = set(Candidate.objects.filter(target__benchmark=benchmark).values_list("text", flat=True))
    assert texts == {"quick-like", "very quick", "bright-like", "very bright"}
    shown = client.get(response["Location"]).content.decode()
    assert f"Candidates from llm:{MODEL} for {benchmark.name}" in shown
    assert "2 targets asked, 2 answered, 0 failed" in shown and "4 new candidates" in shown


@pytest.mark.django_db
def test_a_dry_run_from_the_page_shows_the_prompt_and_asks_nothing(fake: FakeChat, cast: Cast) -> None:
    benchmark = _benchmark()
    client = _client(cast)

    response = client.post(
        f"/benchmarks/{benchmark.name}/candidates/", {"source": "llm", "model": MODEL, "dry_run": "1"}, follow=True
    )

    text = response.content.decode()
    assert "dry run: nothing asked" in text and "A **quick** reply came." in text
    assert fake.seen == [] and not ImportJob.objects.exists()


@pytest.mark.django_db
def test_a_bad_prompt_or_a_scheme_without_prompt_is_refused_on_the_page_before_any_job(
    fake: FakeChat, cast: Cast
) -> None:
    benchmark = _benchmark()
    sws = _benchmark("llm-sws", scheme="sws")
    client = _client(cast)

    bad = client.post(
        f"/benchmarks/{benchmark.name}/candidates/",
        {"source": "llm", "model": MODEL, "prompt": "Words for {word}"},
        follow=True,
    )
    refused = client.get(f"/benchmarks/{sws.name}/").content.decode()

    assert "unknown placeholder {word}" in bad.content.decode()
    assert "takes no candidates from a language model" in refused
    assert not ImportJob.objects.exists() and fake.seen == []


@pytest.mark.django_db
def test_a_failed_target_is_listed_on_the_job_page_and_a_second_job_asks_only_it(
    fake: FakeChat, cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = _benchmark()
    fake.script("bright", Reply(status=503), Reply(status=503), substitutes("shiny"))
    request = ModelRequest(model=MODEL, per_target=3)

    with django_capture_on_commit_callbacks(execute=True):
        first = candidates_job_create(benchmark=benchmark, source="llm", model=request, created_by=cast.researcher)
    first.refresh_from_db()
    shown = _client(cast).get(f"/import-jobs/{first.pk}/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        second = candidates_job_create(benchmark=benchmark, source="llm", model=request, created_by=cast.researcher)
    second.refresh_from_db()

    assert first.status == ImportJobStatus.DONE and first.report["failed"] == 1  # type: ignore[index]
    assert "Failed: target" in shown and "bright" in shown and "Run it again" in shown
    assert second.report["already_asked"] == 1 and second.report["answered"] == 1  # type: ignore[index]
    assert (fake.asked("quick"), fake.asked("bright")) == (1, 3)
    # Running a finished job again changes nothing.
    assert import_job_run(job_id=second.pk) is not None and fake.asked("bright") == 3


@pytest.mark.django_db
def test_the_api_runs_a_job_and_answers_a_dry_run_at_once(
    fake: FakeChat, cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = _benchmark()
    client = _client(cast)
    url = f"/api/benchmarks/{benchmark.name}/candidates"

    dry = client.post(url, {"source": "llm", "dry_run": True, "targets": ["quick"]}, content_type="application/json")
    assert dry.status_code == 200 and dry.json()["first_prompt"].count("**quick**") == 1 and fake.seen == []
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(url, {"source": "llm", "per_target": 1}, content_type="application/json")

    assert started.status_code == 202 and started.json()["format"] == "llm"
    body = client.get(started["Location"]).json()
    assert body["status"] == "done" and body["report"] is None
    assert body["model_report"]["candidates_created"] == 2 and body["model_report"]["origin"] == f"llm:{MODEL}"
    refused = client.post(url, {"source": "llm", "temperature": 5}, content_type="application/json")
    assert refused.status_code == 400 and "temperature" in json.dumps(refused.json())
    with django_capture_on_commit_callbacks(execute=True):
        wordnet = client.post(url, {"source": "wordnet", "targets": ["quick"]}, content_type="application/json")
    assert wordnet.status_code == 202
    polled = client.get(wordnet["Location"]).json()
    assert polled["report"]["origin"] == "wordnet" and polled["model_report"] is None
