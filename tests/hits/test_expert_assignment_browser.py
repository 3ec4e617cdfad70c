"""A researcher assigns ProLex targets to two experts in the browser, and each expert judges only
their own with the keyboard, the ProLex guidelines on the page (Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections

from annotation.models import Label
from hits.models import Answer, Assignment, HITReservation
from tests.base import make_user
from tests.browser import log_in, wait_until
from tests.hits.factories import make_benchmark, make_target

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1000, "height": 900}


def test_experts_judge_only_the_targets_assigned_to_them(live_server: Any, browser: Any) -> None:
    make_user("rita", researcher=True)
    for name in ("alice", "bob", "carol"):
        make_user(name)
    benchmark = make_benchmark("experts", scheme="prolex")
    for word in ("calm", "bright", "quick"):
        make_target(benchmark, word=word, pos="", candidates=["still", "serene"])

    researcher = log_in(browser, live_server.url, "rita", viewport=VIEWPORT)
    researcher.goto(f"{live_server.url}/benchmarks/experts/")
    researcher.click("text=Assignments to annotators")
    researcher.select_option("select[name=annotators]", ["alice", "bob"])
    researcher.fill("input[name=overlap]", "1")
    researcher.fill("input[name=seed]", "4")
    researcher.click("button:has-text('Generate HITs')")
    researcher.wait_for_selector("h1:has-text('Batch')")
    researcher.goto(f"{live_server.url}/benchmarks/experts/assignments/")
    rows = researcher.inner_text("table")
    assert "alice" in rows and "bob" in rows and "carol" not in rows

    expert = log_in(browser, live_server.url, "alice", viewport=VIEWPORT)
    expert.click("button:has-text('Start working')")
    expert.wait_for_url("**/work/assignments/*/")
    wait_until(expert, "document.activeElement && document.activeElement.classList.contains('item')")
    assert "ProLex guidelines and examples" in expert.inner_text("main")
    assert "1 acceptable" in expert.inner_text("main") and "0 uncertain" in expert.inner_text("main")
    first = Assignment.objects.get(worker__user__username="alice")
    expert.keyboard.press("1")
    expert.keyboard.press("-")
    expert.keyboard.press("Enter")
    expert.wait_for_url(lambda url: f"/work/assignments/{first.pk}/" not in url)
    assert sorted(Answer.objects.filter(assignment=first).values_list("value", flat=True)) == ["-1", "1"]

    outsider = log_in(browser, live_server.url, "carol", viewport=VIEWPORT)
    outsider.click("button:has-text('Start working')")
    outsider.wait_for_load_state()
    assert not Assignment.objects.filter(worker__user__username="carol").exists()

    mine = set(HITReservation.objects.filter(worker__user__username="alice").values_list("hit_id", flat=True))
    assert set(Assignment.objects.filter(worker__user__username="alice").values_list("hit_id", flat=True)) <= mine
    assert set(Label.objects.filter(assignment=first).values_list("step", flat=True)) == {1}
    connections.close_all()
