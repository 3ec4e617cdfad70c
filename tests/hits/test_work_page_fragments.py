"""The annotator's page keeps the parts that do not change from one HIT to the next
(``hits/templatetags/work_page.py``, docs/design.md §4 "The page's fixed parts"): whatever pages
came before, each page is the page rendered in full, for every scheme and every state of the page.
The "saved" line after a submit names the part of the word as the page's progress does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from html import escape as html_escape
from typing import Any

import pytest
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from annotation.models import Worker
from hits import selectors
from hits.models import HIT, Assignment, AssignmentStatus, Batch, HITFlagReason
from hits.services import assignment_claim_next
from hits.templatetags.work_page import kept_fragments_clear
from hits.views import annotator
from tests.base import Cast, logged_in
from tests.hits.factories import make_batch, make_benchmark, make_hit, make_hits, make_target

pytestmark = pytest.mark.django_db

DESIGN = {
    "instructions": "Read the text <b>first</b>.\n\n- Judge the meaning here\n- Skip nothing",
    "examples": [{"text": "The bank of the river was muddy.", "target": "bank", "answer": "shore", "note": "<i>"}],
    "choices": {"accept": {"label": "Fits", "keys": ["y"]}, "reject": {"label": "Does not fit", "keys": ["n"]}},
}

# (scheme, step, language, design): every scheme's page, the choice schemes with and without a
# task design, and the languages whose instructions differ.
PAGES: list[tuple[str, int, str, dict[str, Any] | None]] = [
    ("swords", 2, "en", None),
    ("swords", 2, "en", DESIGN),
    ("swords", 2, "en", {**DESIGN, "scheme_instructions": False}),
    ("swords", 1, "en", None),
    ("prolex", 2, "en", None),
    ("prolex", 2, "en", {"choices": {"1": {"label": "Yes, fits"}}}),
    ("sws", 2, "en", None),
    ("tsar", 2, "es", None),
    ("tsar", 2, "pt", None),
    ("tsar", 2, "en", None),
]

CSRF_VALUE = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]+"')


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[HttpRequest, str, dict[str, Any]]]]:
    """What every page of the annotator's views is rendered from: (request, template, context)."""
    seen: list[tuple[HttpRequest, str, dict[str, Any]]] = []
    render = annotator.render

    def recording(request: HttpRequest, name: str, context: dict[str, Any], **kwargs: Any) -> Any:
        seen.append((request, name, context))
        return render(request, name, context, **kwargs)

    monkeypatch.setattr(annotator, "render", recording)
    yield seen
    kept_fragments_clear()


def page(request: HttpRequest, name: str, context: dict[str, Any]) -> str:
    # A form's token is masked afresh on each rendering.
    return CSRF_VALUE.sub(r'\1…"', render_to_string(name, context, request))


def every_state(cast: Cast, scheme: str, step: int, language: str, design: dict[str, Any] | None) -> None:
    """Alice's pages of one batch in every state: the first HIT (the instructions' examples open),
    a later one, after a refused submit, expired, submitted, returned, and the researcher's preview."""
    benchmark = make_benchmark(scheme=scheme, language=language)
    batch = make_batch(benchmark, step=step)
    if design is not None:
        Batch.objects.filter(pk=batch.pk).update(design=design)
    hits = make_hits(benchmark, 3, batch=batch)
    client = logged_in(cast.alice)
    worker = Worker.objects.get(user=cast.alice)
    first = assignment_claim_next(worker=worker, batch=batch)
    assert first is not None
    url = reverse("work-assignment", args=[first.pk])
    assert client.get(url).status_code == 200
    if scheme in {"swords", "prolex"} and step == 2:
        # One row answered, the others missing: the page again, with the refusal.
        item = first.hit.items.order_by("position").first()
        assert item is not None
        value = "accept" if scheme == "swords" else "1"
        assert client.post(url, {f"item-{item.pk}": value}).status_code == 400
    for status in (AssignmentStatus.EXPIRED, AssignmentStatus.RETURNED, AssignmentStatus.SUBMITTED):
        Assignment.objects.filter(pk=first.pk).update(status=status, submitted_at=timezone.now())
        assert client.get(url).status_code == 200
    # A later HIT: one done in the batch, so the examples start closed.
    later = assignment_claim_next(worker=worker, batch=batch)
    assert later is not None and later.hit_id != first.hit_id
    assert client.get(reverse("work-assignment", args=[later.pk])).status_code == 200
    request = RequestFactory().get("/")
    request.user = cast.researcher
    annotator.local_preview_page(request, hits[-1], extra={})


