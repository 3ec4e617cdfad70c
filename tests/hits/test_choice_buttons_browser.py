"""The answer buttons of a choice scheme's page, ProLex and SWORDS, on a desktop and on a phone: they
never overlap, every key hint shows inside its button, the page never scrolls sideways, and each
key a button shows records the value that button names, in the stored answers and labels
(Playwright, Debian's chromium)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections

from annotation.models import Label
from hits.models import Answer, Assignment, AssignmentStatus
from hits.services import hits_generate
from schemes.prolex.rules import LABEL_OF_ANSWER
from tests.base import Cast
from tests.browser import signed_in, wait_until
from tests.hits.factories import make_benchmark, make_hits, make_target

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}

# What each key records, as docs/annotator.md documents it: ProLex's keys type the value itself.
PROLEX_KEYS = {"1": "1", "-": "-1", "0": "0"}
SWORDS_KEYS = {"1": "accept", "a": "accept", "2": "reject", "r": "reject", "3": "abstain", "s": "abstain"}

# Every button of every row, with its box, its label's box and its key hints (text, box, visible).
LAYOUT = """() => {
  const box = (element) => {
    const r = element.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
  };
  const shown = (element) => {
    const style = getComputedStyle(element);
    const r = element.getBoundingClientRect();
    return style.display !== "none" && style.visibility === "visible" && r.width > 0 && r.height > 0;
  };
  return {
    documentWidth: document.documentElement.scrollWidth,
    viewportWidth: document.documentElement.clientWidth,
    rows: Array.from(document.querySelectorAll("li.item")).map((row) =>
      Array.from(row.querySelectorAll("label.choice")).map((button) => ({
        value: button.querySelector("input").value,
        box: box(button),
        label: box(button.querySelector(".choice-label")),
        labelText: button.querySelector(".choice-label").textContent,
        keys: Array.from(button.querySelectorAll("kbd")).map((kbd) => ({
          text: kbd.textContent,
          box: box(kbd),
          shown: shown(kbd),
        })),
      }))
    ),
  };
}"""


def _inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    slack = 0.5  # sub-pixel rounding
    return (
        inner["left"] >= outer["left"] - slack
        and inner["right"] <= outer["right"] + slack
        and inner["top"] >= outer["top"] - slack
        and inner["bottom"] <= outer["bottom"] + slack
    )


def _overlap(one: dict[str, float], other: dict[str, float]) -> bool:
    return min(one["right"], other["right"]) - max(one["left"], other["left"]) > 0.5 and (
        min(one["bottom"], other["bottom"]) - max(one["top"], other["top"]) > 0.5
    )


def _check_layout(page: Any, expected_keys: dict[str, str]) -> list[tuple[str, str]]:
    """Assert the layout and return the (key, value) pairs the buttons show, in page order."""
    layout = page.evaluate(LAYOUT)
    assert layout["documentWidth"] <= layout["viewportWidth"], layout["documentWidth"]
    assert layout["rows"]
    shown_pairs: list[tuple[str, str]] = []
    for row in layout["rows"]:
        for index, button in enumerate(row):
            assert button["box"]["width"] > 0 and button["box"]["right"] <= layout["viewportWidth"] + 0.5
            assert _inside(button["label"], button["box"]), button["labelText"]
            assert button["keys"], f"{button['labelText']} shows no key"
            for key in button["keys"]:
                assert key["shown"], f"the key {key['text']} of {button['labelText']} is hidden"
                assert _inside(key["box"], button["box"]), f"the key {key['text']} sticks out of {button['labelText']}"
                assert not _overlap(key["box"], button["label"]), f"the key {key['text']} covers its label"
            for other in row[index + 1 :]:
                assert not _overlap(button["box"], other["box"]), (button["labelText"], other["labelText"])
        pairs = [(key["text"], button["value"]) for button in row for key in button["keys"]]
        assert dict(pairs) == expected_keys and len(pairs) == len(expected_keys)
        shown_pairs = pairs
    return shown_pairs


def _open_first_hit(browser: Any, live_server: Any, cast: Cast, device: dict[str, Any]) -> tuple[Any, Any]:
    context = signed_in(browser, live_server.url, cast.alice, **device)
    page = context.new_page()
    page.goto(f"{live_server.url}/work/")
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")
    return context, page


def _press_every_shown_key(page: Any, pairs: list[tuple[str, str]], assignment: Assignment) -> dict[int, str]:
    """Press one shown key per row, every shown key once (the first row's focus moves down by
    itself), submit, and return the value each row's key names, by item id."""
    items = list(assignment.hit.items.order_by("position"))
    assert len(items) >= len(pairs)
    expected: dict[int, str] = {}
    for index, item in enumerate(items):
        key, value = pairs[index % len(pairs)]
        page.keyboard.press(key)
        expected[item.pk] = value
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: f"/work/assignments/{assignment.pk}/" not in url)
    return expected


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop-1280", "phone-390"])
def test_prolex_buttons_fit_and_each_shown_key_records_its_value(
    live_server: Any, browser: Any, cast: Cast, device: dict[str, Any]
) -> None:
    benchmark = make_benchmark("prolex", scheme="prolex")
    make_target(benchmark, word="calm", pos="", candidates=["still", "serene", "placid", "tranquil"])
    hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[cast.alice.worker])

    context, page = _open_first_hit(browser, live_server, cast, device)
    pairs = _check_layout(page, PROLEX_KEYS)
    assignment = Assignment.objects.get(worker__user=cast.alice)
    expected = _press_every_shown_key(page, pairs, assignment)

    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    assert dict(Answer.objects.filter(assignment=assignment).values_list("item_id", "value")) == expected
    labels = dict(Label.objects.filter(assignment=assignment).values_list("candidate_id", "value"))
    items = {item.pk: item.candidate_id for item in assignment.hit.items.all()}
    assert labels == {items[item]: LABEL_OF_ANSWER[value] for item, value in expected.items()}
    assert set(expected.values()) == {"1", "-1", "0"}
    context.close()
    connections.close_all()


@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop-1280", "phone-390"])
def test_swords_buttons_fit_and_each_shown_key_records_its_value(
    live_server: Any, browser: Any, cast: Cast, device: dict[str, Any]
) -> None:
    make_hits(make_benchmark(), 1)

    context, page = _open_first_hit(browser, live_server, cast, device)
    pairs = _check_layout(page, SWORDS_KEYS)
    assignment = Assignment.objects.get(worker__user=cast.alice)
    expected = _press_every_shown_key(page, pairs, assignment)

    assert dict(Answer.objects.filter(assignment=assignment).values_list("item_id", "value")) == expected
    candidates = {item.pk: item.candidate_id for item in assignment.hit.items.filter(control=False)}
    labels = dict(Label.objects.filter(assignment=assignment).values_list("candidate_id", "value"))
    assert labels == {candidates[item]: value for item, value in expected.items() if item in candidates}
    assert labels and set(expected.values()) == {"accept", "reject", "abstain"}
    context.close()
    connections.close_all()
