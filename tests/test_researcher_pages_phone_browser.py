"""Every researcher page fits a phone (WCAG 1.4.10, reflow at 320 CSS px): the page never scrolls
sideways, a wide table scrolls inside its own labelled region that the keyboard reaches, and axe-core
finds no serious or critical violation at that width; for a benchmark of every scheme a benchmark may
take, each holding work of its own scheme.

The pages are read from the URL resolver (every pattern of the rooms that is not an API, an
annotator's page or a crowd's public page), so a page added later is walked without a change here;
each benchmark holds targets, candidates, a batch with a submitted assignment, and a batch on MTurk and
on Prolific, so pages show collected work and not only empty tables.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from analysis.exports import export_formats
from analysis.figures import offers_evaluation
from analysis.models import ExportJob
from annotation.models import Benchmark, ImportJob
from hits.models import HIT, Batch
from schemes import get_scheme
from schemes.base import scheme_qualification
from tests.base import Cast
from tests.browser import signed_in
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "browser_assets" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = {"serious", "critical"}
PHONE = {"viewport": {"width": 320, "height": 640}, "is_mobile": True, "has_touch": True}
ROOMS = {"annotation", "hits", "crowds", "review", "analysis", "schemes"}
# Annotators' pages and the crowds' public pages have their own checks
# (tests/hits/test_annotator_accessibility_browser.py); these are the researchers'.
NOT_RESEARCHER = ("api/", "work/", "mturk/", "prolific/", "^mturk/", "^prolific/", "accounts/", "admin/", "docs/")
# The pages a researcher uses daily: the walk must reach each of them, so it cannot pass by reaching none.
DAILY = {
    "benchmark-list",
    "benchmark-detail",
    "benchmark-activity",
    "benchmark-settings",
    "batch-list",
    "batch-detail",
    "batch-crowd",
    "hit-detail",
    "pipeline-progress",
    "pipeline-workers",
    "analysis-statistics",
    "analysis-exports",
    "analysis-evaluation",
    "target-list",
    "target-detail",
    "qualification-detail",
    "import-job",
    "data-items",
    "data-candidates",
    "data-labels",
    "data-hits",
    "data-workers",
    "batch-design",
    "design-template",
    "batch-worker-preview",
    "adjudication-queue",
    "adjudication-item",
}

# The pages a scheme serves for its own figures, which the walk must reach for a benchmark of that scheme.
SCHEME_DAILY = {"sws": {"analysis-sws-suggestions"}}


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def researcher_routes() -> list[tuple[str, str]]:
    """(name, route) of every page pattern of the rooms a researcher reads."""
    found = []
    for route, pattern in _walk(get_resolver().url_patterns):
        view = getattr(pattern.callback, "view_class", pattern.callback)
        if view.__module__.split(".")[0] in ROOMS and not route.startswith(NOT_RESEARCHER) and pattern.name:
            found.append((pattern.name, route))
    return sorted(found)


def make_benchmark(scheme_name: str, cast: Cast) -> tuple[Benchmark, dict[str, int]]:
    """A benchmark of ``scheme_name`` with collected work and long words; the ids its pages take, by the
    converter's name."""
    sentences = tuple(
        f"The cat sat on the long-named mat number {index} all through the grey afternoon." for index in range(3)
    )
    benchmark, local = scheme_benchmark(
        scheme_name,
        cast,
        title="A benchmark read on a phone",
        sentences=sentences,
        candidates=("perched", "rested", "squatted", "lounged"),
    )
    ids = {"pk": local.pk, "batch_id": local.pk}
    for backend in ("mturk", "prolific"):
        batch = Batch.objects.create(
            benchmark=benchmark, step=local.step, backend=backend, assignments_per_hit=3, reward=Decimal("0.50")
        )
        ids[backend] = batch.pk
    job = ImportJob.objects.create(
        benchmark_name=benchmark.name,
        benchmark=benchmark,
        file_name="a-rather-long-file-name-of-an-upload-from-the-lab-share-2026-11-27.csv",
        created_by=cast.researcher,
    )
    ids["job_id"] = job.pk
    ExportJob.objects.create(benchmark=benchmark, format=export_formats(benchmark)[0].name, created_by=cast.researcher)
    ids["hit"] = HIT.objects.filter(batch=local).first().pk  # type: ignore[union-attr]
    ids["target"] = benchmark.targets.first().pk  # type: ignore[union-attr]
    # The adjudication page of an item with a submission on it.
    ids["target_id"] = benchmark.targets.filter(hits__assignments__isnull=False).first().pk  # type: ignore[union-attr]
    return benchmark, ids


