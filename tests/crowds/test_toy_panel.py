"""A crowd no product module names: the toy panel (tests/crowds/toy/, registered by the suite's
settings) publishes, syncs, approves and pays through the pages, the API and the commands, and its
members arrive by its own page (docs/architecture.md, "How to add a crowd")."""

from __future__ import annotations

import io
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Worker, worker_kind_choices
from crowds.interface import BONUS, NOTIFY, backend_choices, get_backend, remote_backend_names
from hits.models import HIT, Assignment, AssignmentStatus, Batch, Bonus, BonusStatus, HITItem
from schemes.swords.items import ItemKind
from tests.base import PASSWORD, Cast
from tests.crowds.crowd_helpers import make_batch
from tests.crowds.toy.panel import PANEL

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_panel() -> Iterator[None]:
    PANEL.reset()
    yield
    PANEL.reset()


@pytest.fixture
def researcher(cast: Cast) -> Client:
    client = Client()
    assert client.login(username="rita", password=PASSWORD)
    return client


def _work(hit: HIT, member: str, submission: str) -> None:
    """A panel member opens the HIT from the panel, answers it and hands it in."""
    client = Client()
    url = f"/toypanel/hit/{hit.public_token}/?member={member}&submission={submission}"
    page = client.get(url)
    assert page.status_code == 200
    assert f"item-{HITItem.objects.filter(hit=hit).first().pk}" in page.content.decode()  # type: ignore[union-attr]
    answers = {
        f"item-{item.pk}": "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in HITItem.objects.filter(hit=hit)
    }
    response = client.post(url, answers)
    assert response.status_code == 200, response.content.decode()


def test_the_registry_offers_the_panel_as_a_crowd_with_its_workers() -> None:
    assert ("toypanel", "Toy panel") in backend_choices()
    assert "toypanel" in remote_backend_names()
    assert ("toypanel", "toy panelist") in worker_kind_choices()
    batch = make_batch(backend="toypanel", hits=1)
    batch.full_clean()
    assert batch.get_backend_display() == "Toy panel"


def test_through_the_pages_the_panel_publishes_syncs_approves_pays_and_blocks(researcher: Client) -> None:
    batch = make_batch(backend="toypanel", hits=2, assignments=1)
    page = researcher.get(f"/batches/{batch.pk}/crowd/").content.decode()
    assert f"Batch {batch.pk} on Toy panel" in page
    assert "Toy panel posting:" in page and "Audience: students" in page
    # 2 assignments x ($0.10 + the panel's 10 %).
    assert "Publish 2 HITs for $0.22" in page

    publish = f"/batches/{batch.pk}/crowd/publish/"
    asked = researcher.post(publish, {"audience": "public", "confirm_money": "on"}).content.decode()
    assert "publish 2 HITs of batch" in asked and "the toy panel" in asked and "$0.22" in asked
    assert not PANEL.postings
    done = researcher.post(publish, {"audience": "public", "confirm_money": "on", "confirmed": "yes"}, follow=True)
    assert "Published: 2 HITs created, 0 already on Toy panel (posting batch-" in done.content.decode()
    batch.refresh_from_db()
    assert batch.external["audience"] == "public" and "published_at" in batch.external
    assert sorted(posting.hit_id for posting in PANEL.postings.values()) == sorted(
        batch.hits.values_list("pk", flat=True)
    )

    for hit in batch.hits.order_by("pk"):
        _work(hit, "M1", f"S-{hit.pk}")
    assert set(Assignment.objects.values_list("status", "worker__kind")) == {(AssignmentStatus.SUBMITTED, "toypanel")}

    researcher.post(f"/batches/{batch.pk}/crowd/sync/", {"decide_now": "on", "confirmed": "yes"}, follow=True)
    assert set(Assignment.objects.values_list("status", flat=True)) == {AssignmentStatus.APPROVED}
    assert {submission.status for submission in PANEL.submissions.values()} == {"Approved"}

    assignment = Assignment.objects.order_by("pk").first()
    assert assignment is not None
    researcher.post(
        f"/assignments/{assignment.pk}/bonus/", {"amount": "0.50", "reason": "Careful work", "confirmed": "yes"}
    )
    assert list(PANEL.bonuses.values()) == [("M1", Decimal("0.50"))]
    assert Bonus.objects.get().status == BonusStatus.SENT

    worker = Worker.objects.get(kind="toypanel", external_id="M1")
    blocked = researcher.post(
        f"/workers/{worker.pk}/crowd-block/", {"reason": "Copied answers", "confirmed": "yes"}, follow=True
    )
    assert "here and on Toy panel" in blocked.content.decode()
    assert PANEL.blocked == {"M1"}


