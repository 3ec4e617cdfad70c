"""Every page an annotator sees passes axe-core's checks with no serious or critical violation.

axe-core comes from the npm registry at the version tests/browser_assets/package-lock.json locks
(`make test` installs it with `npm ci`). Playwright adds it to each page as a script; the contexts
bypass the pages' Content-Security-Policy so that the test's own script may run.
"""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hits.services import assignment_submit
from tests.base import Cast
from tests.browser import signed_in
from tests.crowds.crowd_helpers import make_batch as make_mturk_batch
from tests.crowds.crowd_helpers import publish_locally
from tests.hits.factories import claim, honest_answers, make_benchmark, make_hits

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent.parent / "browser_assets" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = {"serious", "critical"}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now, one line each."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: make browser-assets")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} at "
        + json.dumps([node["target"] for node in violation["nodes"]])
        for violation in results["violations"]
        if violation["impact"] in SERIOUS
    ]


def test_the_local_queues_pages_have_no_serious_violation(live_server: Any, browser: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    done = claim(cast.alice)
    assignment_submit(assignment=done, answers=honest_answers(done.hit))
    working = claim(cast.alice)
    base = live_server.url
    found: dict[str, list[str]] = {}

    anonymous = browser.new_context(bypass_csp=True).new_page()
    anonymous.goto(f"{base}/accounts/login/")
    found["login"] = serious_violations(anonymous)

    for name, options in (("desktop", {}), ("phone", PHONE)):
        page = signed_in(browser, base, cast.alice, bypass_csp=True, **options).new_page()
        page.goto(f"{base}/work/")
        found[f"work home ({name})"] = serious_violations(page)
        page.goto(f"{base}/work/assignments/{working.pk}/")
        page.keyboard.press("a")
        page.get_by_text("Flag a problem").click()
        found[f"HIT, in progress, flag form open ({name})"] = serious_violations(page)
        page.goto(f"{base}/work/assignments/{done.pk}/")
        found[f"HIT, submitted ({name})"] = serious_violations(page)
    page.goto(f"{base}/work/next")
    found["no work"] = serious_violations(page)

    assert found == {name: [] for name in found}


def test_the_mturk_pages_have_no_serious_violation(live_server: Any, browser: Any) -> None:
    (posting,) = publish_locally(make_mturk_batch(hits=1))
    hit_url = f"{live_server.url}/mturk/hit/{posting.hit.public_token}/"
    accepted = f"assignmentId=A1&hitId={posting.external_id}&workerId=W1&turkSubmitTo=https://workersandbox.mturk.com"
    page = browser.new_context(bypass_csp=True).new_page()
    found: dict[str, list[str]] = {}

    page.goto(f"{hit_url}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    found["preview"] = serious_violations(page)
    page.goto(f"{hit_url}?{accepted}")
    found["accepted"] = serious_violations(page)
    page.goto(f"{hit_url}?assignmentId=A1&workerId=W1&hitId=WRONG&turkSubmitTo=https://workersandbox.mturk.com")
    found["refusal"] = serious_violations(page)

    assert found == {name: [] for name in found}
