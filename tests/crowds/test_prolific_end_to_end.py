"""The whole Prolific path, against a fake Prolific served over HTTP by the test: a
step-2 batch becomes a published study, participants work through the study page and go back to
Prolific with the completion code, a sync confirms and approves their submissions, and the
pipeline moves the target to step 3, whose batch becomes a study of its own."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from annotation.models import Label, TargetStage
from crowds.services import batch_publish, batch_sync
from hits.models import Assignment, Batch, FilteredPolicy, HITItem
from hits.services import hits_generate
from schemes.swords.items import ItemKind
from tests.crowds.prolific_fake import FakeProlific, fake_prolific
from tests.hits.factories import make_benchmark, make_target

pytestmark = pytest.mark.django_db(transaction=True)

SITE = "https://crowdlex.example.org"


def _work(client: Client, fake: FakeProlific, study_id: str, participant: str) -> str:
    """A participant takes a place, judges the HIT the study page gives them, and is sent back to
    Prolific, where they complete the study with the code they were given. Returns the session."""
    session, path = fake.take_place(study_id, participant)
    page = client.get(path)
    assert page.status_code == 200, page.content
    token = page.content.decode().split('name="token" value="', 1)[1].split('"', 1)[0]
    assignment = Assignment.objects.get(external_id=session)
    answers = {
        f"item-{item.pk}": "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in HITItem.objects.filter(hit=assignment.hit)
    }
    response = client.post(urlsplit(path).path, {"token": token, **answers})
    assert response.status_code == 302
    assert response["Location"].startswith("https://app.prolific.com/submissions/complete?cc=")
    fake.complete(session, parse_qs(urlsplit(response["Location"]).query)["cc"][0])
    return session


def test_a_step_two_batch_on_prolific_runs_to_the_next_step(settings: Any) -> None:
    settings.SITE_URL = SITE
    benchmark = make_benchmark(scheme_settings={"step2_labels": 3, "step3_labels": 7})
    target = make_target(benchmark)
    batch = hits_generate(
        benchmark=benchmark,
        step=2,
        seed=1,
        backend="prolific",
        reward=Decimal("0.20"),
        filtered_policy=FilteredPolicy.REJECT,
    )
    with fake_prolific(settings) as fake:
        result = batch_publish(batch=batch, options={"estimated_minutes": 1})
        batch.refresh_from_db()
        study_id = batch.external["study_id"]
        study = fake.studies[study_id]
        assert (result.hits_created, study["status"], study["total_available_places"]) == (1, "ACTIVE", 3)
        assert (study["reward"], study["estimated_completion_time"]) == (20, 1)
        assert "PROLIFIC_PID={%PROLIFIC_PID%}" in study["external_study_url"]

        client = Client()
        sessions = [_work(client, fake, study_id, f"{number:024x}") for number in (1, 2, 3)]
        # Saved here, but nothing counts before Prolific vouches for the submissions.
        assert not Label.objects.exists()

        report = batch_sync(batch=batch, hold=timedelta(0))

        assert (report.approved, report.flagged_unknown, report.errors) == (3, [], [])
        assert {fake.submissions[session]["status"] for session in sessions} == {"APPROVED"}
        assert set(Assignment.objects.filter(hit__batch=batch).values_list("status", flat=True)) == {"approved"}
        assert Label.objects.filter(assignment__hit__batch=batch).count() == 3 * target.candidates.count()
        target.refresh_from_db()
        assert target.stage == TargetStage.SCORE

        step3 = Batch.objects.get(benchmark=benchmark, step=3)
        assert (step3.backend, step3.assignments_per_hit) == ("prolific", 7)
        assert step3.filtered_policy == FilteredPolicy.REJECT
        assert step3.external["estimated_minutes"] == 1
        # Published by itself as its parent was: a study of its own, as many places as its HITs need.
        second = fake.studies[step3.external["study_id"]]
        assert second["status"] == "ACTIVE"
        assert second["total_available_places"] == sum(step3.hits.values_list("assignments_required", flat=True))
        assert len(fake.studies) == 2

        # A participant of step 2 who comes back is never given the candidates they judged again.
        _, again = fake.take_place(step3.external["study_id"], f"{1:024x}")
        assert client.get(again).status_code == 409
        _, newcomer = fake.take_place(step3.external["study_id"], f"{9:024x}")
        assert client.get(newcomer).status_code == 200
