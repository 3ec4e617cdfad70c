"""The qualification test in a real browser (Debian's chromium): a new annotator is sent to it from
"Start working", answers it with the keyboard alone, and then gets HITs only if they passed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation.models import Label
from hits.models import Assignment, QualificationAttempt, QualificationItem
from tests.base import Cast
from tests.browser import desktop_page, log_in_with_the_keyboard, signed_in, wait_until
from tests.hits.factories import make_benchmark, make_hits
from tests.hits.qualification_data import take, with_test

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with desktop_page(browser) as page:
        yield page


def start_working(page: Any, base_url: str, username: str) -> None:
    """Log in with the keyboard and press "Start working", which has the focus."""
    log_in_with_the_keyboard(page, base_url, username)
    page.keyboard.press("Enter")


def answer_with_keys(page: Any, username: str, *, wrong: int) -> QualificationAttempt:
    """Answer every row with its key (a accept, r reject), the first ``wrong`` of them the other way,
    then Enter on the submit button (where the focus goes after the last row)."""
    page.wait_for_url("**/work/qualification/*/")
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")
    attempt = QualificationAttempt.objects.get(worker__user__username=username)
    expected = dict(QualificationItem.objects.filter(pk__in=attempt.items).values_list("pk", "expected"))
    for number, pk in enumerate(attempt.items):
        right = "a" if expected[pk] == "accept" else "r"
        page.keyboard.press(("r" if right == "a" else "a") if number < wrong else right)
    assert page.locator("#hit-answered").inner_text() == f"{len(attempt.items)} of {len(attempt.items)} answered"
    assert page.evaluate("document.activeElement.id") == "hit-submit"
    page.keyboard.press("Enter")
    page.wait_for_selector("#qualification-outcome")
    attempt.refresh_from_db()
    return attempt


def test_a_new_annotator_passes_the_test_with_the_keyboard_and_then_gets_a_hit(
    live_server: Any, page: Any, cast: Cast
) -> None:
    benchmark = make_benchmark(title="Bright words")
    hits = make_hits(benchmark, 2)
    with_test(benchmark, length=6, pass_mark=0.8)

    start_working(page, live_server.url, "alice")
    assert page.locator(".gold-group mark.target").first.inner_text() in {"bright", "quickly"}
    attempt = answer_with_keys(page, "alice", wrong=1)

    assert (attempt.correct, attempt.total, attempt.passed) == (5, 6, True)
    assert "You passed the qualification test of “Bright words”" in page.locator("#qualification-outcome").inner_text()
    assert not Label.objects.exists()
    # "Start working" on the result page has the focus and opens a HIT of the benchmark.
    page.keyboard.press("Enter")
    page.wait_for_url("**/work/assignments/*/")
    assert Assignment.objects.get(worker__user=cast.alice).hit in hits


def test_an_annotator_who_fails_the_test_never_gets_a_hit(live_server: Any, page: Any, cast: Cast) -> None:
    benchmark = make_benchmark(title="Bright words")
    make_hits(benchmark, 2)
    with_test(benchmark, length=6, pass_mark=0.8)

    start_working(page, live_server.url, "bob")
    attempt = answer_with_keys(page, "bob", wrong=2)

    assert (attempt.correct, attempt.passed) == (4, False)
    assert "You did not pass" in page.locator("#qualification-outcome").inner_text()
    # Back home, "Start working" finds nothing, says why, and never opens the test again.
    page.goto(f"{live_server.url}/work/")
    page.get_by_role("button", name="Start working").click()
    page.wait_for_url("**/work/next")
    assert (
        "You did not pass the qualification test of “Bright words”"
        in page.locator(".qualification-failed").inner_text()
    )
    page.goto(f"{live_server.url}/work/qualification/{benchmark.name}/")
    assert "You did not pass" in page.locator("#qualification-outcome").inner_text()
    assert not Assignment.objects.filter(worker__user=cast.bob).exists()
    assert QualificationAttempt.objects.filter(worker__user=cast.bob).count() == 1


AXE = Path(__file__).resolve().parent.parent / "browser_assets" / "node_modules" / "axe-core" / "axe.min.js"


def test_the_test_and_its_result_have_no_serious_accessibility_violation_on_desktop_and_phone(
    live_server: Any, browser: Any, cast: Cast
) -> None:
    benchmark = make_benchmark(title="Bright words")
    make_hits(benchmark, 1)
    test = with_test(benchmark, length=6)
    take(test, cast.bob.worker)
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: make browser-assets")
    found: dict[str, list[str]] = {}
    phone = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
    for name, user, options in (("test", cast.alice, {}), ("test, phone", cast.carol, phone), ("result", cast.bob, {})):
        page = signed_in(browser, live_server.url, user, bypass_csp=True, **options).new_page()
        page.goto(f"{live_server.url}/work/qualification/{benchmark.name}/")
        page.add_script_tag(path=str(AXE))
        results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        found[name] = [
            f"{violation['id']}: {violation['help']}"
            for violation in results["violations"]
            if violation["impact"] in {"serious", "critical"}
        ]
        page.context.close()

    assert found == {"test": [], "test, phone": [], "result": []}