def test_the_api_publishes_with_the_panels_own_option_refuses_a_bad_one_and_syncs(cast: Cast) -> None:
    batch = make_batch(backend="toypanel", hits=1, assignments=1)
    api = APIClient()
    assert api.login(username="rita", password=PASSWORD)

    refused = api.post(f"/api/batches/{batch.pk}/publish/", {"options": {"audience": "everyone"}}, format="json")
    assert refused.status_code == 409 and "audience is one of students, public" in refused.json()["detail"]
    assert not PANEL.postings

    published = api.post(f"/api/batches/{batch.pk}/publish/", {"toy_audience": "students"}, format="json")
    assert published.status_code == 200 and published.json()["hits_created"] == 1
    plan = api.get(f"/api/batches/{batch.pk}/publish-plan/").json()
    assert plan["backend"] == "toypanel" and plan["hits_published"] == 1

    _work(batch.hits.get(), "M7", "S7")
    synced = api.post(f"/api/batches/{batch.pk}/sync/", {"hold_seconds": 0}, format="json")
    assert synced.status_code == 200 and synced.json()["approved"] == 1
    assert PANEL.submissions["S7"].status == "Approved"


def test_the_commands_publish_sync_approve_pay_message_and_expire(cast: Cast) -> None:
    batch = make_batch(backend="toypanel", hits=1, assignments=1)

    def run(*arguments: str) -> str:
        out = io.StringIO()
        call_command(*arguments, stdout=out)
        return out.getvalue()

    dry = run("crowd_publish", str(batch.pk), "--option", "audience=public", "--dry-run")
    assert "Dry run: nothing is sent to the toy panel." in dry and not PANEL.postings
    published = run("crowd_publish", str(batch.pk), "--option", "audience=public")
    assert "on the toy panel: posting batch-" in published and "1 HITs posted" in published

    _work(batch.hits.get(), "M2", "S2")
    run("crowd_sync", str(batch.pk), "--no-review")
    assignment = Assignment.objects.get(external_id="S2")
    assert (assignment.status, assignment.external_status) == (AssignmentStatus.SUBMITTED, "Submitted")

    assert "approved" in run("crowd_approve", "S2")
    assert "1 remote assignments" in run("crowd_sync", "--crowd", "toypanel")
    assert PANEL.submissions["S2"].status == "Approved"
    # $0.30 and the panel's 10 %.
    assert "(+ $0.03 Toy panel fee)" in run("crowd_bonus", "S2", "0.30", "--reason", "Thanks")
    assert list(PANEL.bonuses.values()) == [("M2", Decimal("0.30"))]
    assert "1 workers notified" in run("crowd_notify", str(batch.pk), "--subject", "Next batch", "--text", "Soon")
    assert PANEL.messages == [("M2", "Next batch")]
    assert "M2 is blocked" in run("crowd_block", "M2", "--reason", "Copied answers")
    assert PANEL.blocked == {"M2"}
    assert "1 HITs expired" in run("crowd_expire", str(batch.pk))
    assert not any(posting.open for posting in PANEL.postings.values())
    assert Batch.objects.get(pk=batch.pk).status == "closed"


