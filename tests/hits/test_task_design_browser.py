"""Task design in a real browser (Playwright, Debian's chromium): a researcher edits a SWORDS batch's
instructions, an example, the choices' labels and keys on its design page, previews the page as a
worker (nothing is recorded, nothing is posted), and an annotator then works the batch with the new
labels and keys, which record the choices' unchanged values; ProLex the same through the benchmark's
template, which its new batch starts from."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.db import connections

from annotation.models import Label
from hits.models import Answer, Assignment, AssignmentStatus, AssignmentTelemetry, Batch
from hits.services import hits_generate
from schemes.prolex.rules import LABEL_OF_ANSWER
from tests.base import Cast
from tests.browser import signed_in, wait_until
from tests.hits.factories import make_benchmark, make_target
from tests.hits.generation_data import build_benchmark

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"viewport": {"width": 1100, "height": 900}}


def _buttons(page: Any) -> list[tuple[str, str, str]]:
    """(value, label, keys shown) of the first row's buttons."""
    found = page.evaluate(
        """() => Array.from(document.querySelector('li.item').querySelectorAll('label.choice')).map((button) => [
            button.querySelector('input').value,
            button.querySelector('.choice-label').textContent,
            Array.from(button.querySelectorAll('kbd')).map((kbd) => kbd.textContent).join(' '),
        ])"""
    )
    return [tuple(button) for button in found]


def _fill_choices(page: Any, choices: list[tuple[str, str]]) -> None:
    for number, (label, keys) in enumerate(choices, start=1):
        page.fill(f"#id_choice-{number}-label", label)
        page.fill(f"#id_choice-{number}-keys", keys)


def _preview_records_nothing(page: Any, url: str) -> list[str]:
    """Open the preview, click and type in it as a worker would, and return the requests it sent
    other than loading the page and its assets."""
    sent: list[str] = []
    page.on("request", lambda request: sent.append(f"{request.method} {request.url}"))
    page.goto(url)
    page.wait_for_selector("#researcher-preview")
    page.click("li.item .choice-label >> nth=0", force=True)
    page.keyboard.press("y")
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    return [request for request in sent if not request.startswith("GET ")]


def _work_with_keys(context: Any, base_url: str, keys: list[str]) -> Assignment:
    """Start working, press one of ``keys`` per row (in turn), submit with Enter; the assignment."""
    page = context.new_page()
    page.goto(f"{base_url}/work/")
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")
    rows = page.locator("li.item").count()
    assignment_url = page.url
    for index in range(rows):
        page.keyboard.press(keys[index % len(keys)])
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != assignment_url)
    assignment_id = int(assignment_url.rstrip("/").rsplit("/", 1)[1])
    return Assignment.objects.get(pk=assignment_id)


def test_a_swords_batch_design_is_previewed_and_its_keys_record_the_choices(
    live_server: Any, browser: Any, cast: Cast
) -> None:
    benchmark = build_benchmark("designed-swords")
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    connections.close_all()

    researcher = signed_in(browser, live_server.url, cast.researcher, **DESKTOP)
    page = researcher.new_page()
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    page.click("#batch-design-link")
    page.fill("#id_instructions", "Judge each word <here>.\n\n- Think of the author\n- Answer every row")
    page.fill("#id_example-0-text", "The bank of the river was muddy.")
    page.fill("#id_example-0-target", "bank")
    page.fill("#id_example-0-answer", "shore: fits")
    _fill_choices(page, [("Fits", "y"), ("Does not fit", "n"), ("Not sure", "u")])
    page.click("#design-save")
    page.wait_for_selector("text=is saved")
    assert page.input_value("#id_choice-1-label") == "Fits"

    preview_url = page.get_attribute("#design-preview-link", "href")
    posted = _preview_records_nothing(page, f"{live_server.url}{preview_url}")
    assert posted == []
    assert "Judge each word <here>." in page.inner_text("#design-instructions")
    assert page.locator("#design-instructions ul li").all_inner_texts() == ["Think of the author", "Answer every row"]
    assert page.inner_text(".design-example mark.target") == "bank"
    assert _buttons(page) == [("accept", "Fits", "y"), ("reject", "Does not fit", "n"), ("abstain", "Not sure", "u")]
    # The batch page links the same preview.
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    assert page.get_attribute("#batch-preview-link", "href") == preview_url
    researcher.close()
    assert (Assignment.objects.count(), AssignmentTelemetry.objects.count(), Label.objects.count()) == (0, 0, 0)

    annotator = signed_in(browser, live_server.url, cast.alice, **DESKTOP)
    assignment = _work_with_keys(annotator, live_server.url, ["y", "n", "u"])
    annotator.close()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    answers = list(
        Answer.objects.filter(assignment=assignment).order_by("item__position").values_list("value", flat=True)
    )
    assert answers == [["accept", "reject", "abstain"][index % 3] for index in range(len(answers))]
    # The old keys choose nothing on this batch's page any more: "a" is not a key of it.
    assert "a" not in {
        key for choice in Batch.objects.get(pk=batch.pk).design["choices"].values() for key in choice["keys"]
    }
    connections.close_all()


def test_a_prolex_template_gives_a_new_batch_its_labels_and_keys(live_server: Any, browser: Any, cast: Cast) -> None:
    benchmark = make_benchmark("designed-prolex", scheme="prolex")
    make_target(benchmark, word="calm", pos="", candidates=["still", "serene", "placid", "tranquil"])
    connections.close_all()

    researcher = signed_in(browser, live_server.url, cast.researcher, **DESKTOP)
    page = researcher.new_page()
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/design/")
    page.fill("#id_instructions", "Type your judgment.")
    page.uncheck("#id_scheme_instructions")
    _fill_choices(page, [("Yes (1)", "y"), ("No (-1)", "n"), ("Unsure (0)", "")])
    page.click("#design-save")
    page.wait_for_selector("text=new batches start from it")

    batch = hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[cast.alice.worker])  # type: ignore[attr-defined]
    connections.close_all()
    page.goto(f"{live_server.url}/batches/{batch.pk}/preview/")
    assert "Type your judgment." in page.inner_text("main")
    assert page.locator("text=ProLex guidelines and examples").count() == 0
    assert _buttons(page) == [("1", "Yes (1)", "y"), ("-1", "No (-1)", "n"), ("0", "Unsure (0)", "0")]
    # The definitions take the labels and stay tied to the buttons that name them.
    assert page.inner_text("dt.choice-2") == "No (-1)"
    researcher.close()

    annotator = signed_in(browser, live_server.url, cast.alice, **DESKTOP)
    assignment = _work_with_keys(annotator, live_server.url, ["y", "n", "0"])
    annotator.close()
    values = dict(Answer.objects.filter(assignment=assignment).values_list("item_id", "value"))
    assert sorted(set(values.values())) == ["-1", "0", "1"]
    labels = dict(Label.objects.filter(assignment=assignment).values_list("candidate_id", "value"))
    items = {item.pk: item.candidate_id for item in assignment.hit.items.all()}
    assert labels == {items[item]: LABEL_OF_ANSWER[value] for item, value in values.items()}
    connections.close_all()
