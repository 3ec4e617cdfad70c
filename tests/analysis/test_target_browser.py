"""A researcher searches targets from the benchmark page and opens one (Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections

from annotation.models import Candidate, Label, Target
from tests.base import make_user
from tests.browser import log_in
from tests.hits.assignment_data import worker
from tests.hits.generation_data import build_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_finds_a_target_by_word_and_score_and_reads_its_page(live_server: Any, browser: Any) -> None:
    make_user("rita", researcher=True)
    build_benchmark("searched")
    clever = Candidate.objects.get(text="clever")
    for position, value in enumerate(["accept", "accept", "reject"]):
        Label.objects.create(
            candidate=clever, value=value, origin="file", position=position, worker=worker(f"judge{position}")
        )
    bright = Target.objects.get(word="bright")
    connections.close_all()

    page = log_in(browser, live_server.url, "rita")
    page.goto(f"{live_server.url}/benchmarks/searched/")
    page.fill("input[name=word]", "bri")
    page.select_option("select[name=pos]", "adj")
    page.fill("input[name=score_min]", "0.5")
    page.click("button:has-text('Search targets')")
    page.wait_for_selector("#found")
    assert "1 target found" in page.inner_text("#found")
    # The search is a link: its parameters are in the address.
    assert "word=bri" in page.url and "score_min=0.5" in page.url
    assert str(bright.pk) in page.inner_text("table")

    # A score range no candidate reaches finds nothing, and says so.
    page.fill("input[name=score_min]", "0.9")
    page.click("button:has-text('Search targets')")
    page.wait_for_selector("text=No target matches.")

    page.fill("input[name=score_min]", "")
    page.click("button:has-text('Search targets')")
    page.click("table >> a:has-text('bright')")
    page.wait_for_selector("#context mark.target")
    assert page.inner_text("#context mark.target") == "bright"
    candidates = page.inner_text("#candidates + .table-scroll")
    assert "clever" in candidates and "judge0, judge1" in candidates and "0.67" in candidates
    assert "acceptable" in candidates
    assert f"Target {bright.pk}" in page.inner_text("main")
    connections.close_all()
