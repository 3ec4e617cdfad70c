"""Researcher pages for batches and HITs, and who may see them."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Benchmark, Context, Target
from crowds.interface import get_backend
from hits.models import Batch, BatchStatus
from hits.services import hits_generate
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.hits.assignment_data import make_assignment
from tests.hits.generation_data import TargetSpec, build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("pages")


@pytest.fixture
def researcher(client: Client, cast: Cast) -> Client:
    client.force_login(cast.researcher)
    return client


@pytest.fixture
def batch(benchmark: Benchmark) -> Batch:
    return hits_generate(benchmark=benchmark, step=2, seed=1)


def test_a_researcher_creates_a_batch_from_the_form(researcher: Client, benchmark: Benchmark, cast: Cast) -> None:
    page = researcher.get(reverse("batch-list", args=["pages"]))
    assert page.status_code == 200
    assert b"Create a batch" in page.content
    response = researcher.post(
        reverse("batch-list", args=["pages"]),
        {"step": "2", "seed": "5", "targets": "", "backend": "local", "assignment_minutes": "20", "reward": "0.12"},
    )
    batch = Batch.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("batch-detail", args=[batch.pk])
    assert (batch.seed, str(batch.reward), batch.assignment_duration.total_seconds()) == (5, "0.12", 1200)
    assert batch.created_by == cast.researcher
    assert batch.hits.count() == 5


def test_the_form_reports_bad_targets_and_refusals_without_creating_anything(
    researcher: Client, benchmark: Benchmark
) -> None:
    url = reverse("batch-list", args=["pages"])
    base = {"step": "2", "seed": "5", "backend": "local", "assignment_minutes": "30"}
    response = researcher.post(url, {**base, "targets": "12, abc"})
    assert response.status_code == 200
    assert "&#x27;abc&#x27; is not a target id" in response.content.decode()
    response = researcher.post(url, {**base, "targets": "999999"})
    assert "targets 999999 do not exist" in response.content.decode()
    assert not Batch.objects.exists()
    bright = Target.objects.get(word="bright")
    response = researcher.post(url, {**base, "targets": f"{bright.pk}"})
    assert response.status_code == 302
    response = researcher.post(url, {**base, "targets": f"{bright.pk}"})
    assert "already have step-2 HITs in an open batch" in response.content.decode()
    assert Batch.objects.count() == 1


def test_the_batch_page_shows_progress_costs_and_hits(researcher: Client, batch: Batch) -> None:
    first = batch.hits.order_by("id").first()
    assert first is not None
    for name in ["w1", "w2", "w3"]:
        make_assignment(first, name, seconds=42.0)
    page = researcher.get(reverse("batch-detail", args=[batch.pk])).content.decode()
    assert "1 / 5" in page  # HITs complete
    assert "3 / 15" in page  # valid assignments
    assert "42 s" in page
    assert "$0.30 / $1.50" in page
    assert "local queue: no fees" in page
    assert reverse("hit-detail", args=[first.pk]) in page
    assert reverse("batch-crowd", args=[batch.pk]) not in page


@pytest.mark.parametrize("backend", ["local", "mturk", "prolific"])
def test_the_batch_page_names_its_crowds_fees_and_links_a_paid_crowds_page(
    researcher: Client, benchmark: Benchmark, backend: str
) -> None:
    crowd = get_backend(backend)
    batch = hits_generate(benchmark=benchmark, step=2, seed=1, backend=backend)
    page = researcher.get(reverse("batch-detail", args=[batch.pk])).content.decode()
    fees = f"{crowd.short_label}'s fees" if crowd.fees.rate else f"{crowd.short_label}: no fees"
    assert fees in page
    assert (reverse("batch-crowd", args=[batch.pk]) in page) == crowd.remote
    assert (backend == "local") != (crowd.fees.rate > 0)


def test_the_hit_page_marks_controls_and_shows_each_assignments_answers(researcher: Client, batch: Batch) -> None:
    hit = batch.hits.order_by("id").first()
    assert hit is not None
    make_assignment(hit, "ann", seconds=12.0)
    page = researcher.get(reverse("hit-detail", args=[hit.pk])).content.decode()
    distractor = hit.items.get(kind=ItemKind.CONTROL_DISTRACTOR)
    assert "control: the target itself" in page
    assert "control: a random word" in page
    assert distractor.text in page
    # Each answer in the scheme's words (its choice's label), toned as the first or second choice.
    assert page.count('class="badge ok" title="stored as accept" data-answer="accept">Accept</span>') == (
        hit.items.count() - 1
    )
    assert page.count('class="badge bad" title="stored as reject" data-answer="reject">Reject</span>') == 1
    assert '<mark class="target">sat</mark>' in page


def test_context_text_is_escaped_on_the_hit_page(researcher: Client) -> None:
    text = "<script>alert(1)</script> the cat sat."
    benchmark = build_benchmark("xss", [TargetSpec(text, "sat", "verb", "sit", ["perched"])])
    hit = hits_generate(benchmark=benchmark, step=2, seed=1).hits.get()
    page = researcher.get(reverse("hit-detail", args=[hit.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert Context.objects.filter(text=text).exists()


def test_close_and_reopen_from_the_batch_page(researcher: Client, batch: Batch) -> None:
    assert researcher.post(reverse("batch-close", args=[batch.pk]), {"confirmed": "yes"}).status_code == 302
    batch.refresh_from_db()
    assert batch.status == BatchStatus.CLOSED
    assert researcher.get(reverse("batch-close", args=[batch.pk])).status_code == 405
    researcher.post(reverse("batch-reopen", args=[batch.pk]))
    batch.refresh_from_db()
    assert batch.status == BatchStatus.OPEN


def test_the_csv_download_streams_the_batch(researcher: Client, batch: Batch) -> None:
    response = researcher.get(reverse("batch-export", args=[batch.pk]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    lines = b"".join(response.streaming_content).decode().splitlines()  # type: ignore[attr-defined,arg-type]
    assert lines[0].startswith("hit_id,batch_id,target_id,target,pos,offset,part,context,item_1_text")
    assert len(lines) == 6


def test_the_benchmark_page_lists_its_batches(researcher: Client, batch: Batch) -> None:
    page = researcher.get(reverse("benchmark-detail", args=["pages"])).content.decode()
    assert 'id="batches"' in page
    assert reverse("batch-detail", args=[batch.pk]) in page
    assert reverse("batch-list", args=["pages"]) in page


def test_an_unknown_hit_or_batch_is_not_found(researcher: Client) -> None:
    assert researcher.get(reverse("hit-detail", args=[999_999])).status_code == 404
    assert researcher.get(reverse("batch-detail", args=[999_999])).status_code == 404


def researcher_urls(batch: Batch) -> list[tuple[str, str]]:
    hit = batch.hits.first()
    assert hit is not None
    return [
        ("get", reverse("batch-list", args=[batch.benchmark.name])),
        ("post", reverse("batch-list", args=[batch.benchmark.name])),
        ("get", reverse("batch-detail", args=[batch.pk])),
        ("get", reverse("batch-live", args=[batch.pk])),
        ("post", reverse("batch-close", args=[batch.pk])),
        ("post", reverse("batch-reopen", args=[batch.pk])),
        ("get", reverse("batch-export", args=[batch.pk])),
        ("get", reverse("hit-detail", args=[hit.pk])),
        ("post", reverse("batch-clone", args=[batch.pk])),
        ("get", reverse("target-list", args=[batch.benchmark.name])),
        ("get", reverse("target-detail", args=[hit.target_id])),
        ("get", reverse("benchmark-settings", args=[batch.benchmark.name])),
        ("post", reverse("benchmark-settings", args=[batch.benchmark.name])),
        ("get", reverse("benchmark-activity", args=[batch.benchmark.name])),
    ]


def test_annotators_are_refused_every_researcher_page(client: Client, cast: Cast, batch: Batch) -> None:
    client.force_login(cast.alice)
    for method, url in researcher_urls(batch):
        assert getattr(client, method)(url).status_code == 403, url
    batch.refresh_from_db()
    assert batch.status == BatchStatus.OPEN
    assert Batch.objects.count() == 1


def test_visitors_are_sent_to_the_login_page(client: Client, batch: Batch) -> None:
    for method, url in researcher_urls(batch):
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login"))
