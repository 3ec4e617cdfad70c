"""Telemetry from real key, copy, paste and visibility events in chromium, stored with the assignment;
the mitigations (pledge, copy and paste disabled) on the page (Playwright, Debian's chromium).

Headless chromium never hides a page (another page brought to the front, a minimised window and a frozen
lifecycle all leave ``visibilityState`` at "visible"), so the test hides the page the only way it can:
it sets what ``document.visibilityState`` reports and lets the browser fire ``visibilitychange``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections

from annotation.models import Benchmark, Context, Target
from hits.models import AssignmentTelemetry, Pledge
from hits.services import hits_generate, mitigations_update
from tests.base import Cast, make_user
from tests.browser import log_in
from tests.hits.factories import make_benchmark, make_hits

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SET_VISIBILITY = """state => {
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => state });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def _copy_the_context(page: Any) -> None:
    page.evaluate(
        """() => {
          const range = document.createRange();
          range.selectNodeContents(document.querySelector(".context-text"));
          getSelection().removeAllRanges();
          getSelection().addRange(range);
        }"""
    )
    page.keyboard.press("Control+C")


def _generation_page(live_server: Any, browser: Any, *, block_copy_paste: bool = False) -> Any:
    benchmark = Benchmark.objects.create(name="gen")
    context = Context.objects.create(benchmark=benchmark, text="The cat sat on the mat.")
    Target.objects.create(context=context, benchmark=benchmark, word="sat", offset=8, pos="verb")
    hits_generate(benchmark=benchmark, step=1, seed=1)
    mitigations_update(benchmark=benchmark, block_copy_paste=block_copy_paste)
    make_user("alice")
    page = log_in(browser, live_server.url, "alice", viewport={"width": 1100, "height": 900})
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    return page


def test_keys_a_paste_and_time_away_are_stored_without_the_text(live_server: Any, browser: Any) -> None:
    page = _generation_page(live_server, browser)
    assert "This page records how you work" in page.inner_text("#hit-recorded")

    # The text goes to the clipboard (a copy on the context) and comes back pasted into a box.
    _copy_the_context(page)
    page.click("#proposal-1")
    page.keyboard.press("Control+V")
    assert page.input_value("#proposal-1") == "The cat sat on the mat."
    # The page is hidden for a while, then the worker types a word key by key.
    page.evaluate(SET_VISIBILITY, "hidden")
    page.wait_for_timeout(1200)
    page.evaluate(SET_VISIBILITY, "visible")
    page.click("#proposal-2")
    page.keyboard.type("perched")
    # A reload keeps the answers and what was recorded so far (the draft).
    page.reload()
    assert page.input_value("#proposal-2") == "perched"
    page.click("#proposal-3")
    page.keyboard.type("rested")
    page.click("#hit-submit")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)

    data = AssignmentTelemetry.objects.get().data
    assert data["copies"] == 1
    assert data["pastes"] == [len("The cat sat on the mat.")]
    assert data["typed_chars"] == len("perched") + len("rested")
    # Every key press counts; those in the boxes (the Control+V too) count as typing as well.
    assert data["typed_keys"] >= len("perched") + len("rested") + 2
    assert data["key"] >= data["typed_keys"] and data["pointer"] >= 4 and data["touch"] == 0
    assert data["hidden"] == 1 and 1000 <= data["away_ms"] < 10_000
    assert data["away_answering_ms"] == data["away_ms"]
    assert data["loads"] == 2
    assert data["ms_to_first_answer"] is not None and len(data["item_ms"]) == 1
    assert "perched" not in str(data) and "mat" not in str(data)
    connections.close_all()


def test_the_pledge_comes_first_and_copy_and_paste_are_refused(live_server: Any, browser: Any, cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 1)
    mitigations_update(benchmark=benchmark, pledge=True, block_copy_paste=True, notice=True)
    page = log_in(browser, live_server.url, "alice", viewport={"width": 1100, "height": 900})
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    assert "Do not use AI tools" in page.inner_text("#hit-ai-notice")

    _copy_the_context(page)
    page.click(".item >> nth=0")
    rows = page.locator(".item").count()
    for _ in range(rows):
        page.keyboard.press("a")
    page.click("#hit-submit")
    assert "without AI tools" in page.inner_text("#hit-error")
    assert not AssignmentTelemetry.objects.exists()
    page.check("#hit-pledge")
    page.click("#hit-submit")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)

    data = AssignmentTelemetry.objects.get().data
    assert data["copies"] == 0 and data["blocked"] == 1
    assert data["key"] >= rows and len(data["item_ms"]) == rows
    assert Pledge.objects.get().worker.external_id == "alice"
    connections.close_all()


def test_with_copy_and_paste_disabled_nothing_is_pasted_into_a_box(live_server: Any, browser: Any) -> None:
    page = _generation_page(live_server, browser, block_copy_paste=True)
    page.evaluate("navigator.clipboard.writeText('a whole answer from elsewhere')")
    page.click("#proposal-1")
    page.keyboard.press("Control+V")
    assert page.input_value("#proposal-1") == ""
    page.keyboard.type("perched")
    page.click("#hit-submit")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)
    data = AssignmentTelemetry.objects.get().data
    assert data["pastes"] == [] and data["blocked"] == 1 and data["typed_chars"] == len("perched")
    connections.close_all()
