"""In the browser, for SWORDS and lexical simplification (TSAR): a researcher pauses a batch after the
confirmation says what pausing means, an annotator then finds no work, resuming brings it back; the
researcher sets a budget cap on the benchmark's page and a clone past it is refused with what it
would cost and what remains (Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections

from hits.services import batch_close
from tests.base import Cast, make_cast
from tests.browser import launch_chromium, signed_in
from tests.scheme_benchmarks import scheme_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        try:
            yield launched
        finally:
            launched.close()


@pytest.mark.parametrize("scheme_name", ["swords", "tsar"])
def test_pause_resume_and_the_budget_caps_refusal(live_server: Any, browser: Any, scheme_name: str) -> None:
    cast: Cast = make_cast()
    benchmark, batch = scheme_benchmark(scheme_name, cast)
    researcher = signed_in(browser, live_server.url, cast.researcher).new_page()
    annotator = signed_in(browser, live_server.url, cast.bob).new_page()

    annotator.goto(f"{live_server.url}/work/")
    assert "No project has HITs for you" not in annotator.inner_text("main")

    researcher.goto(f"{live_server.url}/batches/{batch.pk}/")
    assert "Handed in over the last hour" in researcher.inner_text("#throughput")
    assert "at the last hour's rate of 1 assignment an hour" in researcher.inner_text("#throughput")
    researcher.click("button:has-text('Pause batch')")
    # The confirmation says what pausing means on the local queue, and nothing happens before it.
    assert "hands out none of its HITs while it is paused" in researcher.inner_text("main")
    researcher.click("button:has-text('Pause the batch')")
    researcher.wait_for_selector("#paused-badge")
    assert "annotators holding one may still submit it" in researcher.inner_text("#paused-note")

    annotator.goto(f"{live_server.url}/work/")
    assert "No project has HITs for you right now" in annotator.inner_text("main")

    researcher.click("button:has-text('Resume batch')")
    researcher.wait_for_selector("text=is resumed")
    assert researcher.query_selector("#paused-badge") is None
    annotator.goto(f"{live_server.url}/work/")
    assert "No project has HITs for you" not in annotator.inner_text("main")

    researcher.goto(f"{live_server.url}/benchmarks/{benchmark.name}/operations/")
    researcher.fill("input[name=budget_cap]", "0.05")
    researcher.click("button:has-text('Save')")
    researcher.wait_for_selector("text=Budget and notifications saved.")
    assert "$0.05" in researcher.inner_text("[data-budget=cap]")

    batch_close(batch=batch)
    researcher.goto(f"{live_server.url}/batches/{batch.pk}/")
    researcher.click("summary:has-text('Clone this batch')")
    researcher.click(f"button:has-text('Clone batch {batch.pk}')")
    message = researcher.inner_text(".messages")
    assert "No clone made: a batch of" in message
    assert "on the local queue would cost $" in message
    assert "remains of" in message and "budget cap of $0.05" in message

    researcher.goto(f"{live_server.url}/benchmarks/{benchmark.name}/")
    assert "Remaining" in researcher.inner_text("#budget")
    connections.close_all()
