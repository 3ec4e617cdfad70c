"""A researcher reads the worker-aware posteriors on a target's page and plans the budget from the
batch form (Playwright, Debian's chromium)."""

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


def test_a_researcher_shows_the_posteriors_and_previews_the_budget(live_server: Any, browser: Any) -> None:
    make_user("rita", researcher=True)
    build_benchmark("aggregated")
    clever = Candidate.objects.get(text="clever")
    for position, value in enumerate(["accept", "accept", "reject"]):
        Label.objects.create(
            candidate=clever, value=value, origin="file", position=position, worker=worker(f"judge{position}")
        )
    bright = Target.objects.get(word="bright")
    connections.close_all()

    page = log_in(browser, live_server.url, "rita")
    page.goto(f"{live_server.url}/targets/{bright.pk}/")
    page.wait_for_selector("#candidates")
    assert "MACE" not in page.inner_text("#candidates + .table-scroll")
    page.click("a:has-text('Show the worker-aware posteriors')")
    page.wait_for_selector("th:has-text('MACE')")
    assert "posteriors=1" in page.url
    row = page.inner_text("tr:has(td:text-is('clever'))")
    # Score 0.67, then the two posteriors, both above one half for a candidate two of three accepted.
    numbers = [float(cell) for cell in row.split() if cell.replace(".", "", 1).isdigit() and "." in cell]
    assert numbers[0] == 0.67 and all(value > 0.5 for value in numbers[1:3]) and len(numbers) >= 3

    page.goto(f"{live_server.url}/benchmarks/aggregated/batches/")
    page.fill("input[name=reward]", "0.20")
    page.select_option("select[name=backend]", "mturk")
    page.click("button:has-text('Preview cost')")
    page.wait_for_selector("#budget-plan")
    plan = page.inner_text("#budget-plan")
    assert "swords" in plan and "$0.20 an assignment on the mturk queue with its fee" in plan
    # Every policy the scheme registers is planned, each with its labels.
    assert "curtail" in plan and "adaptive" in plan and "no stopping rule" not in plan
    connections.close_all()
