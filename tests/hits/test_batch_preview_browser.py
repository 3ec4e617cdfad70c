"""The batch form shows what a batch would create and cost before anything is created (Playwright, chromium)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections

from hits.models import Batch
from tests.base import make_user
from tests.browser import log_in
from tests.hits.generation_data import build_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_researcher_sees_the_cost_then_creates_the_same_batch(live_server: Any, browser: Any) -> None:
    make_user("rita", researcher=True)
    build_benchmark("priced")
    connections.close_all()

    page = log_in(browser, live_server.url, "rita")
    page.goto(f"{live_server.url}/benchmarks/priced/batches/")
    page.fill("input[name=seed]", "3")
    page.select_option("select[name=backend]", "mturk")
    page.fill("input[name=reward]", "0.12")
    page.click("button:has-text('Preview cost')")
    page.wait_for_selector("#preview")
    assert page.inner_text("[data-preview=hits]") == "5"
    assert page.inner_text("[data-preview=assignments]") == "15"
    assert "$1.80" in page.inner_text("[data-preview=reward]")
    assert page.inner_text("[data-preview=fees]") == "$0.30"
    assert page.inner_text("[data-preview=total]") == "$2.10"
    assert "unknown until" in page.inner_text("[data-preview=hourly]")
    assert Batch.objects.count() == 0
    connections.close_all()

    # The form kept what was typed: creating now makes the batch previewed.
    assert page.input_value("input[name=reward]") == "0.12"
    page.click("button:has-text('Generate HITs')")
    page.wait_for_selector("h1:has-text('Batch')")
    batch = Batch.objects.get()
    assert (batch.backend, batch.hits.count(), str(batch.reward)) == ("mturk", 5, "0.12")
    connections.close_all()
