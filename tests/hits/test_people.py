"""People managed in the app (docs/people.md): accounts one by one or from a CSV file (all or none,
refusals named by line and field), one-time sign-in links and password resets, a batch's named
annotators, who is active, and the API and command that call the same services."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.access import access_grant
from annotation.importers.errors import ImportFailed
from annotation.models import Activity, ActivityKind, Role, Worker
from annotation.roles import ANNOTATORS
from hits.models import HIT, Assignment, AssignmentStatus, HITReservation
from hits.people import (
    NamingRefused,
    PersonInvalid,
    annotator_create,
    annotators_import,
    batch_annotators_add,
    person_password_reset,
    person_signin_link,
)
from tests.base import PASSWORD, Cast, make_user
from tests.hits.factories import make_batch, make_benchmark, make_hit, make_hits, make_target

pytestmark = pytest.mark.django_db


def csv_file(text: str) -> io.BytesIO:
    return io.BytesIO(text.encode())


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def path_of(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url)


def test_an_account_made_here_is_an_annotators_with_a_worker_and_no_password(cast: Cast) -> None:
    person = annotator_create(username="ana", email="ana@example.org", name="Ana Lima", by=cast.researcher)
    assert person.groups.filter(name=ANNOTATORS).exists() and not person.is_staff
    assert not person.has_usable_password()
    assert person.first_name == "Ana Lima"
    assert Worker.objects.get(user=person).external_id == "ana"
    with pytest.raises(PersonInvalid) as taken:
        annotator_create(username="ANA", email="other@example.org")
    assert taken.value.field == "username"
    with pytest.raises(PersonInvalid) as bad_email:
        annotator_create(username="li", email="not-an-address")
    assert bad_email.value.field == "email"
    assert not User.objects.filter(username="li").exists()


def test_a_csv_file_makes_every_account_or_none_naming_the_line_and_field(cast: Cast) -> None:
    bad = "username,email,name\nana,ana@example.org,Ana\nli,li-at-example.org,Li\n"
    with pytest.raises(ImportFailed) as refused:
        annotators_import(upload=csv_file(bad), file="people.csv")
    assert (refused.value.file, refused.value.line, refused.value.field) == ("people.csv", 3, "email")
    assert "people.csv, line 3, field 'email'" in str(refused.value)
    assert not User.objects.filter(username="ana").exists()

    twice = "email,username\nana@example.org,ana\nANA@example.org,bo\n"
    with pytest.raises(ImportFailed) as repeated:
        annotators_import(upload=csv_file(twice), file="people.csv")
    assert (repeated.value.line, repeated.value.field) == (3, "email") and "line 2" in str(repeated.value)

    with pytest.raises(ImportFailed) as header:
        annotators_import(upload=csv_file("username,mail\nana,ana@example.org\n"), file="people.csv")
    assert header.value.line == 1

    with pytest.raises(ImportFailed) as existing:
        annotators_import(upload=csv_file("username,email\nzed,zed@example.org\nalice,a2@example.org\n"), file="p.csv")
    assert (existing.value.line, existing.value.field) == (3, "username")
    assert not User.objects.filter(username="zed").exists()

    made = annotators_import(upload=csv_file("username,email\nana,ana@example.org\nli,li@example.org\n"), file="p.csv")
    assert [person.username for person in made] == ["ana", "li"]
    assert all(person.groups.filter(name=ANNOTATORS).exists() for person in made)


def test_a_csv_file_past_the_row_limit_is_refused(cast: Cast, settings: object) -> None:
    settings.PEOPLE_IMPORT_MAX_ROWS = 2  # type: ignore[attr-defined]
    rows = "".join(f"p{n},p{n}@example.org\n" for n in range(3))
    with pytest.raises(ImportFailed) as refused:
        annotators_import(upload=csv_file("username,email\n" + rows), file="p.csv")
    assert "PEOPLE_IMPORT_MAX_ROWS=2" in str(refused.value) and refused.value.line == 4
    assert not User.objects.filter(username="p0").exists()


def test_a_sign_in_link_sets_a_password_signs_in_and_works_once(cast: Cast) -> None:
    person = annotator_create(username="ana", email="ana@example.org")
    link = person_signin_link(person=person, send=True)
    assert link.emailed and len(mail.outbox) == 1
    assert link.url in mail.outbox[0].body and mail.outbox[0].to == ["ana@example.org"]

    visitor = Client()
    opened = visitor.get(path_of(link.url), follow=True)
    assert "Choose your password" in opened.content.decode()
    form_url = opened.redirect_chain[-1][0]
    done = visitor.post(form_url, {"new_password1": "a long new secret 42", "new_password2": "a long new secret 42"})
    assert done.status_code == 302
    assert visitor.get(reverse("work-home")).status_code == 200  # signed in as ana
    person.refresh_from_db()
    assert person.check_password("a long new secret 42")

    again = Client().get(path_of(link.url), follow=True)
    assert "This link no longer works" in again.content.decode()


def test_a_reset_stops_the_old_password_and_shows_no_password(cast: Cast) -> None:
    link = person_password_reset(person=cast.alice, send=False)
    cast.alice.refresh_from_db()
    assert not cast.alice.check_password(PASSWORD)
    assert not link.emailed and "/accounts/signin/" in link.url
    assert not Client().login(username="alice", password=PASSWORD)


def test_a_researchers_account_gets_no_link_and_someone_elses_annotator_needs_a_role(cast: Cast) -> None:
    page = signed_in(cast.researcher)
    other = make_user("rex", researcher=True)
    assert page.post(reverse("people-signin-link", args=[other.pk])).status_code == 404
    with pytest.raises(PersonInvalid):
        person_signin_link(person=other)
    # Alice signed in once and worked only in another researcher's benchmark: not rita's to link.
    theirs = make_benchmark("theirs")
    access_grant(benchmark=theirs, user=other, role=Role.OWNER, by=None)
    worked(cast.alice, make_hits(theirs, 1)[0], days_ago=1)
    cast.alice.last_login = timezone.now()
    cast.alice.save()
    assert page.post(reverse("people-signin-link", args=[cast.alice.pk])).status_code == 403
    assert signed_in(other).post(reverse("people-signin-link", args=[cast.alice.pk])).status_code == 200
    # An account that never signed in is nobody's yet: any researcher sends its link.
    assert page.post(reverse("people-signin-link", args=[cast.bob.pk])).status_code == 200


def worked(user: User, hit: HIT, *, days_ago: float) -> Assignment:
    moment = timezone.now() - timedelta(days=days_ago)
    return Assignment.objects.create(
        hit=hit,
        worker=Worker.objects.get(user=user),
        status=AssignmentStatus.SUBMITTED,
        claimed_at=moment - timedelta(minutes=5),
        deadline=moment + timedelta(minutes=25),
        submitted_at=moment,
    )


def test_the_people_page_shows_who_is_active_in_the_researchers_benchmarks(cast: Cast) -> None:
    mine = make_benchmark("mine")
    hits = make_hits(mine, 3)
    worked(cast.alice, hits[0], days_ago=0.5)
    worked(cast.alice, hits[1], days_ago=3)
    worked(cast.alice, hits[2], days_ago=20)
    worked(cast.bob, hits[0], days_ago=2)
    other = make_user("rex", researcher=True)
    private = make_benchmark("private")
    access_grant(benchmark=private, user=other, role=Role.OWNER, by=None)
    worked(cast.alice, make_hits(private, 1)[0], days_ago=0.1)  # not rita's to count

    response = signed_in(cast.researcher).get(reverse("people"))
    assert response.status_code == 200
    rows = {row.username: row for row, _ in response.context["rows"]}
    assert "rita" not in rows and "rex" not in rows  # researchers are not people to manage
    alice, bob = rows["alice"], rows["bob"]
    assert (alice.submitted_day, alice.submitted_week, alice.submitted_total) == (1, 2, 3)
    assert (bob.submitted_day, bob.submitted_week, bob.submitted_total) == (0, 1, 1)
    assert rows["carol"].submitted_total == 0
    api = APIClient()
    api.force_authenticate(cast.researcher)
    listed = {row["username"]: row for row in api.get("/api/people/?q=ali").json()["results"]}
    assert list(listed) == ["alice"] and listed["alice"]["submitted_week"] == 2
    assert listed["alice"]["last_seen"] is not None


def test_the_pages_make_one_account_and_a_csv_of_them(cast: Cast) -> None:
    page = signed_in(cast.researcher)
    made = page.post(reverse("people"), {"username": "ana", "email": "ana@example.org", "name": ""})
    assert made.status_code == 200
    html = made.content.decode()
    assert "/accounts/signin/" in html and "ana" in html
    taken = page.post(reverse("people"), {"username": "ana", "email": "x@example.org"})
    assert taken.status_code == 400 and "is taken" in taken.content.decode()

    upload = io.BytesIO(b"username,email\nli,li@example.org\nbo,bo@@example.org\n")
    upload.name = "team.csv"
    refused = page.post(reverse("people-import"), {"file": upload})
    assert refused.status_code == 400
    assert "team.csv, line 3, field &#x27;email&#x27;" in refused.content.decode()
    assert not User.objects.filter(username="li").exists()
    good = io.BytesIO(b"username,email,name\nli,li@example.org,Li\nbo,bo@example.org,\n")
    good.name = "team.csv"
    sent = page.post(reverse("people-import"), {"file": good, "send": "on"})
    assert sent.status_code == 200 and len(mail.outbox) == 2
    assert set(User.objects.filter(username__in=["li", "bo"]).values_list("first_name", flat=True)) == {"Li", ""}


def test_a_password_reset_from_the_page_asks_first(cast: Cast) -> None:
    page = signed_in(cast.researcher)
    url = reverse("people-password-reset", args=[cast.carol.pk])
    asked = page.post(url)
    assert "Reset the password of carol?" in asked.content.decode()
    cast.carol.refresh_from_db()
    assert cast.carol.check_password(PASSWORD)
    done = page.post(url, {"confirmed": "yes"})
    assert done.status_code == 200 and "/accounts/signin/" in done.content.decode()
    cast.carol.refresh_from_db()
    assert not cast.carol.has_usable_password()


def test_the_api_makes_links_and_refuses_with_the_line_and_field(cast: Cast) -> None:
    api = APIClient()
    api.force_authenticate(cast.researcher)
    made = api.post("/api/people/", {"username": "ana", "email": "ana@example.org"}, format="json")
    assert made.status_code == 201 and "/accounts/signin/" in made.json()["url"]
    again = api.post("/api/people/", {"username": "ana", "email": "b@example.org"}, format="json")
    assert again.status_code == 400 and "username" in again.json()
    upload = io.BytesIO(b"username,email\nli,li@example.org\nli,l2@example.org\n")
    upload.name = "team.csv"
    refused = api.post("/api/people/import", {"file": upload}, format="multipart")
    body = refused.json()
    assert refused.status_code == 400 and (body["line"], body["field"]) == (3, "username")
    no_address = api.post(f"/api/people/{cast.alice.pk}/signin-link", {"send": True}, format="json")
    assert no_address.status_code == 400 and "no e-mail address" in no_address.json()["detail"]
    cast.alice.email = "alice@example.org"
    cast.alice.save()
    link = api.post(f"/api/people/{cast.alice.pk}/signin-link", {"send": True}, format="json")
    assert link.status_code == 200 and link.json()["emailed"] is True and len(mail.outbox) == 1
    annotator = APIClient()
    annotator.force_authenticate(cast.alice)
    assert annotator.get("/api/people/").status_code == 403


def test_a_person_is_named_for_a_batch_of_named_annotators(cast: Cast) -> None:
    benchmark = make_benchmark("experts")
    batch = make_batch(benchmark, assignments_per_hit=1)
    hits = [make_hit(batch, make_target(benchmark), assignments_required=1) for _ in range(2)]
    for hit in hits:
        hit.reserved = True
        hit.save(update_fields=["reserved"])
        HITReservation.objects.create(hit=hit, worker=cast.alice.worker)
    page = signed_in(cast.researcher)
    url = reverse("people-batch-add", args=[cast.bob.pk])
    asked = page.post(url, {"batch": batch.pk})
    assert "reserve the 2 HITs" in asked.content.decode()
    assert not HITReservation.objects.filter(worker=cast.bob.worker).exists()
    page.post(url, {"batch": batch.pk, "confirmed": "yes"})
    assert HITReservation.objects.filter(worker=cast.bob.worker).count() == 2
    assert [hit.assignments_required for hit in HIT.objects.filter(batch=batch)] == [2, 2]
    assert batch_annotators_add(batch=batch, workers=[cast.bob.worker]) == 0  # named already
    entry = Activity.objects.get(kind=ActivityKind.ANNOTATORS_NAMED)
    assert entry.result == {"batch": batch.pk, "workers": ["bob"], "places": 2}
    with pytest.raises(NamingRefused):
        batch_annotators_add(batch=make_hits(benchmark, 1)[0].batch, workers=[cast.bob.worker])


def test_the_command_makes_accounts_from_a_csv_file(cast: Cast, tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "team.csv"
    path.write_text("username,email\nana,ana@example.org\n")
    out = io.StringIO()
    call_command("annotators_create", "--csv", str(path), stdout=out)
    assert "ana\thttp" in out.getvalue() and "1 account made" in out.getvalue()
    assert User.objects.get(username="ana").groups.filter(name=ANNOTATORS).exists()


def test_an_account_without_a_role_is_told_what_it_is_and_not_sent_in_a_circle(db: None) -> None:
    nobody = User.objects.create_user("drifter", password=PASSWORD)
    client = signed_in(nobody)
    home = client.get("/", follow=True)
    html = home.content.decode()
    assert home.status_code == 403
    assert "neither an annotator" in html and "an annotator's account" not in html
    assert 'href="/work/"' not in html
    annotator_page = signed_in(make_user("ann")).get(reverse("benchmark-list")).content.decode()
    assert "an annotator's account" in annotator_page and 'href="/work/"' in annotator_page
