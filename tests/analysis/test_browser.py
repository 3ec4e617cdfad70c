"""A researcher's flow in a real browser: statistics with plots, then an export job and its download."""

import gzip
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from pytest_django.fixtures import Settings
from pytest_django.live_server_helper import LiveServer

from annotation.services import benchmark_import
from tests.base import PASSWORD, make_cast
from tests.browser import launch_chromium

# Playwright's sync API runs an event loop in this thread; the ORM calls around it are synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "swords_small.json"


@pytest.fixture
def small(settings: Settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path
    make_cast()
    benchmark_import(path_or_file=FIXTURE, benchmark_name="small")


@pytest.fixture
def page(small: None) -> Iterator[Page]:
    # The rows exist before the browser starts: ORM calls made while Playwright's sync API is
    # running leave a database session open past the test (the test database then cannot be dropped).
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        context = browser.new_context(accept_downloads=True)
        yield context.new_page()
        browser.close()


def test_a_researcher_reads_the_statistics_and_downloads_an_export(
    page: Page, live_server: LiveServer, tmp_path: Path
) -> None:
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")

    page.goto(f"{base}/benchmarks/small/")
    page.click("text=Statistics, agreement and plots")
    assert page.locator("h1").inner_text() == "Statistics of small"
    assert page.locator("svg.chart").count() == 2
    assert "Per target (SWORDS Table 2)" in page.content()

    page.click("text=exports")
    page.select_option("select[name=format]", "swords")
    page.click("text=Create export")
    row = page.locator("#export-jobs tbody tr").first
    assert "done" in row.inner_text()
    with page.expect_download() as download_info:
        row.locator("text=Download").click()
    saved = tmp_path / "download.json.gz"
    download_info.value.save_as(saved)
    assert gzip.decompress(saved.read_bytes()).decode("utf-8") == FIXTURE.read_text(encoding="utf-8")