def daily(benchmark: Benchmark) -> set[str]:
    """The daily pages the benchmark's scheme offers (the evaluation and the qualification test only
    where the scheme declares them), and the scheme's own pages."""
    offered = DAILY - {"analysis-evaluation", "qualification-detail"}
    if offers_evaluation(benchmark):
        offered.add("analysis-evaluation")
    if scheme_qualification(get_scheme(benchmark)) is not None:
        offered.add("qualification-detail")
    return offered | SCHEME_DAILY.get(benchmark.scheme, set())


def page_urls(client: Client, benchmark: Benchmark, ids: dict[str, int]) -> dict[str, list[str]]:
    """Each route's URLs for the benchmark that answer a page (200, HTML) to a GET."""

    def filled(route: str) -> str:
        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", lambda match: value(route, match.group(2)), route)

    def value(route: str, key: str) -> str:
        if key == "name":
            return benchmark.name
        if route.startswith("hits/"):
            return str(ids["hit"])
        if route.startswith("targets/"):
            return str(ids["target"])
        return str(ids.get(key, 1))

    urls: dict[str, list[str]] = {}
    for name, route in researcher_routes():
        if route.startswith("batches/<int:pk>/crowd/"):
            rest = route.split("/crowd/")[1]
            candidates = [f"/batches/{ids[backend]}/crowd/{rest}" for backend in ("mturk", "prolific")]
        else:
            candidates = [filled(route)]
        for url in candidates:
            answer = client.get(url)
            if answer.status_code == 200 and answer.get("Content-Type", "").startswith("text/html"):
                urls.setdefault(name, []).append(url)
    return urls


def serious_violations(page: Any) -> list[str]:
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: make browser-assets")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} at "
        + json.dumps([node["target"] for node in violation["nodes"]][:3])
        for violation in results["violations"]
        if violation["impact"] in SERIOUS
    ]


# Wider than the viewport: the page itself (the root scrolls), or an element outside any scroll region.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  if (document.documentElement.scrollWidth > width) wide.push(`page ${document.documentElement.scrollWidth}px`);
  for (const region of document.querySelectorAll('.table-scroll')) {
    if (region.getAttribute('role') !== 'region' || !region.getAttribute('aria-label') || region.tabIndex !== 0) {
      wide.push(`unlabelled scroll region around ${region.firstElementChild && region.firstElementChild.tagName}`);
    }
  }
  for (const table of document.querySelectorAll('table')) {
    if (!table.closest('.table-scroll')) wide.push(`table outside a scroll region: ${table.innerText.slice(0, 40)}`);
  }
  return wide;
}"""


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_every_researcher_page_fits_a_phone_at_320_css_pixels(
    live_server: Any, browser: Any, cast: Cast, scheme_name: str
) -> None:
    benchmark, ids = make_benchmark(scheme_name, cast)
    client = Client(raise_request_exception=True)
    client.force_login(cast.researcher)
    urls = page_urls(client, benchmark, ids)
    expected = daily(benchmark)
    assert set(urls) >= expected, f"pages the walk did not reach: {sorted(expected - set(urls))}"
    assert len(urls["batch-crowd"]) == 2, "the publish pages of MTurk and of Prolific"
    connections.close_all()

    context = signed_in(browser, live_server.url, cast.researcher, bypass_csp=True, **PHONE)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    for listed in urls.values():
        for url in listed:
            page.goto(live_server.url + url)
            found[url] = page.evaluate(OVERFLOW) + serious_violations(page)
    context.close()
    wrong = "\n".join(f"{url}: {problem}" for url, problems in found.items() for problem in problems)
    assert not wrong, f"{scheme_name} pages that do not fit a phone:\n{wrong}"
    assert len(found) >= len(expected)


def test_the_prolific_publish_page_fits_a_desktop(live_server: Any, browser: Any, cast: Cast) -> None:
    _, ids = make_benchmark("swords", cast)
    connections.close_all()
    page = signed_in(browser, live_server.url, cast.researcher, viewport={"width": 1100, "height": 900}).new_page()
    for backend in ("mturk", "prolific"):
        page.goto(f"{live_server.url}/batches/{ids[backend]}/crowd/")
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
