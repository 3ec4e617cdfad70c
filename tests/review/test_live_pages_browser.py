"""The researcher's pages stay current: while a simulated crowd claims and submits work in this
process, the benchmark page open in chromium shows its label count and pipeline progress change
without a reload, and stops polling while its tab is hidden (Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from annotation.models import Label
from tests.base import make_user
from tests.browser import signed_in, wait_until
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# live.js polls every 4 s: a figure shows up within two periods.
WAIT_MS = 10_000


def _figure(page: Any, key: str) -> str:
    return str(page.locator(f'[data-live="{key}"]').first.text_content()).strip()


def test_the_benchmark_page_follows_a_working_crowd_without_a_reload(live_server: Any, browser: Any) -> None:
    researcher = make_user("rita", researcher=True)
    benchmark = make_benchmark(targets=2, candidates=8)
    step2_batch(benchmark)
    page = signed_in(browser, live_server.url, researcher).new_page()
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "/live/" in request.url else None)
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/")
    # A mark on the window: a reload would wipe it.
    page.evaluate("window.stillTheSamePage = true")
    assert _figure(page, "counts.labels") == "0"
    step_before = _figure(page, "step2.labels")

    for round_number, name in enumerate(["ann", "ben"], start=1):
        assert work_once(simulated(name), benchmark, honest()) is not None
        labels = str(Label.objects.filter(candidate__target__benchmark=benchmark).count())
        wait_until(
            page,
            '([key, value]) => document.querySelector(`[data-live="${key}"]`).textContent.trim() === value',
            arg=["counts.labels", labels],
            timeout=WAIT_MS / 1000,
        )
        assert int(labels) > 0, round_number

    assert _figure(page, "step2.labels") != step_before
    bar = page.locator('[data-live-bar="step2"]')
    assert int(bar.get_attribute("aria-valuenow") or 0) > 0
    assert page.evaluate("window.stillTheSamePage") is True

    # Hidden, the page asks nothing; shown again, it reads at once.
    page.evaluate(
        "Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    asked = len(polls)
    page.wait_for_timeout(9_000)
    assert len(polls) == asked
    page.evaluate(
        "Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    page.wait_for_timeout(1_500)
    assert len(polls) > asked


def test_the_batch_page_follows_its_assignments(live_server: Any, browser: Any) -> None:
    researcher = make_user("rita", researcher=True)
    benchmark = make_benchmark(targets=1, candidates=8)
    batch = step2_batch(benchmark)
    page = signed_in(browser, live_server.url, researcher).new_page()
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    before = _figure(page, "batch.assignments")

    assert work_once(simulated("ann"), benchmark, honest()) is not None

    wait_until(
        page,
        '([key, value]) => document.querySelector(`[data-live="${key}"]`).textContent.trim() !== value',
        arg=["batch.assignments", before],
        timeout=WAIT_MS / 1000,
    )
    assert _figure(page, "batch.assignments").startswith("1 / ")
