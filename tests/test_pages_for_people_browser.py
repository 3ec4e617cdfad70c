"""Pages read as people read them (Playwright, Debian's chromium): the benchmark page's batches table
follows the work and the batches as they come, without a reload; times are shown in the reader's
zone with UTC on hover, and in UTC, saying so, without JavaScript."""

from __future__ import annotations

import os
from datetime import UTC
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction

from annotation.changes import benchmark_changed
from annotation.models import ImportJob, ImportJobStatus
from hits.models import Batch
from tests.base import make_user
from tests.browser import signed_in, wait_until
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROWS = "document.querySelectorAll('[data-live-part=batches] tbody tr').length"


def _cell(page: Any, batch: Batch, cell: str) -> str:
    row = page.locator(f"[data-live-part=batches] tr:has(a[href='/batches/{batch.pk}/'])")
    return str(row.locator(f"[data-batch-cell={cell}]").text_content()).strip()


def test_the_batches_table_follows_the_work_and_shows_a_new_batch_without_a_reload(
    live_server: Any, browser: Any
) -> None:
    researcher = make_user("rita", researcher=True)
    benchmark = make_benchmark(targets=2, candidates=8, reward=Decimal("0.25"))
    first = step2_batch(benchmark)
    page = signed_in(browser, live_server.url, researcher).new_page()
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/")
    page.evaluate("window.stillTheSamePage = true")
    assert page.evaluate(ROWS) == 1
    assert _cell(page, first, "so_far") == "$0.00"

    assert work_once(simulated("ann"), benchmark, honest()) is not None
    wait_until(
        page,
        "([id]) => { const row = document.querySelector(`[data-live-part=batches] tr:has(a[href='/batches/${id}/'])`);"
        " return row && row.querySelector('[data-batch-cell=so_far]').textContent.trim() === '$0.25'; }",
        arg=[first.pk],
        timeout=12,
    )
    # A batch made by the pipeline (step 3) while the page is open: its refresh moves the benchmark's
    # change key as it makes the batch (docs/design.md §7).
    with transaction.atomic():
        second = Batch.objects.create(benchmark=benchmark, step=3, reward=Decimal("0.25"), assignments_per_hit=7)
        benchmark_changed(benchmark_id=benchmark.pk)
    wait_until(page, f"{ROWS} === 2", timeout=12)
    assert _cell(page, second, "projected").startswith("$")
    assert page.evaluate("window.stillTheSamePage") is True


def test_times_are_in_the_readers_zone_with_utc_on_hover_and_utc_without_javascript(
    live_server: Any, browser: Any
) -> None:
    researcher = make_user("rita", researcher=True)
    batch = step2_batch(make_benchmark(targets=1, candidates=8))
    created = batch.created_at.astimezone(UTC)

    tokyo = signed_in(browser, live_server.url, researcher, timezone_id="Asia/Tokyo", locale="en-GB").new_page()
    tokyo.goto(f"{live_server.url}/batches/{batch.pk}/")
    moment = tokyo.locator("time[data-local]").first
    wait_until(tokyo, "document.querySelector('time[data-local]').dataset.localised === '1'")
    shown = str(moment.text_content())
    assert "GMT+9" in shown, shown
    assert moment.get_attribute("title") == f"{created:%Y-%m-%d %H:%M} UTC"

    plain = signed_in(browser, live_server.url, researcher, java_script_enabled=False).new_page()
    plain.goto(f"{live_server.url}/batches/{batch.pk}/")
    assert str(plain.locator("time[data-local]").first.text_content()) == f"{created:%Y-%m-%d %H:%M} UTC"


def test_an_import_jobs_page_follows_the_job_without_reloading(live_server: Any, browser: Any) -> None:
    researcher = make_user("rita", researcher=True)
    benchmark = make_benchmark(targets=1, candidates=8)
    job = ImportJob.objects.create(benchmark_name=benchmark.name, benchmark=benchmark, file_name="words.csv")
    page = signed_in(browser, live_server.url, researcher).new_page()
    page.goto(f"{live_server.url}/import-jobs/{job.pk}/")
    page.evaluate("window.stillTheSamePage = true")
    assert page.locator("meta[http-equiv=refresh]").count() == 0
    assert page.get_attribute("#import-job", "data-status") == "pending"

    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportJobStatus.FAILED, error={"detail": "words.csv, line 3, field offset: not a number"}
    )
    wait_until(page, "document.querySelector('#import-job').dataset.status === 'failed'", timeout=12)
    assert "line 3, field offset" in str(page.text_content("#import-job-error"))
    assert page.get_attribute("#import-job", "data-refresh-seconds") is None, "it stops once the job ended"
    assert page.evaluate("window.stillTheSamePage") is True
