"""The researcher's pipeline pages and API: progress, flagged workers with evidence, review actions."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Benchmark
from review.models import ReviewSettings, WorkerFlag
from review.services import benchmark_refresh
from tests.base import PASSWORD, Cast
from tests.review.builders import honest, make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged(cast: Cast) -> Benchmark:
    """A benchmark where a spammer failed the controls and an honest worker did not."""
    benchmark = make_benchmark(targets=2, candidates=4)
    step2_batch(benchmark)
    work_once(simulated("sam<script>"), benchmark, spammer)
    work_once(simulated("honest-ann"), benchmark, honest())
    benchmark_refresh(benchmark=benchmark)
    return benchmark


def researcher_client(cast: Cast) -> Client:
    client = Client()
    assert client.login(username=cast.researcher.username, password=PASSWORD)
    return client


def test_the_benchmark_page_shows_the_pipeline_section(flagged: Benchmark, cast: Cast) -> None:
    page = researcher_client(cast).get(reverse("benchmark-detail", args=[flagged.name]))
    html = page.content.decode()
    assert 'id="pipeline"' in html
    assert "Step 2: reduce" in html and '<span data-live="flags.workers">1</span> to review' in html
    assert reverse("pipeline-progress", args=[flagged.name]) in html


def test_the_progress_page_shows_steps_and_a_row_per_target(flagged: Benchmark, cast: Cast) -> None:
    page = researcher_client(cast).get(reverse("pipeline-progress", args=[flagged.name]))
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count("<strong>sat</strong>") == 2
    assert "4 / 24" in html  # the honest worker's 4 labels of 8 candidates x 3 needed


def test_the_flagged_workers_page_shows_the_failed_controls_escaped(flagged: Benchmark, cast: Cast) -> None:
    page = researcher_client(cast).get(reverse("pipeline-workers", args=[flagged.name]))
    html = page.content.decode()
    assert "sam&lt;script&gt;" in html and "sam<script>" not in html
    assert "honest-ann" not in html
    assert "target copy “sat”: reject → accept" in html
    assert "Control accuracy <strong>0%</strong>" in html


def test_a_researcher_clears_a_flag_and_blocks_and_unblocks_a_worker(flagged: Benchmark, cast: Cast) -> None:
    client = researcher_client(cast)
    flag = WorkerFlag.objects.get(benchmark=flagged)

    response = client.post(reverse("pipeline-flag-clear", args=[flagged.name, flag.pk]))
    assert response.status_code == 302
    flag.refresh_from_db()
    assert not flag.active and flag.cleared_by == cast.researcher

    worker = flag.worker
    client.post(
        reverse("pipeline-worker-block", args=[flagged.name, worker.pk]),
        {"reason": "random clicks", "confirmed": "yes"},
    )
    worker.refresh_from_db()
    assert worker.blocked and "random clicks" in worker.blocked_reason
    client.post(reverse("pipeline-worker-unblock", args=[flagged.name, worker.pk]))
    worker.refresh_from_db()
    assert not worker.blocked


def test_a_researcher_turns_on_automatic_blocking(flagged: Benchmark, cast: Cast) -> None:
    client = researcher_client(cast)
    response = client.post(
        reverse("pipeline-review-settings", args=[flagged.name]), {"auto_block_spammers": "on", "fast_factor": "5"}
    )
    assert response.status_code == 302
    settings = ReviewSettings.objects.get(benchmark=flagged)
    assert settings.auto_block_spammers and not settings.auto_block_signals
    assert settings.signal_overrides == {"fast_factor": 5.0}


def test_annotators_cannot_see_the_pipeline_pages(flagged: Benchmark, cast: Cast) -> None:
    client = Client()
    client.login(username=cast.alice.username, password=PASSWORD)
    assert client.get(reverse("pipeline-workers", args=[flagged.name])).status_code == 403
    assert client.get(reverse("benchmark-live", args=[flagged.name])).status_code == 403
    flag = WorkerFlag.objects.get(benchmark=flagged)
    assert client.post(reverse("pipeline-flag-clear", args=[flagged.name, flag.pk])).status_code == 403
    assert WorkerFlag.objects.get(pk=flag.pk).active


def api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_reports_progress(flagged: Benchmark, cast: Cast) -> None:
    data = api(cast.researcher).get(f"/api/benchmarks/{flagged.name}/pipeline/").json()
    assert data["targets_by_stage"] == {"reduce": 2, "score": 0, "done": 0}
    assert data["steps"][0] == {
        "step": 2,
        "title": "step 2: reduce",
        "unit": "valid labels",
        "item_noun": "candidates",
        "waiting_noun": "candidates lacking labels in no open batch",
        "labels_collected": 4,
        "labels_needed": 24,
        "candidates": 8,
        "hits": 2,
        "open_slots": 5,
        "waiting": 0,
    }
    assert len(data["targets"]) == 2
    assert data["assignments"]["filtered"] == 1


def test_the_api_lists_and_clears_flags_and_blocks_workers(flagged: Benchmark, cast: Cast) -> None:
    client = api(cast.researcher)
    flags = client.get(f"/api/benchmarks/{flagged.name}/flags/", {"active": "true"}).json()["results"]
    [flag] = flags
    assert flag["reason"] == "control_accuracy" and flag["evidence"]["accuracy"] == 0.0
    assert flag["worker"]["external_id"] == "sam<script>"

    cleared = client.post(f"/api/flags/{flag['id']}/clear/").json()
    assert cleared["active"] is False and cleared["cleared_by"] == "rita"
    assert client.get(f"/api/benchmarks/{flagged.name}/flags/", {"active": "true"}).json()["results"] == []

    worker_id = flag["worker"]["id"]
    blocked = client.post(f"/api/workers/{worker_id}/block/", {"reason": "bot"}, format="json").json()
    assert blocked["blocked"] is True
    assert client.post(f"/api/workers/{worker_id}/unblock/").json()["blocked"] is False

    settings = client.patch(
        f"/api/benchmarks/{flagged.name}/review-settings/", {"auto_block_signals": True}, format="json"
    ).json()
    assert settings["auto_block_signals"] is True
    refused = client.patch(
        f"/api/benchmarks/{flagged.name}/review-settings/", {"signal_overrides": {"speed": 1}}, format="json"
    )
    assert refused.status_code == 400 and "speed" in json.dumps(refused.json())


def test_the_api_is_for_researchers_only(flagged: Benchmark, cast: Cast) -> None:
    client = api(cast.alice)
    assert client.get(f"/api/benchmarks/{flagged.name}/pipeline/").status_code == 403
    flag = WorkerFlag.objects.get(benchmark=flagged)
    assert client.post(f"/api/flags/{flag.pk}/clear/").status_code == 403
    assert client.post(f"/api/workers/{flag.worker_id}/block/").status_code == 403


def test_simulate_crowd_prints_one_json_report(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=6)
    out = StringIO()
    call_command(
        "simulate_crowd", benchmark.name, "--honest", "14", "--spammers", "1", "--bots", "2", "--seed", "3", "--json",
        stdout=out,
    )  # fmt: skip
    report = json.loads(out.getvalue())
    for key in ("spammers", "spammers_caught", "honest", "honest_flagged", "labels", "assignments"):
        assert key in report
    assert report["finished"] and report["targets_done"] == 1
    assert report["honest_flagged"] == 0
    assert report["spammers_caught"] <= 1 and report["bots_flagged"] <= 2
    assert report["cost"] == f"{report['assignments'] * 0.10:.2f}"


def test_simulate_crowd_says_why_it_stops_when_the_crowd_is_too_small(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    out = StringIO()
    call_command("simulate_crowd", benchmark.name, "--honest", "5", "--spammers", "0", stdout=out)
    text = out.getvalue()
    assert "stopped before the end" in text
    assert "Add honest workers" in text


def test_advance_pipeline_reports_what_it_did(flagged: Benchmark) -> None:
    out = StringIO()
    call_command("advance_pipeline", flagged.name, stdout=out)
    assert "targets: reduce 2, score 0, done 0" in out.getvalue()


def test_the_schema_describes_the_pipeline_endpoints_without_warnings() -> None:
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    mine = [m for m in [*GENERATOR_STATS._warn_cache, *GENERATOR_STATS._error_cache] if "pipeline_api" in m]
    assert mine == []
    for path in ["/api/benchmarks/{name}/pipeline/", "/api/benchmarks/{name}/flags/", "/api/flags/{id}/clear/"]:
        assert path in schema["paths"], path


def test_the_admin_clears_flags_and_blocks_workers_through_the_services(flagged: Benchmark, cast: Cast) -> None:
    admin = User.objects.create_superuser("root", password=PASSWORD)
    client = Client()
    client.force_login(admin)
    flag = WorkerFlag.objects.get(benchmark=flagged)
    url = reverse("admin:review_workerflag_changelist")

    client.post(url, {"action": "block_workers", "_selected_action": [flag.pk]})
    flag.worker.refresh_from_db()
    assert flag.worker.blocked and "control accuracy" in flag.worker.blocked_reason

    client.post(url, {"action": "clear_flags", "_selected_action": [flag.pk]})
    flag.refresh_from_db()
    assert not flag.active and flag.cleared_by == admin
