"""Telemetry and the mitigations through every entry point: the local page's form, the REST work API and
the MTurk page; kept with a return; refused with a clear 400 when malformed; counting for nothing while
crowd work is unconfirmed."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Worker
from hits.guards import pledge_given
from hits.models import Answer, Assignment, AssignmentStatus, AssignmentTelemetry, HITItem, Pledge
from hits.services import assignment_confirm, mitigations_update
from review.selectors import interaction_summary, submitted_work
from schemes.swords.items import ItemKind
from tests.base import Cast, logged_in
from tests.crowds.crowd_helpers import make_batch as make_crowd_batch
from tests.crowds.crowd_helpers import publish_locally
from tests.hits.factories import claim, make_benchmark, make_hits

pytestmark = pytest.mark.django_db

AGENT = {"v": 1, "ms_to_first_answer": 4000, "item_ms": [4000, 900, 910], "pointer": 0, "touch": 0, "key": 0}


def api(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def form_answers(assignment: Assignment) -> dict[str, str]:
    return {
        f"item-{item.pk}": "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in HITItem.objects.filter(hit=assignment.hit_id)
    }


def stored(assignment: Assignment) -> dict[str, Any]:
    return AssignmentTelemetry.objects.get(assignment=assignment).data


def test_the_page_form_stores_the_telemetry_with_the_answers(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    client = logged_in(cast.alice)
    page = client.get(f"/work/assignments/{assignment.pk}/").content.decode()
    assert 'name="telemetry"' in page
    assert "This page records how you work" in page and "never what you type" in page

    data = {**form_answers(assignment), "telemetry": json.dumps({**AGENT, "pointer": 5, "pastes": [7]})}
    response = client.post(f"/work/assignments/{assignment.pk}/", data)

    assert response.status_code == 302
    assert stored(assignment)["pointer"] == 5 and stored(assignment)["pastes"] == [7]
    assert stored(assignment)["v"] == 1 and "text" not in json.dumps(stored(assignment))


def test_malformed_telemetry_on_the_page_is_a_400_that_stores_nothing(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    data = {**form_answers(assignment), "telemetry": json.dumps({"answer_text": "bright"})}

    response = logged_in(cast.alice).post(f"/work/assignments/{assignment.pk}/", data)

    assert response.status_code == 400
    assert "telemetry has unknown fields: answer_text" in response.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.CLAIMED
    assert not Answer.objects.exists() and not AssignmentTelemetry.objects.exists()


def test_a_returned_hit_keeps_its_telemetry_on_the_page_and_the_api(cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    first = claim(cast.alice)
    response = logged_in(cast.alice).post(
        f"/work/assignments/{first.pk}/return", {"telemetry": json.dumps({"hidden": 2, "away_ms": 60000})}
    )
    assert response.status_code == 302
    first.refresh_from_db()
    assert first.status == AssignmentStatus.RETURNED and stored(first)["away_ms"] == 60000

    second = claim(cast.alice)
    bad = api(cast.alice).post(f"/api/work/assignments/{second.pk}/return", {"telemetry": {"key": -3}}, format="json")
    assert bad.status_code == 400 and "key" in json.dumps(bad.json())
    second.refresh_from_db()
    assert second.status == AssignmentStatus.CLAIMED
    good = api(cast.alice).post(f"/api/work/assignments/{second.pk}/return", {"telemetry": {"key": 3}}, format="json")
    assert good.status_code == 200 and stored(second)["key"] == 3


def test_the_work_api_takes_bounded_telemetry_and_says_what_is_wrong(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    answers = {str(k[5:]): v for k, v in form_answers(assignment).items()}
    url = f"/api/work/assignments/{assignment.pk}/submit"

    too_many = api(cast.alice).post(url, {"answers": answers, "telemetry": {"pastes": [1] * 51}}, format="json")
    assert too_many.status_code == 400
    assert "pastes" in too_many.json()["telemetry"] or "pastes" in json.dumps(too_many.json())
    unknown = api(cast.alice).post(url, {"answers": answers, "telemetry": {"typed": "words"}}, format="json")
    assert unknown.status_code == 400 and "unknown fields: typed" in json.dumps(unknown.json())
    inconsistent = api(cast.alice).post(
        url, {"answers": answers, "telemetry": {"away_ms": 1, "away_answering_ms": 5}}, format="json"
    )
    assert inconsistent.status_code == 400 and "cannot exceed" in json.dumps(inconsistent.json())
    assert not AssignmentTelemetry.objects.exists() and not Answer.objects.exists()

    response = api(cast.alice).post(url, {"answers": answers, "telemetry": AGENT}, format="json")
    assert response.status_code == 200
    assert stored(assignment)["item_ms"] == [4000, 900, 910]
    schema = api(cast.researcher).get("/api/schema/", {"format": "json"})
    assert schema.status_code == 200
    bounds = json.loads(schema.content)["components"]["schemas"]["WorkTelemetryIn"]["properties"]
    assert bounds["pastes"]["maxItems"] == 50 and bounds["key"]["maximum"] == 100_000


def test_without_telemetry_api_work_is_stored_as_before(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    answers = {str(k[5:]): v for k, v in form_answers(assignment).items()}
    response = api(cast.alice).post(
        f"/api/work/assignments/{assignment.pk}/submit", {"answers": answers}, format="json"
    )
    assert response.status_code == 200 and not AssignmentTelemetry.objects.exists()


def _mturk_page(client: Client, posting: Any, worker: str, assignment_id: str) -> str:
    url = (
        f"/mturk/hit/{posting.hit.public_token}/?assignmentId={assignment_id}&hitId={posting.external_id}"
        f"&workerId={worker}&turkSubmitTo=https://workersandbox.mturk.com"
    )
    return client.get(url).content.decode()


def _token(html: str) -> str:
    match = re.search(r'name="token" value="([^"]*)"', html)
    assert match
    return match.group(1)


def test_mturk_telemetry_is_stored_but_counts_for_nothing_until_a_sync_confirms_the_work() -> None:
    (posting,) = publish_locally(make_crowd_batch(hits=1))
    client = Client()
    html = _mturk_page(client, posting, "FORGED", "A1")
    assignment = Assignment.objects.get()
    data = {"assignmentId": "A1", "token": _token(html), **form_answers(assignment), "telemetry": json.dumps(AGENT)}

    bad = client.post(f"/mturk/hit/{posting.hit.public_token}/", {**data, "telemetry": "[1, 2]"})
    assert bad.status_code == 400 and "telemetry must be an object" in bad.content.decode()
    response = client.post(f"/mturk/hit/{posting.hit.public_token}/", data)
    assert response.status_code == 200
    assert stored(assignment)["item_ms"] == [4000, 900, 910]

    benchmark = posting.hit.batch.benchmark
    # Unconfirmed: neither the signals nor the statistics see it.
    assert submitted_work(benchmark=benchmark) == []
    assert interaction_summary(benchmark=benchmark)["with_telemetry"] == 0
    assert assignment_confirm(assignment=assignment, external_status="Submitted")
    [work] = submitted_work(benchmark=benchmark)
    assert work.telemetry is not None and work.telemetry.input_events == 0
    summary = interaction_summary(benchmark=benchmark)
    assert summary["with_telemetry"] == 1 and summary["signals"]["no_input"] == {"assignments": 1, "share": 1.0}


def test_a_pledge_is_asked_before_the_first_hit_and_recorded_per_worker_and_benchmark(cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 2)
    mitigations_update(benchmark=benchmark, pledge=True, block_copy_paste=True, notice=True)
    assignment = claim(cast.alice)
    client = logged_in(cast.alice)
    page = client.get(f"/work/assignments/{assignment.pk}/").content.decode()
    assert 'name="pledge"' in page and "I will answer myself, without AI tools." in page
    assert 'data-block-copy-paste="1"' in page and "context-text no-copy" in page
    assert "Do not use AI tools" in page

    refused = client.post(f"/work/assignments/{assignment.pk}/", form_answers(assignment))
    assert refused.status_code == 400 and "without AI tools" in refused.content.decode()
    assert not Answer.objects.exists() and not Pledge.objects.exists()
    response = client.post(f"/work/assignments/{assignment.pk}/", {**form_answers(assignment), "pledge": "yes"})
    assert response.status_code == 302
    pledge = Pledge.objects.get()
    assert (pledge.worker.external_id, pledge.benchmark, pledge.assignment) == ("alice", benchmark, assignment)

    second = claim(cast.alice)
    page = client.get(f"/work/assignments/{second.pk}/").content.decode()
    assert 'name="pledge"' not in page
    assert client.post(f"/work/assignments/{second.pk}/", form_answers(second)).status_code == 302
    assert Pledge.objects.count() == 1

    # Through the API too: another annotator must pledge in the request.
    third = claim(cast.bob)
    answers = {str(k[5:]): v for k, v in form_answers(third).items()}
    url = f"/api/work/assignments/{third.pk}/submit"
    missing = api(cast.bob).post(url, {"answers": answers}, format="json")
    assert missing.status_code == 400 and "without AI tools" in missing.json()["detail"]
    assert api(cast.bob).post(url, {"answers": answers, "pledge": True}, format="json").status_code == 200
    assert pledge_given(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)


def test_a_pledge_made_with_unconfirmed_crowd_work_pledges_for_nobody() -> None:
    batch = make_crowd_batch(hits=1)
    (posting,) = publish_locally(batch)
    mitigations_update(benchmark=batch.benchmark, pledge=True)
    client = Client()
    html = _mturk_page(client, posting, "VICTIM", "A1")
    assert 'name="pledge"' in html
    assignment = Assignment.objects.get()
    data = {"assignmentId": "A1", "token": _token(html), **form_answers(assignment), "pledge": "yes"}
    assert client.post(f"/mturk/hit/{posting.hit.public_token}/", data).status_code == 200
    victim = Worker.objects.get(external_id="VICTIM")
    assert Pledge.objects.filter(worker=victim).exists()
    assert not pledge_given(worker=victim, benchmark=batch.benchmark)
    assert assignment_confirm(assignment=assignment, external_status="Submitted")
    assert pledge_given(worker=victim, benchmark=batch.benchmark)


def test_without_mitigations_the_page_shows_none_of_them(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    page = logged_in(cast.alice).get(f"/work/assignments/{assignment.pk}/").content.decode()
    assert 'name="pledge"' not in page and "data-block-copy-paste" not in page and "Do not use AI tools" not in page
    assert "This page records how you work" in page
