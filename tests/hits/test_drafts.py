"""Drafts and time on page kept on the server (docs/design.md §4, "Drafts across devices"): bounds,
forgery, idempotent time reports, the submission's time, and the end of a draft."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from hits.models import Assignment, AssignmentDraft, AssignmentStatus
from hits.services import assignment_return, assignment_submit, assignments_expire_overdue
from tests.base import Cast
from tests.hits.factories import claim as claim_hit
from tests.hits.factories import honest_answers, make_batch, make_benchmark, make_hits
from tests.hits.test_work_api import api, honest

pytestmark = pytest.mark.django_db


def claim(client: APIClient) -> dict[str, Any]:
    return client.post("/api/work/claim", {}, format="json").json()


def report(view: str = "view-aaaa-1", ms: int = 1000, **more: Any) -> dict[str, Any]:
    return {"view": view, "ms": ms, **more}


def draft_url(assignment_id: int) -> str:
    return f"/api/work/assignments/{assignment_id}/draft"


def backdate(assignment_id: int, minutes: int) -> None:
    """The claim as if made ``minutes`` ago (time on page is bounded by the time since the claim)."""
    Assignment.objects.filter(pk=assignment_id).update(claimed_at=timezone.now() - timedelta(minutes=minutes))


@pytest.fixture
def claimed(cast: Cast) -> dict[str, Any]:
    make_hits(make_benchmark(), 1)
    found = claim(api(cast.alice))
    backdate(found["id"], 20)
    return found


def test_a_draft_saved_on_one_device_is_read_back_on_another(cast: Cast, claimed: dict[str, Any]) -> None:
    first_item = claimed["items"][0]["id"]
    answers = [{"name": f"item-{first_item}", "value": "accept"}]
    state = {"telemetry": {"v": 1, "pointer": 3, "loads": 1}, "first": [0], "last_first_ms": 900}

    saved = api(cast.alice).post(draft_url(claimed["id"]), report(ms=4000, answers=answers, state=state), format="json")
    read = api(cast.alice).get(draft_url(claimed["id"]))

    assert saved.status_code == read.status_code == 200
    body = read.json()
    assert body["answers"] == answers
    assert body["state"]["first"] == [0]
    assert body["state"]["telemetry"]["pointer"] == 3
    assert body["seconds"] == 4.0


def test_no_draft_yet_answers_no_content(cast: Cast, claimed: dict[str, Any]) -> None:
    assert api(cast.alice).get(draft_url(claimed["id"])).status_code == 204


def test_repeated_and_late_reports_of_a_view_add_nothing(cast: Cast, claimed: dict[str, Any]) -> None:
    client = api(cast.alice)
    url = draft_url(claimed["id"])
    client.post(url, report("phone-view-1", 3000), format="json")
    client.post(url, report("phone-view-1", 3000), format="json")
    # A report that arrives after a later one (a slow network) does not take time back either.
    client.post(url, report("phone-view-1", 5000), format="json")
    client.post(url, report("phone-view-1", 4000), format="json")
    body = client.post(url, report("laptop-view-1", 2500), format="json").json()

    assert body["views"] == {"phone-view-1": 5000, "laptop-view-1": 2500}
    assert body["seconds"] == 7.5


def test_an_absurd_time_is_clipped_to_the_assignment_duration(cast: Cast, claimed: dict[str, Any]) -> None:
    body = api(cast.alice).post(draft_url(claimed["id"]), report(ms=10**12), format="json").json()

    assert body["seconds"] == 30 * 60  # the batch's assignment duration, 30 minutes


def test_the_submission_records_the_servers_total_when_the_page_knew_less(cast: Cast, claimed: dict[str, Any]) -> None:
    client = api(cast.alice)
    client.post(draft_url(claimed["id"]), report("phone-view-1", 60_000), format="json")
    client.post(draft_url(claimed["id"]), report("laptop-view-1", 30_000), format="json")

    submitted = client.post(
        f"/api/work/assignments/{claimed['id']}/submit",
        {"answers": honest(claimed), "seconds_on_page": 31.0},
        format="json",
    )

    assert submitted.status_code == 200
    assert Assignment.objects.get(pk=claimed["id"]).seconds_on_page == 90.0
    assert not AssignmentDraft.objects.filter(assignment_id=claimed["id"]).exists()


def test_the_page_count_stands_when_it_holds_more_than_the_server(cast: Cast, claimed: dict[str, Any]) -> None:
    client = api(cast.alice)
    client.post(draft_url(claimed["id"]), report("phone-view-1", 60_000), format="json")

    client.post(
        f"/api/work/assignments/{claimed['id']}/submit",
        {"answers": honest(claimed), "seconds_on_page": 75.0},
        format="json",
    )

    assert Assignment.objects.get(pk=claimed["id"]).seconds_on_page == 75.0


def test_the_servers_total_never_exceeds_the_time_since_the_claim(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    found = claim(client)
    backdate(found["id"], 2)
    client.post(draft_url(found["id"]), report("view-one-aa", 29 * 60_000), format="json")

    client.post(
        f"/api/work/assignments/{found['id']}/submit",
        {"answers": honest(found), "seconds_on_page": 10.0},
        format="json",
    )

    assert Assignment.objects.get(pk=found["id"]).seconds_on_page == pytest.approx(120, abs=5)


def test_a_draft_for_someone_elses_assignment_is_refused_and_leaves_the_holders(
    cast: Cast, claimed: dict[str, Any]
) -> None:
    holder = api(cast.alice)
    holder.post(
        draft_url(claimed["id"]),
        report("alice-view-1", 5000, answers=[{"name": "item-1", "value": "accept"}]),
        format="json",
    )

    forged = api(cast.bob).post(
        draft_url(claimed["id"]),
        report("alice-view-1", 10**9, answers=[{"name": "item-1", "value": "reject"}]),
        format="json",
    )
    forged_invalid = api(cast.bob).post(draft_url(claimed["id"]), {"view": "x"}, format="json")
    peeked = api(cast.bob).get(draft_url(claimed["id"]))

    assert forged.status_code == forged_invalid.status_code == peeked.status_code == 404
    body = holder.get(draft_url(claimed["id"])).json()
    assert body["views"] == {"alice-view-1": 5000}
    assert body["answers"] == [{"name": "item-1", "value": "accept"}]


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        ({"ms": 5}, "view"),
        (report(view="short"), "view"),
        (report(ms=-1), "ms"),
        ({**report(), "ms": 1.5}, "ms"),
        (report(answers=[{"name": "name", "value": "accept"}]), "answers"),
        (report(answers=[{"name": "item-1"}]), "answers"),
        (report(answers="item-1=accept"), "answers"),
        (report(state={"notes": "x"}), "notes"),
        (report(state={"telemetry": {"pointer": -1}}), "pointer"),
        (report(state={"telemetry": {"away_ms": 1, "away_answering_ms": 2}}), "away_answering_ms"),
        (report(extra=1), "extra"),
    ],
)
def test_a_malformed_draft_is_refused_naming_the_field(
    cast: Cast, claimed: dict[str, Any], payload: dict[str, Any], named: str
) -> None:
    response = api(cast.alice).post(draft_url(claimed["id"]), payload, format="json")

    assert response.status_code == 400
    assert named in response.json()["detail"]
    assert not AssignmentDraft.objects.filter(assignment_id=claimed["id"]).exists()


@override_settings(DRAFT_MAX_BYTES=2000)
def test_a_draft_past_its_size_is_refused(cast: Cast, claimed: dict[str, Any]) -> None:
    response = api(cast.alice).post(
        draft_url(claimed["id"]), report(answers=[{"name": "item-1", "value": "x" * 3000}]), format="json"
    )

    assert response.status_code == 400
    assert "DRAFT_MAX_BYTES" in response.json()["detail"]


@override_settings(DRAFT_MAX_VIEWS=2)
def test_views_past_the_limit_are_refused_and_known_ones_still_count(cast: Cast, claimed: dict[str, Any]) -> None:
    client = api(cast.alice)
    url = draft_url(claimed["id"])
    client.post(url, report("view-one-aa", 1000), format="json")
    client.post(url, report("view-two-aa", 1000), format="json")

    refused = client.post(url, report("view-three", 1000), format="json")
    known = client.post(url, report("view-two-aa", 2000), format="json")

    assert refused.status_code == 400
    assert "DRAFT_MAX_VIEWS" in refused.json()["detail"]
    assert known.json()["seconds"] == 3.0


def test_drafts_are_throttled(cast: Cast, claimed: dict[str, Any], settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "draft": "3/minute"},
    }
    client = api(cast.alice)
    codes = [client.post(draft_url(claimed["id"]), report(), format="json").status_code for _ in range(4)]

    assert codes == [200, 200, 200, 429]


def test_a_returned_or_expired_claim_loses_its_draft_and_takes_no_more(cast: Cast) -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark, assignments_per_hit=1)
    make_hits(benchmark, 2, batch=batch)
    client = api(cast.alice)

    first = claim(client)
    client.post(draft_url(first["id"]), report(), format="json")
    assignment_return(assignment=Assignment(pk=first["id"]))
    assert not AssignmentDraft.objects.filter(assignment_id=first["id"]).exists()
    assert client.post(draft_url(first["id"]), report(), format="json").status_code == 404

    second = claim(client)
    client.post(draft_url(second["id"]), report(), format="json")
    Assignment.objects.filter(pk=second["id"]).update(deadline=timezone.now() - timedelta(seconds=1))
    assignments_expire_overdue()
    assert Assignment.objects.get(pk=second["id"]).status == AssignmentStatus.EXPIRED
    assert not AssignmentDraft.objects.filter(assignment_id=second["id"]).exists()


def test_a_submission_without_a_draft_keeps_the_pages_count(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    claimed = claim_hit(cast.alice)
    backdate(claimed.pk, 5)

    submitted = assignment_submit(assignment=claimed, answers=honest_answers(hit), seconds_on_page=42.0)

    assert submitted.seconds_on_page == 42.0