def test_every_page_equals_the_page_rendered_in_full_whatever_came_before(
    cast: Cast, rendered: list[tuple[HttpRequest, str, dict[str, Any]]]
) -> None:
    for scheme, step, language, design in PAGES:
        every_state(cast, scheme, step, language, design)
    choice_pages = sum(1 for scheme, step, *_ in PAGES if scheme in {"swords", "prolex"} and step == 2)
    assert len(rendered) == 7 * choice_pages + 6 * (len(PAGES) - choice_pages)
    full = []
    for args in rendered:
        kept_fragments_clear()
        full.append(page(*args))
    assert len(set(full)) == len(rendered)
    # A fragment is kept by the first page that meets its values: the pages in one order, then in
    # the other, each page then given what the others left.
    for order in (rendered, rendered[::-1]):
        kept_fragments_clear()
        for args in order:
            page(*args)
        for index, args in enumerate(rendered):
            assert page(*args) == full[index], f"page {index} ({args[2]['page'].scheme.items_template})"


def test_the_fixed_parts_are_the_ones_the_page_shows(
    cast: Cast, rendered: list[tuple[HttpRequest, str, dict[str, Any]]]
) -> None:
    every_state(cast, "swords", 2, "en", DESIGN)
    first, later = page(*rendered[0]), page(*rendered[-2])
    # The batch's instructions and the scheme's, open on the first HIT of the batch only.
    assert first.count("Read the text &lt;b&gt;first&lt;/b&gt;.") == 1
    assert "<details open>" in first and "<details open>" not in later
    assert '<details class="design-examples" open>' in first
    assert "Examples and tips" in later and 'data-label="Fits"' in later
    assert later.count('<label class="flag-reason">') == len(HITFlagReason.choices)
    assert '<kbd class="key">y</kbd><kbd class="key">n</kbd>' not in later
    assert re.search(r'<kbd class="key">y</kbd> / <kbd class="key">n</kbd> / <kbd class="key">', later)


def test_the_flag_forms_rows_are_escaped_and_numbered(cast: Cast) -> None:
    benchmark = make_benchmark()
    target = make_target(benchmark, candidates=['<b onclick="x">&\'', "rested"])
    hit = make_hit(make_batch(benchmark), target)
    assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.alice))
    assert assignment is not None and assignment.hit_id == hit.pk
    html = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()
    items = list(hit.items.order_by("position").values_list("pk", "text"))
    options = re.findall(r'<option value="(\d+)">Row (\d+): ([^<]*)</option>', html)
    assert options == [(str(pk), str(number), html_escape(text)) for number, (pk, text) in enumerate(items, 1)]
    assert "Row 1: &lt;b onclick=&quot;x&quot;&gt;&amp;&#x27;" in html
    assert "<b onclick" not in html


def test_the_saved_line_names_the_part_as_the_pages_progress_does(cast: Cast) -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark)
    target = make_target(benchmark, word="sat")
    candidates = list(target.candidates.order_by("id"))
    hits = [make_hit(batch, target, part=part, candidates=candidates[part * 2 : part * 2 + 2]) for part in range(2)]
    make_hits(benchmark, 1, batch=batch)
    alone = HIT.objects.filter(batch=batch).exclude(pk__in=[hit.pk for hit in hits]).get()
    worker = Worker.objects.get(user=cast.alice)
    for hit in [*hits, alone]:
        now = timezone.now()
        assignment = Assignment.objects.create(
            hit=hit, worker=worker, claimed_at=now, deadline=now + timedelta(hours=1)
        )
        progress = selectors.assignment_progress(assignment=assignment)
        part = selectors.hit_part(hit_id=hit.pk)
        assert (part.word, part.part, part.parts) == (progress.word, progress.part, progress.parts)
    assert [selectors.hit_part(hit_id=hit.pk).part for hit in hits] == [1, 2]
    assert selectors.hit_part(hit_id=alone.pk).parts == 1
    with pytest.raises(HIT.DoesNotExist):
        selectors.hit_part(hit_id=alone.pk + 1000)
