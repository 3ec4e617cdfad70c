"""Prolific from the researcher's side: the crowd page, its publish form, the API and the commands,
all against the fake Prolific."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from tests.base import PASSWORD, Cast
from tests.crowds.crowd_helpers import make_batch
from tests.crowds.prolific_fake import fake_prolific

pytestmark = pytest.mark.django_db

SITE = "https://crowdlex.example.org"


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def researcher(cast: Cast, settings: Any) -> Client:
    settings.SITE_URL = SITE
    client = Client()
    assert client.login(username="rita", password=PASSWORD)
    return client


def test_the_crowd_page_previews_the_study_and_publishes_it(researcher: Client, settings: Any) -> None:
    batch = make_batch(backend="prolific", hits=2, reward="0.20")

    html = researcher.get(f"/batches/{batch.pk}/crowd/").content.decode()
    assert "Batch" in html and "on Prolific" in html
    assert "Places: 6 (one HIT per participant)" in html
    assert "Cost: rewards $1.20 + fee $0.54 = $1.74" in html
    assert f"{SITE}/prolific/study/{batch.public_token}/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in html

    with fake_prolific(settings) as fake:
        refused = researcher.post(
            f"/batches/{batch.pk}/crowd/publish/", {"estimated_minutes": "1", "rejection_category": "FAILED_CHECK"}
        )
        assert not fake.studies
        response = researcher.post(
            f"/batches/{batch.pk}/crowd/publish/",
            {"estimated_minutes": "1", "rejection_category": "LOW_EFFORT", "confirm_money": "on", "confirmed": "yes"},
            follow=True,
        )
    assert refused.status_code == 302
    assert "Published: 2 HITs created, 0 already on Prolific" in response.content.decode()
    batch.refresh_from_db()
    assert batch.external["rejection_category"] == "LOW_EFFORT"
    assert fake.studies[batch.external["study_id"]]["status"] == "ACTIVE"
    listed = researcher.get(f"/benchmarks/{batch.benchmark.name}/").content.decode()
    assert "On paid crowds" in listed and batch.external["study_id"] in listed


def test_the_api_publishes_with_the_studys_settings_and_shows_the_plan(cast: Cast, settings: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(backend="prolific", hits=1, reward="0.30")
    api = APIClient()
    api.force_authenticate(cast.researcher)

    plan = api.get(f"/api/batches/{batch.pk}/publish-plan/").json()
    assert plan["study"]["reward"] == 30
    assert plan["cost"]["minimum_hourly_wage"] == "8.00"
    with fake_prolific(settings) as fake:
        too_long = api.post(f"/api/batches/{batch.pk}/publish/", {"estimated_minutes": 600}, format="json")
        done = api.post(f"/api/batches/{batch.pk}/publish/", {"estimated_minutes": 2}, format="json")

    assert too_long.status_code == 409
    assert "1 to 30 minutes" in too_long.json()["detail"]
    assert done.status_code == 200, done.json()
    study = next(iter(fake.studies.values()))
    assert (study["estimated_completion_time"], study["total_available_places"]) == (2, 3)


def test_the_commands_dry_run_calls_nothing_and_sync_reconciles(settings: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(backend="prolific", hits=1, reward="0.20")

    dry = _run("prolific_publish", str(batch.pk), "--dry-run", "--estimated-minutes", "2")
    assert "Dry run: nothing is sent to Prolific." in dry
    assert "Pay rate: $6.00/h at 120 s per HIT, under Prolific's minimum of $8.00/h" in dry
    with pytest.raises(CommandError, match="not prolific"):
        _run("prolific_publish", str(make_batch(name="other", backend="mturk").pk), "--dry-run")

    with fake_prolific(settings) as fake:
        published = _run("prolific_publish", str(batch.pk), "--estimated-minutes", "1")
        batch.refresh_from_db()
        session, _ = fake.take_place(batch.external["study_id"], "1" * 24)
        fake.give_back(session)
        synced = _run("prolific_sync")
        stopped = _run("prolific_expire", str(batch.pk))

    assert f"study {batch.external['study_id']}, 1 HITs posted" in published
    assert f"batch {batch.pk}: 1 remote assignments" in synced
    assert "the batch is closed" in stopped
    assert fake.studies[batch.external["study_id"]]["status"] == "COMPLETED"
