"""The generation task's page in a real browser: substitutes typed from memory, the checks before
submitting, and a phone (Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections

from annotation.models import Benchmark, Candidate, Context, Target
from hits.models import Answer, Assignment, AssignmentStatus
from hits.services import hits_generate
from tests.base import make_user
from tests.browser import log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open_hit(browser: Any, base_url: str, **device: Any) -> Any:
    benchmark = Benchmark.objects.create(name="gen")
    context = Context.objects.create(benchmark=benchmark, text="The cat sat on the mat.")
    Target.objects.create(context=context, benchmark=benchmark, word="sat", offset=8, pos="verb")
    hits_generate(benchmark=benchmark, step=1, seed=1)
    make_user("alice")
    page = log_in(browser, base_url, "alice", **device)
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    return page


def test_an_annotator_types_substitutes_and_the_page_checks_them_first(live_server: Any, browser: Any) -> None:
    page = _open_hit(browser, live_server.url, viewport={"width": 1100, "height": 900})
    assert page.inner_text("h1") == "Which words could replace sat in this text?"
    assert page.inner_text("mark.target >> nth=1") == "sat"
    assert page.evaluate("document.activeElement.id") == "proposal-1"

    page.keyboard.press("Enter")
    assert page.inner_text("#hit-error") == "Type at least one substitute, or tick that none comes to mind."
    page.keyboard.type("perched")
    page.keyboard.press("Tab")
    page.keyboard.type("was seated")
    page.check(".proposals-none-box")
    page.click("#hit-submit")
    assert "keep one of the two" in page.inner_text("#hit-error")
    assert Assignment.objects.get().status == AssignmentStatus.CLAIMED
    page.uncheck(".proposals-none-box")
    page.fill("#proposal-3", "rested")
    page.click("#hit-submit")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)

    answer = Answer.objects.get()
    assert answer.data == {
        "substitutes": ["perched", "was seated", "rested"],
        "lemmas": ["perch", "be seated", "rest"],
        "none": False,
    }
    assert set(Candidate.objects.values_list("text", flat=True)) == {"perch", "be seated", "rest"}
    connections.close_all()


def test_on_a_phone_the_annotator_says_none_comes_to_mind(live_server: Any, browser: Any) -> None:
    page = _open_hit(browser, live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.locator(".proposals-none").tap()
    page.locator("#hit-submit").tap()
    page.wait_for_url(lambda url: "/work/assignments/" not in url)
    assert Answer.objects.get().value == "none"
    assert not Candidate.objects.exists()
    connections.close_all()
