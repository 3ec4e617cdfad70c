"""What the annotator's page does for the annotator, in a real browser (docs/annotator.md): the
countdown, the answered counter, answers and time that survive a reload, the question before a
return, shortcuts only in the rows, a flag that reaches the researcher, and the sticky text on a phone."""

import os
import re
from datetime import timedelta
from typing import Any

import pytest

from annotation.models import CandidateStage
from hits.models import Assignment, AssignmentStatus, HITFlag, HITFlagReason
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.browser import signed_in, wait_until
from tests.hits.factories import claim, make_benchmark, make_hits

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def open_hit(browser: Any, base_url: str, user: Any, **options: Any) -> tuple[Any, Assignment]:
    """``user`` claims the next HIT and opens its page; the page script has put the focus on a row."""
    assignment = claim(user)
    page = signed_in(browser, base_url, user, **options).new_page()
    page.goto(f"{base_url}/work/assignments/{assignment.pk}/")
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")
    return page, assignment


def checked(page: Any) -> list[str]:
    return page.eval_on_selector_all("#hit-form input[type=radio]:checked", "inputs => inputs.map(i => i.value)")


def test_the_countdown_ticks_down_and_says_when_the_time_is_up(live_server: Any, browser: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 1, assignment_duration=timedelta(seconds=8))
    page, _ = open_hit(browser, live_server.url, cast.alice)
    countdown = page.locator(".hit-countdown")
    first = countdown.inner_text()
    assert re.fullmatch(r"[1-8] s left", first)
    assert page.locator("#hit-time-up").is_hidden()

    wait_until(page, "text => document.querySelector('.hit-countdown').textContent !== text", arg=first)
    page.locator("#hit-time-up").wait_for(state="visible", timeout=10_000)

    assert countdown.inner_text() == "0 s left"
    assert "Your time for this HIT is up" in page.locator("#hit-time-up").inner_text()


