"""A ProLex qualification test in a real browser (Debian's chromium): an expert named for a batch is
sent to it from "Start working", types the judgments as ProLex's page takes them (1 and -), and is
offered the batch's HITs only after passing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import Benchmark, Label, Worker
from hits.models import Assignment, QualificationAttempt, QualificationItem
from hits.qualification import gold_items_read, gold_scheme, qualification_build
from hits.services import hits_generate
from tests.base import Cast
from tests.browser import desktop_page, log_in_with_the_keyboard, wait_until
from tests.hits.factories import make_benchmark, make_target

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GOLD = (
    b'{"context": "The bright student solved it.", "target": "bright", "candidate": "clever", "expected": "1"}\n'
    b'{"context": "The bright student solved it.", "target": "bright", "candidate": "table", "expected": "-1"}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "fast", "expected": "1"}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "green", "expected": "-1"}\n'
)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with desktop_page(browser) as page:
        yield page


def prolex_batch(cast: Cast) -> Benchmark:
    """A ProLex benchmark whose one batch is assigned to alice and bob, gated by a test of 4 gold items
    written 1 / -1, all shown to each expert, passed with 3 of them."""
    benchmark = make_benchmark(scheme="prolex", title="Expert words")
    for word in ("calm", "bright"):
        make_target(benchmark, word=word, pos="", candidates=["still", "serene"])
    gold = gold_scheme(benchmark).gold
    items = gold_items_read(GOLD, file="gold.jsonl", gold=gold)
    qualification_build(benchmark=benchmark, items=items, length=4, pass_mark=0.75)
    experts = [Worker.objects.get(user=cast.alice), Worker.objects.get(user=cast.bob)]
    hits_generate(benchmark=benchmark, step=1, seed=1, annotators=experts)
    return benchmark


def answer_with_prolex_keys(page: Any, username: str, *, wrong: int) -> QualificationAttempt:
    """Type every row's judgment (1 for an item that expects 1, - for one that expects -1), the first
    ``wrong`` of them the other way, then Enter on the submit button."""
    page.wait_for_url("**/work/qualification/*/")
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")
    attempt = QualificationAttempt.objects.get(worker__user__username=username)
    expected = dict(QualificationItem.objects.filter(pk__in=attempt.items).values_list("pk", "expected"))
    for number, pk in enumerate(attempt.items):
        right, other = ("1", "-") if expected[pk] == "accept" else ("-", "1")
        page.keyboard.press(other if number < wrong else right)
    assert page.locator("#hit-answered").inner_text() == f"{len(attempt.items)} of {len(attempt.items)} answered"
    assert page.evaluate("document.activeElement.id") == "hit-submit"
    page.keyboard.press("Enter")
    page.wait_for_selector("#qualification-outcome")
    attempt.refresh_from_db()
    return attempt


def test_an_expert_passes_the_prolex_test_with_1_and_minus_and_then_gets_their_hit(
    live_server: Any, page: Any, cast: Cast
) -> None:
    benchmark = prolex_batch(cast)

    log_in_with_the_keyboard(page, live_server.url, "alice")
    page.keyboard.press("Enter")
    page.wait_for_url("**/work/qualification/*/")
    # The scheme's own page: its question, its instructions and its buttons with their keys.
    html = page.content()
    assert "acceptable substitute" in html and "1 acceptable" in html and "-1 unacceptable" in html
    assert not Assignment.objects.exists()
    attempt = answer_with_prolex_keys(page, "alice", wrong=1)

    assert (attempt.correct, attempt.total, attempt.passed) == (3, 4, True)
    # Stored as the page posts them, in ProLex's words.
    assert set(attempt.answers.values()) == {"1", "-1"}
    assert "You passed the qualification test of “Expert words”" in page.locator("#qualification-outcome").inner_text()
    page.keyboard.press("Enter")
    page.wait_for_url("**/work/assignments/*/")
    assert Assignment.objects.get(worker__user=cast.alice).hit.batch.benchmark == benchmark
    assert not Label.objects.exists()


def test_an_expert_who_fails_the_prolex_test_is_never_offered_their_hits(
    live_server: Any, page: Any, cast: Cast
) -> None:
    benchmark = prolex_batch(cast)

    log_in_with_the_keyboard(page, live_server.url, "bob")
    page.keyboard.press("Enter")
    attempt = answer_with_prolex_keys(page, "bob", wrong=2)

    assert (attempt.correct, attempt.total, attempt.passed) == (2, 4, False)
    assert "You did not pass" in page.locator("#qualification-outcome").inner_text()
    page.goto(f"{live_server.url}/work/")
    page.get_by_role("button", name="Start working").click()
    page.wait_for_url("**/work/next")
    assert "You did not pass the qualification test of “Expert words”" in page.content()
    assert not Assignment.objects.filter(worker__user=cast.bob).exists()
    # Bob's share waits in the batch, reserved for him, and is never offered.
    assert benchmark.batches.get().hits.count() == 2
