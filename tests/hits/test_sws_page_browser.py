"""The Smart Word Suggestions page in a real browser: selecting with the mouse and with the keyboard,
typing suggestions, the checks before submitting, and a phone (Playwright, Debian's chromium)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from django.db import connections

from annotation.models import Benchmark, Context, Target
from hits.models import Answer, Assignment, AssignmentStatus
from hits.services import hits_generate
from tests.base import make_user
from tests.browser import log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SENTENCE = "The results were very good and quick."


def _benchmark(min_targets: int) -> None:
    benchmark = Benchmark.objects.create(name="sws", scheme="sws", scheme_settings={"min_targets": min_targets})
    context = Context.objects.create(benchmark=benchmark, text=SENTENCE)
    Target.objects.create(benchmark=benchmark, context=context, word=SENTENCE, offset=0, pos="")
    hits_generate(benchmark=benchmark, step=1, seed=1)


def _open_hit(browser: Any, base_url: str, **device: Any) -> Any:
    make_user("alice")
    page = log_in(browser, base_url, "alice", **device)
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    return page


def _token(page: Any, index: int) -> Any:
    return page.locator(f".sws-sentence .token[data-index='{index}']")


def _stored() -> dict[str, Any]:
    answer = Answer.objects.get(assignment__worker__user__username="alice")
    assert answer.data is not None
    return answer.data


def test_targets_are_selected_with_the_mouse_and_the_keyboard_and_checked_before_submit(
    live_server: Any, browser: Any
) -> None:
    _benchmark(min_targets=3)
    page = _open_hit(browser, live_server.url, viewport={"width": 1100, "height": 900})
    assert "Which words or phrases of this sentence could be improved?" in page.inner_text("h1")
    assert "Guidelines and examples" in page.inner_text("main")

    # The mouse: drag from "very" to "good".
    very, good = _token(page, 3).bounding_box(), _token(page, 4).bounding_box()
    page.mouse.move(very["x"] + 3, very["y"] + very["height"] / 2)
    page.mouse.down()
    page.mouse.move(good["x"] + good["width"] - 3, good["y"] + good["height"] / 2, steps=5)
    page.mouse.up()
    assert page.inner_text(".sws-selected") == "“very good”"
    page.fill("#sws-suggestions", "excellent; great")
    page.click("text=Add this target")
    assert page.inner_text(".sws-editor-error") == "Choose the type: refine usage or diversify expression."
    page.check("input[value=diversify-expression]")
    page.click("text=Add this target")
    assert page.inner_text(".sws-count") == "1"

    # The keyboard: from the first token, move to "quick", Enter, type, choose a type, Enter.
    page.focus(".sws-sentence")
    page.keyboard.press("Home")
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "sws-suggestions"
    page.keyboard.type("fast")
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    assert page.inner_text(".sws-count") == "2"

    # Two targets are not enough: the page says so and nothing is sent.
    page.click("#hit-submit")
    assert "Please mark at least 3 targets (you marked 2)" in page.inner_text("#hit-error")
    assert Assignment.objects.get().status == AssignmentStatus.CLAIMED

    # Shift extends: "The results".
    page.focus(".sws-sentence")
    page.keyboard.press("Home")
    page.keyboard.press("Shift+ArrowRight")
    assert page.inner_text(".sws-selected") == "“The results”"
    page.keyboard.press("Enter")
    page.keyboard.type("These outcomes")
    page.check("input[value=refine-usage]")
    page.keyboard.press("Enter")
    page.click("#hit-submit")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)

    data = _stored()
    assert [(t["text"], t["suggestions"], t["type"]) for t in data["targets"]] == [
        ("The results", ["These outcomes"], "refine-usage"),
        ("very good", ["excellent", "great"], "diversify-expression"),
        ("quick", ["fast"], "refine-usage"),
    ]
    connections.close_all()


def test_on_a_phone_words_are_tapped_and_a_sentence_with_errors_is_discarded(live_server: Any, browser: Any) -> None:
    _benchmark(min_targets=1)
    page = _open_hit(
        browser,
        live_server.url,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    _token(page, 3).tap()
    _token(page, 4).tap()
    assert page.inner_text(".sws-selected") == "“very good”"
    page.fill("#sws-suggestions", "excellent")
    page.locator("input[value=refine-usage]").tap()
    page.locator(".sws-add").tap()
    assert "“very good” → excellent (refine usage)" in page.inner_text(".sws-targets")
    page.locator(".sws-remove").tap()
    assert page.inner_text(".sws-count") == "0"

    page.locator(".sws-discard summary").tap()
    page.fill("#sws-discard-reason", "It is not English.")
    page.locator("#hit-submit").tap()
    page.wait_for_url(lambda url: "/work/assignments/" not in url)
    assert _stored() == {"targets": [], "discard": "It is not English."}
    assert json.loads(json.dumps(_stored()))["discard"] == "It is not English."
    connections.close_all()