def test_the_counter_follows_the_answers(live_server: Any, browser: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    page, _ = open_hit(browser, live_server.url, cast.alice)
    counter = page.locator("#hit-answered")
    assert counter.inner_text() == "0 of 6 answered"

    page.keyboard.press("a")
    page.keyboard.press("r")
    assert counter.inner_text() == "2 of 6 answered"
    page.locator("li.item").nth(4).locator("label.choice.abstain").click()
    assert counter.inner_text() == "3 of 6 answered"


def test_a_reload_keeps_the_answers_and_the_time_on_page(live_server: Any, browser: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    page, assignment = open_hit(browser, live_server.url, cast.alice)
    page.keyboard.press("a")
    page.keyboard.press("r")
    page.wait_for_timeout(2_000)

    page.reload()
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")

    assert checked(page) == ["accept", "reject"]
    assert page.locator("#hit-answered").inner_text() == "2 of 6 answered"
    # The focus waits on the first row still open.
    assert page.evaluate("document.activeElement.dataset.number") == "3"
    for key in ["a", "a", "r", "a", "Enter"]:
        page.keyboard.press(key)
    page.wait_for_url(lambda url: f"/work/assignments/{assignment.pk}/" not in url)
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    # The two seconds before the reload count: the time on page did not start again from zero.
    assert assignment.seconds_on_page is not None and assignment.seconds_on_page >= 2.0


def test_returning_a_hit_with_answers_asks_first(live_server: Any, browser: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    page, assignment = open_hit(browser, live_server.url, cast.alice)
    questions: list[str] = []

    def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        if len(questions) == 1:
            dialog.dismiss()
        else:
            dialog.accept()

    page.on("dialog", answer)
    page.keyboard.press("a")
    page.get_by_role("button", name="Return this HIT").click()
    assert questions == ["You have answered 1 of 6 rows. Return this HIT anyway? These answers will not be saved."]
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.CLAIMED

    page.get_by_role("button", name="Return this HIT").click()
    page.wait_for_url("**/work/")
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.RETURNED

    # Nothing answered yet: nothing to lose, no question.
    second, other = open_hit(browser, live_server.url, cast.alice)
    second.on("dialog", answer)
    second.get_by_role("button", name="Return this HIT").click()
    second.wait_for_url("**/work/")
    other.refresh_from_db()
    assert other.status == AssignmentStatus.RETURNED and len(questions) == 2


def test_single_key_shortcuts_work_only_in_the_rows_and_can_be_turned_off(
    live_server: Any, browser: Any, cast: Cast
) -> None:
    make_hits(make_benchmark(), 1)
    page, _ = open_hit(browser, live_server.url, cast.alice)

    # The examples are in the tab order, one Shift+Tab above the rows, and Enter folds them.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.textContent") == "Examples and tips"
    assert page.locator(".instructions details").get_attribute("open") == ""
    page.keyboard.press("Enter")
    assert page.locator(".instructions details").get_attribute("open") is None
    page.keyboard.press("a")
    assert checked(page) == []

    page.get_by_text("Flag a problem").click()
    page.locator("#flag-note").focus()
    page.keyboard.type("ar")
    assert page.locator("#flag-note").input_value() == "ar"
    assert checked(page) == []

    page.locator("li.item").first.focus()
    page.keyboard.press("a")
    assert checked(page) == ["accept"]

    page.get_by_label("Single-key shortcuts").uncheck()
    assert page.locator("#keyboard-help").is_hidden()
    page.locator("li.item").nth(1).focus()
    page.keyboard.press("r")
    page.keyboard.press("j")
    assert checked(page) == ["accept"]
    # Arrows are no single-character shortcut: they still move between rows.
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.number") == "3"

    page.reload()
    assert not page.get_by_label("Single-key shortcuts").is_checked()
    assert checked(page) == ["accept"]


def test_a_flag_reaches_the_researcher_who_excludes_the_candidate(live_server: Any, browser: Any, cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    page, assignment = open_hit(browser, live_server.url, cast.alice)
    page.keyboard.press("a")
    row = assignment.hit.items.filter(kind=ItemKind.CANDIDATE).order_by("position").last()
    assert row is not None and row.candidate is not None

    page.get_by_text("Flag a problem").click()
    page.locator("#flag-item").select_option(str(row.pk))
    page.get_by_label("Offensive content").check()
    page.locator("#flag-note").fill("rude in this sense")
    page.get_by_role("button", name="Send the flag").click()

    page.get_by_text("Thank you: your flag was sent to the researchers.").wait_for()
    assert page.url.endswith(f"/work/assignments/{assignment.pk}/")
    assert checked(page) == ["accept"]
    flag = HITFlag.objects.get()
    assert (flag.item_id, flag.reason, flag.note) == (row.pk, HITFlagReason.OFFENSIVE, "rude in this sense")

    researcher = signed_in(browser, live_server.url, cast.researcher).new_page()
    researcher.goto(f"{live_server.url}/hits/{assignment.hit_id}/")
    flags = researcher.locator("#flags + .table-scroll")
    assert "rude in this sense" in flags.inner_text() and "Offensive content" in flags.inner_text()
    researcher.get_by_role("button", name=f"Exclude “{row.text}”").click()
    # Excluding asks first (crowdlex.confirm), with what it will do.
    researcher.get_by_role("button", name="Exclude the candidate").click()
    researcher.get_by_text(f"“{row.text}” is excluded").wait_for()
    row.candidate.refresh_from_db()
    assert row.candidate.stage == CandidateStage.EXCLUDED


def test_on_a_phone_the_text_stays_in_view_and_every_control_is_at_least_44_px(
    live_server: Any, browser: Any, cast: Cast
) -> None:
    make_hits(make_benchmark(), 1)
    page, _ = open_hit(browser, live_server.url, cast.alice, **PHONE)

    page.locator("#hit-submit").scroll_into_view_if_needed()
    wait_until(page, "window.scrollY > 300")

    text = page.locator(".hit-context").bounding_box()
    assert text is not None and abs(text["y"]) < 1 and text["height"] < 844 / 2
    assert page.locator(".context-text mark.target").is_visible()
    last_row = page.locator("li.item").last.bounding_box()
    assert last_row is not None and last_row["y"] >= text["y"] + text["height"]
    # Moving up with the keyboard brings each row out from under the text.
    page.locator("li.item").last.focus()
    for number in range(5, 0, -1):
        page.keyboard.press("ArrowUp")
        row = page.locator(f"li.item[data-number='{number}']").bounding_box()
        assert row is not None and row["y"] >= text["y"] + text["height"]
    controls = page.locator("main").locator("label.choice, button, summary, select")
    sizes = [controls.nth(i).bounding_box() for i in range(controls.count()) if controls.nth(i).is_visible()]
    assert len(sizes) >= 6 * 3
    assert min(min(box["width"], box["height"]) for box in sizes if box) >= 44
