"""A researcher resolves a disagreement: from the benchmark page to the queue, to an item with every
submission side by side, a decision with a reason, and the item marked resolved (Playwright, Debian's
chromium), for SWORDS and ProLex."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections
from django.db.models import Q

from annotation.models import Activity, ActivityKind, Candidate, Label
from annotation.tallies import tallies_targets_recount
from review.models import CandidateOverride, ItemResolution
from schemes.scores import category_of
from tests.base import Cast
from tests.browser import signed_in
from tests.hits.assignment_data import worker
from tests.scheme_benchmarks import scheme_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("scheme_name", ["swords", "prolex"])
def test_a_researcher_overrides_a_contested_candidate_with_a_reason(
    live_server: Any, browser: Any, cast: Cast, scheme_name: str
) -> None:
    benchmark, _ = scheme_benchmark(scheme_name, cast)
    # Alice accepted every candidate of her HIT; an imported accept and reject make one of them contested
    # (1 of 2, or 2 of 3 where spam filtering kept her work).
    contested = Candidate.objects.filter(target__benchmark=benchmark, labels__value="accept").order_by("pk").first()
    assert contested is not None
    Label.objects.create(candidate=contested, value="accept", origin="file.json", worker=worker("judge0"))
    Label.objects.create(candidate=contested, value="reject", origin="file.json", position=1, worker=worker("judge1"))
    # Written here as an import would write them: its tallies follow (annotation.tallies).
    tallies_targets_recount(target_ids=[contested.target_id])
    valid = contested.labels.filter(Q(assignment__isnull=True) | Q(assignment__filtered=False))
    crowd_category = category_of(valid.filter(value="accept").count() / valid.count())
    labels = Label.objects.count()
    connections.close_all()

    context = signed_in(browser, live_server.url, cast.researcher, viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/")
    page.click("a.button:has-text('Adjudication')")
    page.wait_for_selector("#found")
    assert "1 item with disagreement" in page.inner_text("#found")
    page.click("table >> a:has-text('sat')")
    page.wait_for_selector("#side-by-side")
    row = page.locator(f"#side-by-side tr[data-candidate='{contested.pk}']")
    assert contested.text in row.inner_text()
    # Alice's label as submitted, beside the imported one, under a pseudonym.
    assert "accept" in row.inner_text() and "alice" not in page.inner_text("main")

    # A decision without a reason is refused, and says why.
    row.locator("select[name=decision]").select_option("inconceivable")
    row.locator("button:has-text('Save decision')").click()
    page.wait_for_selector("text=Give a reason")
    assert not CandidateOverride.objects.exists()

    row = page.locator(f"#side-by-side tr[data-candidate='{contested.pk}']")
    row.locator("select[name=decision]").select_option("inconceivable")
    row.locator("textarea[name=reason]").fill("The sense of “sat” here is not this one.")
    row.locator("button:has-text('Save decision')").click()
    page.wait_for_selector(f"#side-by-side tr[data-candidate='{contested.pk}'] .decision")
    shown = page.inner_text(f"#side-by-side tr[data-candidate='{contested.pk}'] .decision")
    assert "inconceivable" in shown and "not this one" in shown
    # The crowd still decides the figures until the benchmark applies decisions.
    assert page.inner_text(f"#side-by-side tr[data-candidate='{contested.pk}'] .category") == crowd_category

    page.click("button:has-text('Mark resolved')")
    page.wait_for_selector("#resolved-badge")
    page.click("#to-queue")
    page.wait_for_selector("text=No item waits for a decision.")
    page.click("button:has-text('Apply decisions to the figures')")
    page.wait_for_selector("#apply-state >> text=follow researchers' decisions")
    context.close()

    override = CandidateOverride.objects.get()
    assert (override.candidate_id, override.decision) == (contested.pk, "inconceivable")
    assert Label.objects.count() == labels
    assert ItemResolution.objects.filter(target=contested.target).exists()
    assert Activity.objects.filter(benchmark=benchmark, kind=ActivityKind.OVERRIDDEN).count() == 1
    connections.close_all()
