"""The complete evaluation in a real browser: a result file uploaded with "Judge its unscored
substitutes" ticked, the proposal with its cost, the button that asks first with the same cost,
and the judging started."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from pytest_django.live_server_helper import LiveServer

from analysis.target_ids import swords_target_ids
from review.services import benchmark_refresh
from tests.analysis.labelled import labelled_benchmark
from tests.base import make_cast
from tests.browser import launch_chromium, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def result_file(tmp_path: Path) -> Path:
    """A finished benchmark and a system proposing two substitutes it never scored."""
    make_cast()
    benchmark = labelled_benchmark(
        "judged",
        [
            ("bright", "adj", [("clever", ["coinco"], "AAAAAAAAAR"), ("shining", ["thesaurus"], "RRR")]),
            ("quick", "adj", [("fast", ["coinco"], "AAAAAAAAAA"), ("slow", ["thesaurus"], "RRR")]),
        ],
    )
    benchmark_refresh(benchmark=benchmark, full=True)
    bright, quick = (tid for _pk, tid in swords_target_ids(benchmark))
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"substitutes": {bright: ["gifted", "clever"], quick: ["speedy", "fast"]}}))
    return path


@pytest.fixture
def page(result_file: Path, live_server: LiveServer) -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield log_in(browser, live_server.url, "rita")
        browser.close()


def test_the_button_asks_with_the_cost_before_the_substitutes_are_judged(
    page: Page, live_server: LiveServer, result_file: Path
) -> None:
    page.goto(f"{live_server.url}/benchmarks/judged/evaluation/")
    page.set_input_files("#result", str(result_file))
    page.fill("#system", "mine")
    page.check("#judge")
    page.fill("#top_k", "10")
    page.click("button:has-text('Evaluate')")
    page.wait_for_url("**/evaluation/#judging")
    card = page.locator("article.judgement")
    assert "2 unscored substitutes of 2 targets" in card.inner_text()
    cost = card.locator(".judge-cost").inner_text()
    assert cost.startswith("$") and float(cost[1:]) > 0
    assert "proposed" in card.locator("h3").inner_text()

    card.locator("button:has-text('Judge them')").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Judge 2 substitutes of mine?"
    effects = page.locator(".confirm-effects").inner_text()
    assert "add 2 substitutes of 2 targets as candidates (source system:mine)" in effects
    assert f"cost {cost}" in effects
    page.click(f"button:has-text('Judge them for {cost}')")
    page.wait_for_url("**/evaluation/#judging")
    assert "sent to be judged in batch" in page.locator("body").inner_text()
    assert "0 of 2 judged" in page.locator("article.judgement").inner_text()
    assert "being judged" in page.locator("article.judgement h3").inner_text()
