"""A HIT started on one device and finished on another (Playwright, Debian's chromium): the answers and
the time on page resume, and the submitted time is the sum of both devices' time
(docs/design.md §4, "Drafts across devices"). And the worker's own page passes axe-core at phone width.

Each browser context is a device: its own storage, so nothing passes between them but the server.
Headless chromium never hides a page, so the test hides it by setting what ``visibilityState``
reports (as tests/hits/test_telemetry_browser.py does); the page then saves its draft to the server.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from django.db import connections

from annotation.models import Worker
from hits.models import Assignment, AssignmentDraft
from hits.services import assignment_claim_next
from tests.base import Cast
from tests.browser import signed_in, wait_until
from tests.hits.factories import claim, make_benchmark, make_hits
from tests.hits.test_annotator_accessibility_browser import PHONE, serious_violations
from tests.hits.test_own_work import local_work
from tests.scheme_benchmarks import scheme_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HIDE = """() => {
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def device(browser: Any, live_server: Any, user: Any) -> Any:
    return signed_in(browser, live_server.url, user, viewport={"width": 1100, "height": 900}).new_page()


def saved_draft(assignment_id: int, check: Any, timeout: float = 20.0) -> AssignmentDraft:
    """The server's draft once it passes ``check``."""
    deadline = time.monotonic() + timeout
    while True:
        draft = AssignmentDraft.objects.filter(assignment_id=assignment_id).first()
        if draft is not None and check(draft):
            return draft
        if time.monotonic() > deadline:
            raise AssertionError(f"no draft as expected: {draft and (draft.answers, draft.views)}")
        time.sleep(0.1)


def finish_elsewhere(page: Any) -> None:
    page.click("#hit-submit")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)


def test_a_swords_hit_resumes_on_another_device_with_its_answers_and_time(
    live_server: Any, browser: Any, cast: Cast
) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    url = f"{live_server.url}/work/assignments/{assignment.pk}/"
    rows = assignment.hit.items.count()

    phone = device(browser, live_server, cast.alice)
    phone.goto(url)
    phone.click(".item >> nth=0")
    phone.keyboard.press("a")
    phone.keyboard.press("a")
    phone.wait_for_timeout(1500)
    phone.evaluate(HIDE)
    first = saved_draft(assignment.pk, lambda draft: len(draft.answers) == 2)
    first_ms = sum(first.views.values())
    assert first_ms >= 1500

    laptop = device(browser, live_server, cast.alice)
    laptop.goto(url)
    assert laptop.inner_text("#hit-answered").startswith(f"2 of {rows} answered")
    checked = laptop.evaluate("() => Array.from(document.querySelectorAll('input[type=radio]:checked')).length")
    assert checked == 2
    laptop.wait_for_timeout(1000)
    for index in range(2, rows):
        laptop.click(f".item >> nth={index}")
        laptop.keyboard.press("a")
    answered = {
        name: value
        for name, value in laptop.evaluate(
            "() => Array.from(new FormData(document.getElementById('hit-form'))).filter(p => p[0].startsWith('item-'))"
        )
    }
    assert len(answered) == rows
    finish_elsewhere(laptop)

    submitted = Assignment.objects.get(pk=assignment.pk)
    assert submitted.status == "submitted"
    # The phone's time plus the laptop's own (at least the second it waited), never either alone.
    assert submitted.seconds_on_page is not None and submitted.submitted_at is not None
    assert submitted.seconds_on_page >= (first_ms + 1000) / 1000
    assert submitted.seconds_on_page <= (submitted.submitted_at - submitted.claimed_at).total_seconds()
    assert not AssignmentDraft.objects.filter(assignment_id=assignment.pk).exists()
    connections.close_all()


def test_a_simplification_hit_resumes_on_another_device(live_server: Any, browser: Any, cast: Cast) -> None:
    benchmark, _ = scheme_benchmark("tsar", cast)
    worker = Worker.objects.get(user=cast.alice)
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None
    url = f"{live_server.url}/work/assignments/{assignment.pk}/"

    phone = device(browser, live_server, cast.alice)
    phone.goto(url)
    phone.click(".simplify-word")
    phone.keyboard.type("rested")
    phone.wait_for_timeout(1200)
    phone.evaluate(HIDE)
    first = saved_draft(assignment.pk, lambda draft: "rested" in str(draft.answers))
    first_ms = sum(first.views.values())

    laptop = device(browser, live_server, cast.alice)
    laptop.goto(url)
    wait_until(laptop, "document.querySelector('.simplify-word').value === 'rested'")
    laptop.wait_for_timeout(1000)
    finish_elsewhere(laptop)

    submitted = Assignment.objects.get(pk=assignment.pk)
    assert submitted.status == "submitted"
    assert "rested" in str(submitted.answers.values_list("value", "data").get())
    assert submitted.seconds_on_page is not None and submitted.seconds_on_page >= (first_ms + 1000) / 1000
    connections.close_all()


def test_the_workers_own_page_has_no_serious_violation_at_phone_width(
    live_server: Any, browser: Any, cast: Cast
) -> None:
    local_work(cast, gold_feedback=True)
    page = signed_in(browser, live_server.url, cast.alice, bypass_csp=True, **PHONE).new_page()

    page.goto(f"{live_server.url}/work/")
    page.click("#work-mine-link")
    page.wait_for_url("**/work/mine/")

    assert "Several rows were answered at random." in page.inner_text("#own-work")
    assert serious_violations(page) == []
    # Nothing is wider than the phone: the tables scroll inside their own regions.
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    connections.close_all()
