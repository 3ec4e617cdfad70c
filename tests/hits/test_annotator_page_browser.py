"""The annotator's page in a real browser: keyboard-only work, the every-row check, escaping."""

import os
from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import Label
from hits.models import Answer, Assignment, AssignmentStatus
from tests.base import Cast
from tests.browser import desktop_page, log_in_with_the_keyboard, wait_until
from tests.hits.factories import make_batch, make_benchmark, make_hit, make_hits, make_target

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with desktop_page(browser) as page:
        yield page


def start_with_the_keyboard(page: Any) -> None:
    page.keyboard.press("Enter")  # "Start working" has the focus
    page.wait_for_url("**/work/assignments/*/")
    # The page's script puts the focus on the first row once it has run.
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")


def test_an_annotator_completes_a_hit_with_the_keyboard_only(live_server: Any, page: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    log_in_with_the_keyboard(page, live_server.url, "alice")

    start_with_the_keyboard(page)
    assignment = Assignment.objects.get(worker__user=cast.alice)
    rows = list(assignment.hit.items.order_by("position"))
    assert len(rows) == 6
    # a: accept (the focus moves on), 2: reject, s: abstain, then back up with k and
    # change row 3 to reject, ArrowDown past row 4 is not needed: choosing moves on.
    for key in ["a", "2", "s", "k", "r", "1", "3", "j", "ArrowUp", "ArrowDown"]:
        page.keyboard.press(key)
    # Row 6 is the only one left; the focus is on it after moving down from row 5.
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: f"/work/assignments/{assignment.pk}/" not in url)

    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    stored = dict(Answer.objects.filter(assignment=assignment).values_list("item_id", "value"))
    assert [stored[item.pk] for item in rows] == ["accept", "reject", "reject", "accept", "abstain", "accept"]
    assert Label.objects.filter(assignment=assignment).count() == 4
    assert assignment.seconds_on_page is not None and assignment.seconds_on_page > 0
    # Submitting led straight to the next HIT.
    assert Assignment.objects.filter(worker__user=cast.alice, status=AssignmentStatus.CLAIMED).count() == 1


def test_a_submit_with_an_unanswered_row_is_refused_in_the_page(live_server: Any, page: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    log_in_with_the_keyboard(page, live_server.url, "alice")
    start_with_the_keyboard(page)
    url = page.url
    assignment = Assignment.objects.get(worker__user=cast.alice)
    third = assignment.hit.items.order_by("position")[2]

    for key in ["a", "a", "j", "r", "r", "a"]:  # row 3 skipped with j
        page.keyboard.press(key)
    page.keyboard.press("Enter")

    error = page.locator("#hit-error")
    error.wait_for(state="visible")
    assert "row 3" in error.inner_text()
    assert page.evaluate("document.activeElement.id") == f"row-{third.pk}"
    assert page.url == url
    assert not Answer.objects.exists()
    # Answering the row clears the mark, and the submit goes through.
    page.keyboard.press("s")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda current: current != url)
    assert Answer.objects.filter(assignment=assignment, item=third).get().value == "abstain"


def test_a_context_containing_a_script_shows_as_text(live_server: Any, page: Any, cast: Cast) -> None:
    benchmark = make_benchmark()
    text = "<script>window.pwned = true</script> The <b>cat</b> sat on the mat."
    make_hit(
        make_batch(benchmark), make_target(benchmark, text=text, word="sat"), distractor="<img src=x onerror=alert(1)>"
    )
    log_in_with_the_keyboard(page, live_server.url, "alice")
    start_with_the_keyboard(page)

    assert page.locator(".context-text").inner_text() == text
    assert page.locator(".context-text mark.target").inner_text() == "sat"
    assert page.locator(".context-text b").count() == 0
    assert page.evaluate("window.pwned === undefined")
    # The row shows the distractor as text, and so does the flag form's list of rows.
    assert page.locator(".items").get_by_text("<img src=x onerror=alert(1)>").count() == 1
    assert page.locator("#flag-item option", has_text="<img src=x onerror=alert(1)>").count() == 1
    assert page.locator("img").count() == 0
