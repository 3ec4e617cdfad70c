"""An annotator opens their work home, sees two projects and starts the second: the HIT it opens
names that project (Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from annotation.models import Worker
from hits.models import Assignment
from hits.services import hits_generate
from tests.base import make_user
from tests.browser import log_in
from tests.hits.factories import make_benchmark, make_hits, make_target

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent.parent / "browser_assets" / "node_modules" / "axe-core" / "axe.min.js"


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: make browser-assets")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{violation['id']}: {[node['target'] for node in violation['nodes']]}"
        for violation in results["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


def test_an_annotator_starts_the_second_project_and_its_hit_names_it(live_server: Any, browser: Any) -> None:
    make_user("alice")
    make_hits(make_benchmark("lexsub", title="Substitutes in context"), 2)
    experts = make_benchmark("experts", title="Expert judgments", scheme="prolex")
    for word in ("calm", "bright"):
        make_target(experts, word=word, pos="", candidates=["still", "serene"])
    second = hits_generate(benchmark=experts, step=1, seed=1, annotators=[Worker.objects.get(external_id="alice")])

    # The page's Content-Security-Policy is bypassed so that axe-core's script may run.
    page = log_in(browser, live_server.url, "alice", bypass_csp=True)
    assert serious_violations(page) == []
    titles = page.locator(".project-title").all_inner_texts()
    assert titles == ["Substitutes in context", "Expert judgments"]
    assert "Judge each generated substitute" in page.inner_text(f".project[data-batch='{second.pk}']")
    page.get_by_role("button", name="Start “Expert judgments”").click()
    page.wait_for_url("**/work/assignments/*/")

    assert page.inner_text("#hit-project") == "Project: Expert judgments"
    assignment = Assignment.objects.get(worker__external_id="alice")
    assert assignment.hit.batch_id == second.pk
    assert page.url.endswith(f"/work/assignments/{assignment.pk}/")
