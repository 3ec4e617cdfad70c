"""Annotators flag a HIT or a row without returning it; researchers see the flags (docs/annotator.md)."""

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from hits.models import Assignment, AssignmentStatus, HITFlag, HITFlagReason, HITItem
from hits.services import FlagInvalid, hit_flag_set
from schemes.swords.items import ItemKind
from tests.base import Cast, logged_in
from tests.crowds.crowd_helpers import make_batch as make_mturk_batch
from tests.crowds.crowd_helpers import publish_locally
from tests.hits.factories import claim, make_benchmark, make_hits

pytestmark = pytest.mark.django_db


def candidate_row(assignment: Assignment) -> HITItem:
    return HITItem.objects.filter(hit=assignment.hit, kind=ItemKind.CANDIDATE).order_by("position").first()  # type: ignore[return-value]


def test_an_annotator_flags_a_row_and_the_hit_stays_theirs(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    row = candidate_row(assignment)

    response = logged_in(cast.alice).post(
        reverse("work-flag", args=[assignment.pk]),
        {"item": str(row.pk), "reason": HITFlagReason.OFFENSIVE, "note": "  a slur in this sense  "},
        follow=True,
    )

    assert response.redirect_chain == [(reverse("work-assignment", args=[assignment.pk]), 302)]
    assert "your flag was sent to the researchers" in response.content.decode()
    flag = HITFlag.objects.get()
    assert (flag.assignment, flag.item, flag.reason, flag.note) == (
        assignment,
        row,
        HITFlagReason.OFFENSIVE,
        "a slur in this sense",
    )
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.CLAIMED


def test_flagging_again_replaces_the_reason_and_the_note_of_that_row_or_of_the_whole_hit(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    row = candidate_row(assignment)

    hit_flag_set(assignment=assignment, item_id=row.pk, reason=HITFlagReason.BROKEN)
    hit_flag_set(assignment=assignment, item_id=row.pk, reason=HITFlagReason.OTHER, note="a typo")
    hit_flag_set(assignment=assignment, reason=HITFlagReason.UNKNOWN_TARGET)
    hit_flag_set(assignment=assignment, reason=HITFlagReason.BROKEN, note="cut off")

    flags = {flag.item_id: (flag.reason, flag.note) for flag in HITFlag.objects.all()}
    assert flags == {row.pk: (HITFlagReason.OTHER, "a typo"), None: (HITFlagReason.BROKEN, "cut off")}


def test_a_flag_needs_a_listed_reason_a_row_of_this_hit_and_a_short_note(cast: Cast) -> None:
    hits = make_hits(make_benchmark(), 2)
    assignment = claim(cast.alice)
    other_hit = next(hit for hit in hits if hit.pk != assignment.hit_id)
    elsewhere = HITItem.objects.filter(hit=other_hit).first()
    assert elsewhere is not None

    with pytest.raises(FlagInvalid, match="one of the reasons"):
        hit_flag_set(assignment=assignment, reason="boring")
    with pytest.raises(FlagInvalid, match="not part of this HIT"):
        hit_flag_set(assignment=assignment, item_id=elsewhere.pk, reason=HITFlagReason.BROKEN)
    with pytest.raises(FlagInvalid, match="under 1000 characters"):
        hit_flag_set(assignment=assignment, reason=HITFlagReason.OTHER, note="x" * 1001)
    assert not HITFlag.objects.exists()

    response = logged_in(cast.alice).post(reverse("work-flag", args=[assignment.pk]), {"reason": "boring"})
    assert response.status_code == 400
    assert "Please choose one of the reasons listed." in response.content.decode()


def test_an_annotator_cannot_flag_anothers_assignment(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    bobs = claim(cast.bob)

    response = logged_in(cast.alice).post(reverse("work-flag", args=[bobs.pk]), {"reason": HITFlagReason.BROKEN})

    assert response.status_code == 404
    assert not HITFlag.objects.exists()


def test_researchers_see_the_flags_on_the_hit_page_and_in_the_benchmarks_list(cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 1)
    assignment = claim(cast.alice)
    row = candidate_row(assignment)
    hit_flag_set(assignment=assignment, item_id=row.pk, reason=HITFlagReason.OFFENSIVE, note="<b>rude</b>")
    hit_flag_set(assignment=assignment, reason=HITFlagReason.UNKNOWN_TARGET)
    researcher = logged_in(cast.researcher)

    hit_page = researcher.get(reverse("hit-detail", args=[assignment.hit_id])).content.decode()
    listing = researcher.get(reverse("benchmark-flags", args=[benchmark.name])).content.decode()
    home = researcher.get(reverse("benchmark-detail", args=[benchmark.name])).content.decode()

    for html in (hit_page, listing):
        assert "Offensive content" in html and "I do not know the highlighted word" in html
        assert "&lt;b&gt;rude&lt;/b&gt;" in html and "<b>rude" not in html
        assert f"{row.position}: {row.text}" in html and "the whole HIT" in html
        assert reverse("candidate-exclude", args=[row.candidate_id]) in html
    assert reverse("hit-detail", args=[assignment.hit_id]) in listing
    assert "Flags from annotators (2)" in home
    assert logged_in(cast.alice).get(reverse("benchmark-flags", args=[benchmark.name])).status_code == 403


def _hidden(html: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert match, f"no hidden field {name}"
    return match.group(1)


def test_the_mturk_page_takes_a_flag_signed_for_its_assignment_only() -> None:
    (posting,) = publish_locally(make_mturk_batch(hits=1))
    query = f"assignmentId=A1&hitId={posting.external_id}&workerId=W1&turkSubmitTo=https://workersandbox.mturk.com"
    url = f"/mturk/hit/{posting.hit.public_token}/"
    client = Client()
    html = client.get(f"{url}?{query}").content.decode()
    token = _hidden(html, "token")
    flag = {"flag": "1", "assignmentId": "A1", "reason": HITFlagReason.BROKEN, "note": "half a sentence"}

    forged = client.post(url, {**flag, "token": "forged"})
    response = client.post(url, {**flag, "token": token})

    assert forged.status_code == 403
    assert response.status_code == 200
    assert "your flag was sent to the researchers" in response.content.decode()
    stored = HITFlag.objects.get()
    assert (stored.assignment.external_id, stored.item, stored.note) == ("A1", None, "half a sentence")
    assert stored.assignment.status == AssignmentStatus.CLAIMED


def test_the_work_api_flags_through_the_same_service(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.carol)
    row = candidate_row(assignment)
    client = APIClient()
    client.force_authenticate(cast.carol)
    url = reverse("api-work-flag", args=[assignment.pk])

    done = client.post(url, {"item": row.pk, "reason": "offensive", "note": "rude"}, format="json")
    unknown = client.post(url, {"reason": "boring"}, format="json")
    elsewhere = client.post(url, {"item": 10**6, "reason": "broken"}, format="json")

    assert done.status_code == 200
    assert (done.json()["item"], done.json()["reason"], done.json()["note"]) == (row.pk, "offensive", "rude")
    assert unknown.status_code == 400 and elsewhere.status_code == 400
    assert elsewhere.json()["detail"] == "That row is not part of this HIT."
    assert HITFlag.objects.get().item == row
    other = APIClient()
    other.force_authenticate(cast.alice)
    assert other.post(url, {"reason": "broken"}, format="json").status_code == 404
