"""A researcher creates a batch in the browser and follows it to a HIT (Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections

from hits.models import Batch
from tests.base import PASSWORD, make_user
from tests.browser import launch_chromium
from tests.hits.generation_data import build_benchmark

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


def test_a_researcher_creates_a_step_two_batch_and_opens_one_of_its_hits(live_server: Any, page: Any) -> None:
    make_user("rita", researcher=True)
    build_benchmark("demo")
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.goto(f"{live_server.url}/benchmarks/demo/")
    page.click("text=Create a batch")
    page.fill("input[name=seed]", "7")
    page.click("button:has-text('Generate HITs')")
    page.wait_for_selector("h1:has-text('Batch')")
    batch_url = page.url
    assert "0 / 5" in page.inner_text("main")
    page.click("table >> a:has-text('#')")
    page.wait_for_selector("mark.target")
    assert page.inner_text("mark.target") == "sat"
    assert "control: the target itself" in page.inner_text("main")
    batch = Batch.objects.get()
    # An ORM call made while Playwright's event loop runs gets a connection of its own, which the
    # test database's teardown (in another context) would find still open.
    connections.close_all()
    assert f"/batches/{batch.pk}/" in batch_url
