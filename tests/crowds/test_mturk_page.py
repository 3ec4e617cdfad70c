"""The ExternalQuestion page through Django's test client: preview, accept, submit, frame headers, CSRF."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from annotation.models import Label, Worker
from hits.models import HIT, Answer, Assignment, AssignmentStatus, HITItem
from hits.services import assignment_confirm
from schemes.swords.items import ItemKind
from tests.crowds.crowd_helpers import make_batch, publish_locally

pytestmark = pytest.mark.django_db

SANDBOX_SUBMIT = "https://workersandbox.mturk.com"


@pytest.fixture
def posting() -> Any:
    (posting,) = publish_locally(make_batch(hits=1))
    return posting


def _url(posting: Any, **params: str) -> str:
    query = {
        "assignmentId": "A1",
        "hitId": posting.external_id,
        "workerId": "W1",
        "turkSubmitTo": SANDBOX_SUBMIT,
        **params,
    }
    return f"/mturk/hit/{posting.hit.public_token}/?" + "&".join(f"{key}={value}" for key, value in query.items())


def _answers(hit: HIT, *, value: str = "accept") -> dict[str, str]:
    answers = {}
    for item in HITItem.objects.filter(hit=hit):
        answers[f"item-{item.pk}"] = "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else value
    return answers


def _hidden(html: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert match, f"no hidden field {name}"
    return match.group(1)


def test_the_preview_shows_the_hit_read_only_and_may_be_framed_by_mturk_only(posting: Any) -> None:
    response = Client().get(_url(posting, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "This is a preview" in html
    assert 'type="submit"' not in html and 'name="token"' not in html
    assert html.count("disabled") >= 3 * 5
    # Contexts are data: escaped, never markup.
    assert "&lt;b&gt;solved&lt;/b&gt; it &amp; left" in html
    assert "X-Frame-Options" not in response.headers
    policy = dict(part.split(" ", 1) for part in response.headers["Content-Security-Policy"].split("; "))
    assert policy["frame-ancestors"].startswith("'self' ")
    assert "https://workersandbox.mturk.com" in policy["frame-ancestors"]
    assert policy["script-src"] == "'self'"
    assert not Assignment.objects.exists()


def test_other_pages_still_refuse_to_be_framed(client: Client) -> None:
    assert client.get("/accounts/login/").headers["X-Frame-Options"] == "DENY"


def test_an_accepted_hit_is_submitted_through_the_queue_service_then_handed_to_mturk(posting: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get(_url(posting))
    assert page.status_code == 200
    html = page.content.decode()
    assignment = Assignment.objects.get()
    assert (assignment.external_id, assignment.worker.external_id, assignment.status) == ("A1", "W1", "claimed")
    assert _hidden(html, "assignmentId") == "A1"
    data = {"assignmentId": "A1", "token": _hidden(html, "token"), "seconds_on_page": "12.5", **_answers(posting.hit)}
    response = client.post(f"/mturk/hit/{posting.hit.public_token}/", data)
    body = response.content.decode()
    assert response.status_code == 200, body
    assert f'action="{SANDBOX_SUBMIT}/mturk/externalSubmit"' in body
    assert 'name="assignmentId" value="A1"' in body
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    assert Answer.objects.filter(assignment=assignment).count() == 5
    assert "Thank you, your answers are saved" in body
    # Unconfirmed: nothing counts until a sync finds the assignment in MTurk's list.
    assert not Label.objects.exists() and assignment.controls_total == 0
    # Submitting twice (a stale second tab) stores one set of answers, says so, and hands the
    # assignment to MTurk again.
    again = client.post(f"/mturk/hit/{posting.hit.public_token}/", {**data, **_answers(posting.hit, value="reject")})
    assert again.status_code == 200 and Answer.objects.count() == 5
    assert "your first answers were kept" in again.content.decode()
    assert assignment_confirm(assignment=assignment, external_status="Submitted")
    assignment.refresh_from_db()
    assert Label.objects.filter(assignment=assignment).count() == 3
    assert assignment.controls_correct == assignment.controls_total == 2
    assert set(Label.objects.values_list("value", flat=True)) == {"accept"}
    # So does reopening the page after saving (if the first hand-over failed).
    assert "/mturk/externalSubmit" in client.get(_url(posting)).content.decode()


def test_the_page_tells_the_worker_mturks_own_deadline_and_is_never_cached(posting: Any) -> None:
    response = Client().get(_url(posting))
    html = response.content.decode()
    assignment = Assignment.objects.get()
    mturks = assignment.claimed_at + posting.hit.batch.assignment_duration

    # The platform holds the slot two minutes longer so a last-second submit on MTurk's clock is taken,
    # but the worker is told MTurk's own deadline.
    assert assignment.deadline - mturks == timedelta(minutes=2)
    assert f'datetime="{mturks.isoformat()}"' in html
    seconds_left = int(re.search(r'data-seconds-left="(\d+)"', html).group(1))  # type: ignore[union-attr]
    assert 1790 <= seconds_left <= 1800
    # Rounded up: 1,790 to 1,800 seconds left read as 30 minutes.
    assert "Please submit within 30 minutes" in html
    assert "MTurk will not take it any more" in html
    assert "no-store" in response.headers["Cache-Control"]


def test_a_missing_answer_shows_the_page_again_with_the_rows_named(posting: Any) -> None:
    client = Client()
    html = client.get(_url(posting)).content.decode()
    answers = _answers(posting.hit)
    answers.pop(next(iter(answers)))
    response = client.post(
        f"/mturk/hit/{posting.hit.public_token}/", {"assignmentId": "A1", "token": _hidden(html, "token"), **answers}
    )
    assert response.status_code == 400
    assert "Please answer every row" in response.content.decode()
    assert Assignment.objects.get().status == AssignmentStatus.CLAIMED


def test_a_post_without_a_valid_token_stores_nothing(posting: Any) -> None:
    client = Client()
    client.get(_url(posting))
    forged = client.post(
        f"/mturk/hit/{posting.hit.public_token}/", {"assignmentId": "A1", "token": "x", **_answers(posting.hit)}
    )
    assert forged.status_code == 403
    assert not Label.objects.exists()


def test_a_token_for_one_assignment_cannot_submit_another(posting: Any) -> None:
    client = Client()
    html = client.get(_url(posting)).content.decode()
    token = _hidden(html, "token")
    client.get(_url(posting, assignmentId="A2", workerId="W2"))
    response = client.post(
        f"/mturk/hit/{posting.hit.public_token}/", {"assignmentId": "A2", "token": token, **_answers(posting.hit)}
    )
    assert response.status_code == 403
    assert not Label.objects.exists()


@pytest.mark.parametrize(
    "submit_to", ["https://evil.example.com", "javascript:alert(1)", "https://workersandbox.mturk.com/elsewhere"]
)
def test_the_page_never_sends_work_to_a_site_other_than_mturk(posting: Any, submit_to: str) -> None:
    response = Client().get(_url(posting, turkSubmitTo=submit_to))
    assert response.status_code == 400
    assert not Assignment.objects.exists()


def test_refusals_are_shown_inside_the_frame(posting: Any) -> None:
    Worker.objects.create(kind="mturk", external_id="W1", blocked=True)
    response = Client().get(_url(posting))
    assert response.status_code == 409
    assert "You cannot take this HIT" in response.content.decode()
    assert "Content-Security-Policy" in response.headers


def test_local_hits_have_no_external_page() -> None:
    hit = make_batch(name="local", backend="local", hits=1).hits.get()
    assert Client().get(f"/mturk/hit/{hit.public_token}/").status_code == 404
