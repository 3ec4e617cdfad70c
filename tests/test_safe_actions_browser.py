"""In the browser, a researcher confirms each destructive action on a page that says what it will do,
undoes it from the activity log (with its own confirmation), and a cancelled confirmation changes
nothing (Playwright, Debian's chromium). The pages work without JavaScript: it is switched off."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from django.utils import timezone

from annotation.models import Activity, ActivityKind, Candidate, CandidateStage, Worker
from hits.models import Assignment, AssignmentStatus, Batch, BatchStatus
from review.models import WorkerFlag
from tests.base import make_user
from tests.browser import launch_chromium, signed_in
from tests.hits.factories import make_benchmark, make_hits

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


def fresh(model: Any, pk: int) -> Any:
    row = model.objects.get(pk=pk)
    connections.close_all()
    return row


def undo_latest(page: Any, base: str, benchmark: str, summary: str, button: str) -> None:
    """Undo the log's entry whose summary holds ``summary``, confirming on the page that asks."""
    page.goto(f"{base}/benchmarks/{benchmark}/activity/")
    page.locator("tr", has_text=summary).first.get_by_role("button", name="Undo").click()
    page.wait_for_selector("h1:has-text('?')")
    page.get_by_role("button", name=button).click()
    page.wait_for_load_state()


def test_a_researcher_confirms_cancels_and_undoes_close_exclude_and_block(live_server: Any, browser: Any) -> None:
    rita = make_user("rita", researcher=True)
    sam = make_user("sam")
    benchmark = make_benchmark("safe")
    hits = make_hits(benchmark, 3, assignments_per_hit=2)
    batch_id = hits[0].batch_id
    now = timezone.now()
    worker = Worker.objects.get(user=sam)
    Assignment.objects.create(
        hit=hits[0], worker=worker, status=AssignmentStatus.SUBMITTED, claimed_at=now, deadline=now, submitted_at=now
    )
    WorkerFlag.objects.create(benchmark=benchmark, worker=worker, reason="controls")
    candidate = Candidate.objects.filter(target=hits[1].target).order_by("id").first()
    assert candidate is not None
    base = live_server.url
    context = signed_in(browser, base, rita, java_script_enabled=False)
    page = context.new_page()

    # Close: asked with the figures; cancelled, nothing changes; confirmed, it closes; undone, it reopens.
    page.goto(f"{base}/batches/{batch_id}/")
    page.get_by_role("button", name="Close batch").click()
    text = page.inner_text("main")
    assert f"Close batch {batch_id}?" in text and "stop offering its 3 HITs: 5 of its 6 assignments" in text
    page.get_by_role("link", name="Cancel").click()
    assert page.url.endswith(f"/batches/{batch_id}/")
    assert fresh(Batch, batch_id).status == BatchStatus.OPEN
    page.get_by_role("button", name="Close batch").click()
    page.get_by_role("button", name="Close the batch").click()
    assert "is closed" in page.inner_text("main")
    assert fresh(Batch, batch_id).status == BatchStatus.CLOSED
    undo_latest(page, base, "safe", f"batch {batch_id} closed", "Reopen the batch")
    assert "is open again" in page.inner_text("main")
    assert fresh(Batch, batch_id).status == BatchStatus.OPEN

    # Exclude, from the target's page.
    page.goto(f"{base}/targets/{hits[1].target_id}/")
    page.locator("tr", has_text=candidate.text).get_by_role("button", name="Exclude").click()
    assert f"Exclude “{candidate.text}”?" in page.inner_text("main")
    page.get_by_role("link", name="Cancel").click()
    assert page.url.endswith(f"/targets/{hits[1].target_id}/")
    assert fresh(Candidate, candidate.pk).stage == CandidateStage.REDUCE
    page.locator("tr", has_text=candidate.text).get_by_role("button", name="Exclude").click()
    page.get_by_role("button", name="Exclude the candidate").click()
    assert fresh(Candidate, candidate.pk).stage == CandidateStage.EXCLUDED
    undo_latest(page, base, "safe", f"candidate “{candidate.text}”", "Bring the candidate back")
    assert fresh(Candidate, candidate.pk).stage == CandidateStage.REDUCE

    # Block, from the flagged workers; Block is not the page's main button.
    page.goto(f"{base}/benchmarks/safe/flagged-workers/")
    block = page.get_by_role("button", name="Block", exact=True)
    assert "primary" not in (block.get_attribute("class") or "")
    page.fill("input[name=reason]", "random clicks")
    block.click()
    text = page.inner_text("main")
    assert "Block sam?" in text and "1 submitted assignments" in text
    page.get_by_role("link", name="Cancel").click()
    assert not fresh(Worker, worker.pk).blocked
    page.fill("input[name=reason]", "random clicks")
    page.get_by_role("button", name="Block", exact=True).click()
    page.get_by_role("button", name="Block sam").click()
    assert fresh(Worker, worker.pk).blocked
    undo_latest(page, base, "safe", "worker sam", "Unblock sam")
    assert not fresh(Worker, worker.pk).blocked

    kinds = list(Activity.objects.filter(benchmark=benchmark).order_by("id").values_list("kind", flat=True))
    connections.close_all()
    assert kinds == [
        ActivityKind.BATCH_CLOSED,
        ActivityKind.BATCH_REOPENED,
        ActivityKind.CANDIDATE_EXCLUDED,
        ActivityKind.CANDIDATE_INCLUDED,
        ActivityKind.BLOCKED,
        ActivityKind.UNBLOCKED,
    ]
    context.close()


def test_a_researcher_makes_an_account_whose_link_signs_the_person_in_once(
    live_server: Any, browser: Any, settings: Any
) -> None:
    rita = make_user("rita", researcher=True)
    base = live_server.url
    settings.SITE_URL = base
    context = signed_in(browser, base, rita)
    page = context.new_page()
    page.goto(f"{base}/people/")
    page.fill("input[name=username]", "ana")
    page.fill("input[name=email]", "ana@example.org")
    page.fill("input[name=name]", "Ana Lima")
    page.uncheck("input[name=send]")
    page.get_by_role("button", name="Make the account").click()
    link = page.inner_text("code.signin-link").strip()
    assert link.startswith(f"{base}/accounts/signin/")
    context.close()

    person = browser.new_context()
    visit = person.new_page()
    visit.goto(link)
    assert "Choose your password" in visit.inner_text("main")
    visit.fill("input[name=new_password1]", "a long new secret 42")
    visit.fill("input[name=new_password2]", "a long new secret 42")
    visit.get_by_role("button", name="Set the password and sign in").click()
    visit.wait_for_url(f"{base}/work/")
    assert "Log out ana" in visit.inner_text("header")
    visit.goto(link)
    assert "This link no longer works" in visit.inner_text("main")
    person.close()
    connections.close_all()
