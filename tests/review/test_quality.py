"""The telemetry signals in the review flow: flags with evidence, thresholds and mitigations in the review
settings (page and API), automatic blocking only when on, the statistics' shares, the simulated crowd."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db.models import Count
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Benchmark, Worker
from hits.guards import benchmark_mitigations
from hits.models import AssignmentTelemetry
from hits.telemetry import Telemetry
from review.models import ReviewSettings, WorkerFlag
from review.services import benchmark_refresh, review_settings_update
from review.signals import INTERACTION_REASONS, SignalSettings
from tests.base import PASSWORD, Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db

AGENT = Telemetry(ms_to_first_answer=3000, item_ms=(3000, *([1000] * 11)))
PERSON = Telemetry(
    ms_to_first_answer=9000,
    item_ms=(9000, 4100, 7300, 2900, 8800, 5200, 3900, 6100, 4700, 10100, 3300, 5600),
    pointer=13,
)


def researcher(cast: Cast) -> Client:
    client = Client()
    assert client.login(username=cast.researcher.username, password=PASSWORD)
    return client


def submit_with(benchmark: Benchmark, worker: Worker, telemetry: Telemetry, times: int) -> None:
    for _ in range(times):
        assignment = work_once(worker, benchmark, honest())
        assert assignment is not None
        AssignmentTelemetry.objects.create(assignment=assignment, data=telemetry.as_dict())


@pytest.fixture
def agent_benchmark() -> tuple[Benchmark, Worker, Worker]:
    benchmark = make_benchmark(targets=4, candidates=10)
    step2_batch(benchmark)
    agent, person = simulated("agent"), simulated("person")
    submit_with(benchmark, agent, AGENT, 3)
    submit_with(benchmark, person, PERSON, 3)
    return benchmark, agent, person


def test_an_agent_is_flagged_for_review_with_evidence_and_not_blocked(agent_benchmark: Any) -> None:
    benchmark, agent, person = agent_benchmark
    benchmark_refresh(benchmark=benchmark, full=True)

    flags = {flag.reason: flag for flag in WorkerFlag.objects.filter(worker=agent)}
    assert set(flags) >= {"no_input", "uniform_timing"}
    assert flags["no_input"].evidence["marked"] == 3 and flags["no_input"].evidence["examples"][0]["key"] == 0
    assert flags["uniform_timing"].evidence["examples"][0]["spread"] == 0.0
    assert not WorkerFlag.objects.filter(worker=person).exists()
    agent.refresh_from_db()
    assert not agent.blocked


def test_automatic_blocking_blocks_on_the_telemetry_signals_when_switched_on(agent_benchmark: Any) -> None:
    benchmark, agent, person = agent_benchmark
    review_settings_update(benchmark=benchmark, auto_block_signals=True)
    benchmark_refresh(benchmark=benchmark, full=True)
    agent.refresh_from_db()
    person.refresh_from_db()
    assert agent.blocked and "answers without any pointer, touch or key input" in agent.blocked_reason
    assert not person.blocked


def test_thresholds_and_mitigations_are_set_on_the_review_page_keeping_earlier_overrides(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=2)
    review_settings_update(benchmark=benchmark, signal_overrides={"fast_factor": 5})
    client = researcher(cast)
    page = client.get(reverse("pipeline-workers", args=[benchmark.name])).content.decode()
    assert 'name="pledge"' in page and 'name="away_min_seconds"' in page and 'name="uniform_max_cv"' in page

    response = client.post(
        reverse("pipeline-review-settings", args=[benchmark.name]),
        {"fast_factor": "5", "away_min_seconds": "45", "pledge": "on", "notice": "on"},
    )

    assert response.status_code == 302
    settings = ReviewSettings.objects.get(benchmark=benchmark)
    assert settings.signal_overrides == {"fast_factor": 5, "away_min_seconds": 45.0}
    mitigations = benchmark_mitigations(benchmark=benchmark)
    assert (mitigations.pledge, mitigations.block_copy_paste, mitigations.notice) == (True, False, True)
    page = client.get(reverse("pipeline-workers", args=[benchmark.name])).content.decode()
    assert 'name="pledge" checked' in page and 'name="block_copy_paste" >' in page


def test_the_review_settings_api_reads_and_changes_the_mitigations(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=2)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.researcher).key}")
    url = f"/api/benchmarks/{benchmark.name}/review-settings/"

    response = client.patch(url, {"block_copy_paste": True, "signal_overrides": {"no_input_share": 0.3}}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["block_copy_paste"] is True and response.json()["pledge"] is False
    assert client.get(url).json()["signal_overrides"] == {"no_input_share": 0.3}
    bad = client.patch(url, {"signal_overrides": {"pasted_min_chars": 2.5}}, format="json")
    assert bad.status_code == 400 and "whole number" in json.dumps(bad.json())


def test_older_overrides_still_read_with_the_new_thresholds_at_their_defaults() -> None:
    settings = SignalSettings.with_overrides({"fast_factor": 5, "min_labels": 20})
    assert settings.fast_factor == 5 and settings.away_min_seconds == SignalSettings.away_min_seconds


def test_the_statistics_show_the_share_of_assignments_with_each_signal(agent_benchmark: Any, cast: Cast) -> None:
    benchmark, _, _ = agent_benchmark
    client = researcher(cast)
    page = client.get(reverse("analysis-statistics", args=[benchmark.name])).content.decode()
    assert 'id="interaction"' in page and "uniform_timing" in page and "0.500" in page

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.researcher).key}")
    stats = api.get(f"/api/benchmarks/{benchmark.name}/statistics").json()
    assert stats["interaction"]["assignments"] == 6 and stats["interaction"]["with_telemetry"] == 6
    assert stats["interaction"]["signals"]["no_input"] == {"assignments": 3, "share": 0.5}
    assert stats["interaction"]["signals"]["pasted"] == {"assignments": 0, "share": 0.0}
    document = api.get(f"/api/benchmarks/{benchmark.name}/export/stats")
    assert document.status_code == 200
    assert document.streaming
    body = json.loads(b"".join(document.streaming_content))  # type: ignore[attr-defined,arg-type]
    assert body["interaction"]["signals"]["uniform_timing"]["share"] == 0.5


def test_the_simulated_crowd_reports_its_llm_assisted_workers_caught_and_honest_ones_spared() -> None:
    from review.simulation import crowd_simulate

    benchmark = make_benchmark(targets=6, candidates=14)
    report = crowd_simulate(benchmark=benchmark, honest=12, spammers=1, bots=0, llm=4, seed=5)

    assert report.finished, report.stuck
    assert report.llm == 4 and report.honest_flagged == 0 and report.honest_flagged_by_telemetry == 0
    # Every LLM-assisted worker with enough work to be judged (three assignments) is flagged by telemetry.
    judged = (
        Worker.objects.filter(external_id__contains=":llm-", assignments__telemetry__isnull=False)
        .annotate(n=Count("assignments"))
        .filter(n__gte=SignalSettings().interaction_min_assignments)
    )
    assert judged.count() >= 3
    flagged = set(WorkerFlag.objects.filter(reason__in=INTERACTION_REASONS).values_list("worker_id", flat=True))
    assert set(judged.values_list("pk", flat=True)) <= flagged
    assert report.llm_flagged_by_telemetry >= judged.count()
    assert {"away", "no_input"} <= set(report.flagged_reasons)
