"""A researcher reads one annotator's Smart Word Suggestions answer on the HIT page, in chromium:
the marked targets drawn on the sentence, their suggestions and types, text shown as text."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from tests.base import PASSWORD, make_cast
from tests.browser import launch_chromium
from tests.hits.submitted_work import sws_work, the_hit

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_the_hit_page_draws_each_annotators_targets_on_the_sentence(
    live_server: Any, page: Any, tmp_path: Path
) -> None:
    benchmark, _ = sws_work(make_cast(), tmp_path)
    hit_id = the_hit(benchmark).pk
    connections.close_all()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.goto(f"{live_server.url}/hits/{hit_id}/")
    cells = page.locator("td.answer")
    assert cells.count() == 3
    alice, bob, carol = (cells.nth(index) for index in range(3))
    assert alice.locator("mark.target").all_inner_texts() == ["very good1", "quick2"]
    assert alice.locator("li").all_inner_texts() == [
        "very good → excellent; great refine-usage",
        "quick → fast diversify-expression",
    ]
    # What an annotator typed is shown as text, never run as markup.
    assert bob.locator("li").inner_text() == "results → <b>outcomes</b> refine-usage"
    assert bob.locator("b").count() == 0
    assert "It is <i>garbled</i>." in carol.inner_text() and carol.locator("mark").count() == 0
    connections.close_all()
