"""A researcher walks the data browser on a phone (Playwright, Debian's chromium): from the benchmark page
to each table, filtering, sorting and paging with the keyboard reaching each table's labelled
scrolling region, following a candidate to its labels and a worker to theirs, saving a view and
downloading the view as CSV; axe-core finds nothing serious or critical at 320 CSS px, for SWORDS and
ProLex."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from analysis.models import SavedView
from annotation.models import Candidate, Label, Target, Worker, WorkerKind
from annotation.tallies import tallies_benchmark_recount
from tests.base import Cast
from tests.browser import signed_in
from tests.scheme_benchmarks import scheme_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent.parent / "browser_assets" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"viewport": {"width": 320, "height": 640}, "is_mobile": True, "has_touch": True}
TABLES = ("Targets", "Candidates", "Labels", "HITs", "Workers")


def serious(page: Any) -> list[str]:
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: make browser-assets")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{violation['id']}: {violation['help']} at {json.dumps([node['target'] for node in violation['nodes']][:3])}"
        for violation in results["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


def fits(page: Any) -> None:
    """No sideways scroll of the page; the table scrolls in a labelled region the keyboard reaches."""
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    region = page.locator(".table-scroll")
    assert region.get_attribute("role") == "region" and region.get_attribute("aria-label")
    assert region.get_attribute("tabindex") == "0"


@pytest.mark.parametrize("scheme_name", ["swords", "prolex"])
def test_a_researcher_walks_filters_sorts_pages_saves_and_downloads_on_a_phone(
    live_server: Any, browser: Any, cast: Cast, scheme_name: str, settings: Any
) -> None:
    settings.DATA_BROWSER_PAGE_SIZE = 3
    benchmark, _ = scheme_benchmark(
        scheme_name,
        cast,
        sentences=tuple(f"The cat sat on the long-named mat number {index} all afternoon." for index in range(3)),
        candidates=("perched", "rested", "squatted", "lounged-about-the-place"),
    )
    target = Target.objects.filter(benchmark=benchmark).order_by("pk").first()
    assert target is not None
    judge = Worker.objects.create(kind=WorkerKind.IMPORTED, external_id="judge-with-a-long-name")
    perched = Candidate.objects.get(target=target, text="perched")
    for position, value in enumerate(["accept", "reject"]):
        Label.objects.create(candidate=perched, value=value, origin="file", position=position, worker=judge)
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    connections.close_all()

    context = signed_in(browser, live_server.url, cast.researcher, bypass_csp=True, accept_downloads=True, **PHONE)
    page = context.new_page()
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/")
    page.click("a:has-text('Data browser')")
    page.wait_for_url("**/data/items/")
    for title in TABLES:
        page.click(f"nav[aria-label='Tables of the data browser'] >> text={title}")
        page.wait_for_selector(f"h1:has-text('{title} of')")
        fits(page)
        assert serious(page) == [], title

    # The keyboard reaches the table's region: tab from the last control of the filter form.
    page.click("nav >> text=Candidates")
    page.focus("form[role=search] a:has-text('Clear')")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('table-scroll')")

    # Filter by the target, sort by score (descending) from the column's header, page on.
    page.fill("#filter-target", str(target.pk))
    page.click("form[role=search] button:has-text('Show')")
    page.wait_for_selector("#found")
    assert "4 rows" in page.inner_text("#found")
    page.click("th >> a:has-text('Score')")
    page.click("th >> a:has-text('Score')")
    page.wait_for_selector("th[aria-sort=descending]")
    first_page = page.inner_text("tbody")
    shown = [line.split("\t") for line in first_page.splitlines()]
    # Unscored candidates (no label yet) come after every score.
    scores = [float(row[7] or -1) for row in shown]
    assert len(shown) == 3 and scores == sorted(scores, reverse=True)
    page.click("a[rel=next]")
    page.wait_for_selector("a[rel=prev]")
    assert len(page.locator("tbody tr").all()) == 1
    assert float(page.inner_text("tbody").split("\t")[7] or -1) <= scores[-1]
    page.click("a[rel=prev]")
    page.wait_for_selector("a[rel=next]")
    assert page.inner_text("tbody") == first_page

    # Save the view; it is listed and opens again.
    page.fill("#view-name", "best of the first target")
    page.click("button:has-text('Save view')")
    page.wait_for_selector("text=View “best of the first target” saved.")
    saved = SavedView.objects.get(benchmark=benchmark)
    assert "sort=score" in saved.query and f"target={target.pk}" in saved.query
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/data/candidates/")
    page.click("a:has-text('best of the first target')")
    page.wait_for_selector("th[aria-sort=descending]")
    assert page.inner_text("tbody") == first_page

    # Rename it; the activity log says so.
    page.fill("input[aria-label='New name of the view best of the first target']", "top scores")
    page.click("button[aria-label='Rename the view best of the first target']")
    page.wait_for_selector("text=View “best of the first target” renamed “top scores”.")
    assert SavedView.objects.get(pk=saved.pk).name == "top scores"
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/activity/")
    page.wait_for_selector("text=renamed the view “best of the first target” of the candidates table to “top scores”")
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/data/candidates/")
    page.click("a:has-text('top scores')")
    page.wait_for_selector("th[aria-sort=descending]")

    # The CSV is the whole view, not the page.
    with page.expect_download() as download:
        page.click("a:has-text('Download the view as CSV')")
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text())))
    assert len(rows) == 1 + 4 and [row[1] for row in rows[1:4]] == [row[1] for row in shown]

    # A candidate leads to its labels, a worker to theirs.
    page.fill("#filter-q", "perched")
    page.click("form[role=search] button:has-text('Show')")
    page.wait_for_selector("text=1 row in this view")
    page.click("tbody >> a:has-text('perched') >> nth=0")
    page.wait_for_url("**/data/labels/?candidate=*")
    assert "judge-with-a-long-name" in page.inner_text("tbody")
    page.click("tbody >> a:has-text('judge-with-a-long-name') >> nth=0")
    page.wait_for_url(f"**/data/labels/?worker={judge.pk}")
    assert len(page.locator("tbody tr").all()) == 2
    fits(page)
    assert serious(page) == []
    context.close()
    connections.close_all()
