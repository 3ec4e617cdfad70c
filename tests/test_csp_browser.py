"""The pages work under their Content-Security-Policy in a real browser: chromium reports no refusal."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from annotation.services import benchmark_import
from tests.base import PASSWORD, make_cast
from tests.browser import launch_chromium, wait_until
from tests.hits.factories import make_benchmark, make_hits

# Playwright's sync API runs an event loop in this thread; the ORM calls around it are synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "swords_small.json"
RESEARCHER_PAGES = [
    "/benchmarks/",
    "/benchmarks/small/",
    "/benchmarks/small/statistics/",
    "/benchmarks/small/exports/",
    "/benchmarks/small/pipeline/",
    "/benchmarks/small/batches/",
    "/batches/{batch}/",
    "/hits/{hit}/",
    "/targets/{target}/",
    "/benchmarks/small/targets/",
    "/benchmarks/small/settings/",
    "/benchmarks/small/activity/",
    "/accounts/api-token/",
    "/docs/api/",
    "/admin/",
    "/admin/hits/batch/",
    "/admin/hits/batch/{batch}/change/",
]


def _refusals(page: Any, base: str, username: str, paths: list[str]) -> list[str]:
    refused: list[str] = []
    page.on(
        "console",
        lambda message: (
            refused.append(f"{page.url}: {message.text}") if "Content Security Policy" in message.text else None
        ),
    )
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    for path in paths:
        response = page.goto(f"{base}{path}")
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")
    return refused


def test_no_page_needs_anything_its_policy_refuses(live_server: Any, tmp_path: Path, settings: Any) -> None:
    settings.MEDIA_ROOT = tmp_path
    cast = make_cast()
    cast.researcher.is_superuser = True
    cast.researcher.save()
    benchmark_import(path_or_file=FIXTURE, benchmark_name="small")
    hit = make_hits(make_benchmark(), 2)[0]
    researcher_pages = [path.format(batch=hit.batch_id, hit=hit.pk, target=hit.target_id) for path in RESEARCHER_PAGES]

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        researcher = _refusals(browser.new_context().new_page(), live_server.url, "rita", researcher_pages)
        annotator_page = browser.new_context().new_page()
        annotator = _refusals(annotator_page, live_server.url, "alice", ["/work/"])
        annotator_page.click("text=Start working")
        annotator_page.wait_for_url("**/work/assignments/*/")
        wait_until(annotator_page, "document.activeElement && document.activeElement.classList.contains('item')")
        browser.close()

    assert researcher == []
    assert annotator == []