def test_the_panel_prices_with_its_own_fee_and_the_preview_shows_its_page(researcher: Client) -> None:
    batch = make_batch(backend="toypanel", hits=1, assignments=3, reward="1.00")
    assert get_backend("toypanel").cost_estimate(batch=batch).total == Decimal("3.30")
    preview = researcher.get(f"/batches/{batch.pk}/preview/")
    assert preview.status_code == 200
    assert f"item-{HITItem.objects.filter(hit__batch=batch).first().pk}" in preview.content.decode()  # type: ignore[union-attr]
    assert not Assignment.objects.exists()


def test_a_member_without_the_panels_ids_is_refused(settings: Any) -> None:
    batch = make_batch(backend="toypanel", hits=1, assignments=1)
    call_command("crowd_publish", str(batch.pk), stdout=io.StringIO())
    response = Client().get(f"/toypanel/hit/{batch.hits.get().public_token}/")
    assert response.status_code == 400 and not Assignment.objects.exists()


def test_a_sync_of_every_open_batch_keeps_to_no_review_and_the_hold(cast: Cast) -> None:
    batch = make_batch(backend="toypanel", hits=1, assignments=1)
    call_command("crowd_publish", str(batch.pk), "--option", "audience=public", stdout=io.StringIO())
    _work(batch.hits.get(), "M3", "S3")

    def sync(*arguments: str) -> str:
        out = io.StringIO()
        call_command("crowd_sync", *arguments, stdout=out)
        return out.getvalue()

    # No batch named: every open batch is reconciled, and nothing is decided or paid.
    assert "1 remote assignments" in sync("--no-review")
    assignment = Assignment.objects.get(external_id="S3")
    assert (assignment.status, assignment.external_status) == (AssignmentStatus.SUBMITTED, "Submitted")
    assert PANEL.submissions["S3"].status == "Submitted"
    # The hold asked for holds too (the panel's own is none): work an hour old or less waits.
    sync("--crowd", "toypanel", "--hold", "3600")
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.SUBMITTED
    assert PANEL.submissions["S3"].status == "Submitted"
    # A plain sync decides as the panel's hold says.
    sync()
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.APPROVED
    assert PANEL.submissions["S3"].status == "Approved"


def test_a_panel_that_pays_no_bonuses_and_sends_no_messages_offers_neither(
    researcher: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a crowd cannot do is asked of its declaration: the page offers no bonus and no message,
    and the services refuse them, with nothing sent to the panel."""
    toy = type(get_backend("toypanel"))
    monkeypatch.setattr(toy, "capabilities", toy.capabilities - {BONUS, NOTIFY})
    batch = make_batch(backend="toypanel", hits=1, assignments=1)
    researcher.post(
        f"/batches/{batch.pk}/crowd/publish/",
        {"audience": "public", "confirm_money": "on", "confirmed": "yes"},
    )
    hit = batch.hits.get()
    _work(hit, "M1", f"S-{hit.pk}")
    researcher.post(f"/batches/{batch.pk}/crowd/sync/", {"decide_now": "on", "confirmed": "yes"})
    assignment = Assignment.objects.get()
    assert assignment.status == AssignmentStatus.APPROVED

    page = researcher.get(f"/batches/{batch.pk}/crowd/").content.decode()
    assert f"/assignments/{assignment.pk}/bonus/" not in page
    assert 'id="notify"' not in page
    bonus = researcher.post(
        f"/assignments/{assignment.pk}/bonus/",
        {"amount": "0.50", "reason": "Careful work", "confirmed": "yes"},
        follow=True,
    )
    assert "pays no bonuses" in bonus.content.decode()
    message = researcher.post(
        f"/batches/{batch.pk}/crowd/notify/",
        {"subject": "Thanks", "text": "Thank you.", "confirmed": "yes"},
        follow=True,
    )
    assert "cannot message its workers" in message.content.decode()
    assert not PANEL.bonuses and not Bonus.objects.exists() and not PANEL.messages
