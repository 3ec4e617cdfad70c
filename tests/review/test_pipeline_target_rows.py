"""The pipeline page's target table (``{% target_rows %}``): each row shows its target's figures as the
pipeline counts them, for every scheme, on the page's first request and on the first after a submit
(when its fragment is rendered again), with every value escaped; and that first request after a
submit brings the summary and the rows up to date together, in as many statements whatever the size."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.text import Truncator

from annotation.models import Benchmark, Context, Target, Worker
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit
from review.selectors import TargetProgress, TargetStepProgress, _pipeline_progress
from tests.base import Cast, logged_in
from tests.hits.factories import make_target
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db


class TargetTable(HTMLParser):
    """The rows of the page's "Targets" table: each cell's text (spaces collapsed), and the link and
    badge class of each row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self.badges: list[str] = []
        self._in_table = self._in_body = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "div" and found.get("aria-label") == "Targets":
            self._in_table = True
        elif self._in_table and tag == "tbody":
            self._in_body = True
        elif self._in_body and tag == "tr":
            self.rows.append([])
        elif self._in_body and tag == "td":
            self._cell = []
        elif self._cell is not None and tag == "a":
            self.links.append(found.get("href") or "")
        elif self._cell is not None and tag == "span" and "badge" in (found.get("class") or ""):
            self.badges.append(found.get("class") or "")

    def handle_endtag(self, tag: str) -> None:
        if self._in_body and tag == "td" and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tbody":
            self._in_body = self._in_table = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def target_table(client: Client, benchmark: Benchmark) -> TargetTable:
    page = client.get(reverse("pipeline-progress", args=[benchmark.name]))
    assert page.status_code == 200
    table = TargetTable()
    table.feed(page.content.decode())
    return table


def expected_cells(target: TargetProgress) -> list[str]:
    """A target's row as the page shows it, from the pipeline's figures counted now."""
    steps = [
        "\u2013" if step.needed is None else f"{step.collected} / {step.needed}"  # a dash: a step not reached
        for step in target.steps
    ]
    return [
        f"{target.word} {target.pos + ' · ' if target.pos else ''}target {target.target_id}",
        Truncator(target.context).chars(90),
        target.stage_name,
        str(target.candidates),
        *(str(count) for count in target.counts.values()),
        *steps,
        str(target.open_slots),
    ]


def assert_rows_shown(client: Client, benchmark: Benchmark) -> None:
    """The page's rows are every target's, in order, with the figures counted from the work now."""
    progress = _pipeline_progress(benchmark=benchmark, with_targets=True)
    table = target_table(client, benchmark)
    targets = list(progress.targets)
    assert [" ".join(" ".join(cells).split()) for cells in table.rows] == [
        " ".join(" ".join(expected_cells(target)).split()) for target in targets
    ]
    assert table.links == [reverse("target-detail", args=[target.target_id]) for target in targets]
    assert table.badges == [f"badge{' ok' if target.stage == 'done' else ''}" for target in targets]


def submit_one(benchmark: Benchmark, cast: Cast, scheme_name: str) -> None:
    """One more HIT of the benchmark claimed and submitted (its refresh runs at the commit): by another
    annotator, or by the expert it is assigned to where the scheme assigns its work."""
    offered = (
        assignment_claim_next(worker=Worker.objects.get(user=user), benchmark=benchmark)
        for user in (cast.bob, cast.alice)
    )
    assignment = next((each for each in offered if each is not None), None)
    assert assignment is not None, f"{scheme_name}: more work is offered"
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer(scheme_name, item) for item in items})


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_each_row_shows_its_targets_figures_before_and_after_a_submit(cast: Cast, scheme_name: str) -> None:
    benchmark, _ = scheme_benchmark(scheme_name, cast)
    client = logged_in(cast.researcher)
    assert_rows_shown(client, benchmark)
    before = target_table(client, benchmark).rows

    submit_one(benchmark, cast, scheme_name)

    assert_rows_shown(client, benchmark)
    assert target_table(client, benchmark).rows != before, f"{scheme_name}: the submit shows in the rows"


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_a_targets_words_are_escaped(cast: Cast, scheme_name: str) -> None:
    benchmark, _ = scheme_benchmark(scheme_name, cast)
    Target.objects.filter(benchmark=benchmark).update(word="<b>sat</b>", pos="<i>")
    Context.objects.filter(benchmark=benchmark).update(text="<u>" + "the cat sat " * 20)
    html = logged_in(cast.researcher).get(reverse("pipeline-progress", args=[benchmark.name])).content.decode()
    assert "<strong>&lt;b&gt;sat&lt;/b&gt;</strong>" in html
    assert "&lt;i&gt; · target" in html and "<b>sat</b>" not in html and "<i>" not in html
    # The context cut as ``truncatechars:90`` cuts it: 89 characters and an ellipsis.
    shown = "&lt;u&gt;" + ("the cat sat " * 20)[:86] + "…"
    assert html.count(f'<td class="muted">{shown}</td>') == 2 and "<u>" not in html


def statements_after_a_submit(client: Client, benchmark: Benchmark, cast: Cast, scheme_name: str) -> list[str]:
    """The statements of the pipeline page's first request after one submit (and its refresh)."""
    client.get(reverse("pipeline-progress", args=[benchmark.name]))
    submit_one(benchmark, cast, scheme_name)
    with CaptureQueriesContext(connection) as first:
        assert client.get(reverse("pipeline-progress", args=[benchmark.name])).status_code == 200
    return [query["sql"] for query in first.captured_queries]


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_after_a_submit_the_page_reads_the_change_and_the_claims_once_whatever_the_size(
    cast: Cast, scheme_name: str
) -> None:
    """The summary and the page's rows are brought up to date together: the change is read once
    besides the page's figures key, the claimed work once, and no statement runs per target."""
    client = logged_in(cast.researcher)
    counts = []
    for size in (2, 8):
        sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(size))
        benchmark, _ = scheme_benchmark(scheme_name, cast, sentences=sentences)
        statements = statements_after_a_submit(client, benchmark, cast, scheme_name)
        assert sum("annotation_refreshtouched" in sql for sql in statements) == 2, statements
        assert sum('AS "is_local"' in sql for sql in statements) == 1, statements
        counts.append(len(statements))
    assert counts[0] == counts[1], f"{scheme_name}: statements after a submit, small and larger"


def test_the_rows_read_a_chunk_at_a_time_are_the_rows_read_whole(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    from review import selectors

    benchmark, _ = scheme_benchmark("swords", cast)
    for word in ("calm", "bright", "quick"):
        make_target(benchmark, word=word, candidates=["still", "serene"])
    every = _pipeline_progress(benchmark=benchmark, with_targets=True).targets
    whole = [(row.target_id, row.word, row.context, row.stage) for row in every]
    assert len(whole) == 5, "the targets fill three chunks of two"
    monkeypatch.setattr(selectors, "TARGET_ROWS_CHUNK", 2)
    rows = selectors.pipeline_progress(benchmark=benchmark).targets
    chunked = [(row.target_id, row.word, row.context, row.stage) for row in (rows[i] for i in range(len(rows)))]
    assert chunked == whole


def test_a_row_shown_before_is_built_again_when_anything_it_shows_changes(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from review.templatetags import pipeline_tags

    def row(**changed: Any) -> TargetProgress:
        steps = [TargetStepProgress(2, 3, 10), TargetStepProgress(3, None, None)]
        fields = {
            "target_id": 7,
            "word": "bright",
            "pos": "adj",
            "context": "a bright day",
            "stage": "reduce",
            "stage_name": "step 2",
            "candidates": 4,
            "steps": steps,
            "counts": {"dropped": 1, "scored": 0},
            "open_slots": 2,
        }
        return TargetProgress(**{**fields, **changed})

    def fresh(target: TargetProgress) -> str:
        with monkeypatch.context() as patched:
            patched.setattr(pipeline_tags, "_ROWS_SHOWN", {})
            return str(pipeline_tags.target_rows([target]))

    first = row()
    assert str(pipeline_tags.target_rows([first])) == fresh(first)
    variants = [
        row(target_id=8),
        row(word="brighter"),
        row(pos="verb"),
        row(context="a brighter day"),
        row(stage="done"),
        row(stage_name="done"),
        row(candidates=5),
        row(steps=[TargetStepProgress(2, 4, 10), TargetStepProgress(3, None, None)]),
        row(steps=[TargetStepProgress(2, 3, 10), TargetStepProgress(3, 0, 6)]),
        row(counts={"dropped": 1, "scored": 1}),
        row(open_slots=3),
    ]
    for variant in variants:
        shown = str(pipeline_tags.target_rows([first, variant]))
        assert shown == fresh(first) + "\n" + fresh(variant) and fresh(variant) != fresh(first), variant
    # Numbers shown with thousands separated are rows of their own.
    many = row(candidates=12345)
    assert "12345" in str(pipeline_tags.target_rows([many]))
    settings.USE_THOUSAND_SEPARATOR = True
    settings.NUMBER_GROUPING = 3
    assert str(pipeline_tags.target_rows([many])) == fresh(many) and "12,345" in fresh(many)


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_a_row_built_before_is_built_again_when_anything_it_is_built_from_changes(
    cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows kept as built in the process (``_ROWS_BUILT``) are the rows built afresh after a claim,
    its submit and a target's word and stage changed, and each of those shows in the rows."""
    from annotation.changes import benchmark_changed
    from review import selectors

    benchmark, _ = scheme_benchmark(scheme_name, cast)

    def rows() -> list[TargetProgress]:
        kept = list(_pipeline_progress(benchmark=benchmark, with_targets=True).targets)
        with monkeypatch.context() as patched:
            patched.setattr(selectors, "_ROWS_BUILT", {})
            fresh = list(_pipeline_progress(benchmark=benchmark, with_targets=True).targets)
        assert kept == fresh, f"{scheme_name}: the rows kept as built are the rows built afresh"
        return kept

    before = rows()
    offered = (
        assignment_claim_next(worker=Worker.objects.get(user=user), benchmark=benchmark)
        for user in (cast.bob, cast.alice)
    )
    assignment = next((each for each in offered if each is not None), None)
    assert assignment is not None, f"{scheme_name}: more work is offered"
    claimed = rows()
    assert [row.open_slots for row in claimed] != [row.open_slots for row in before], "the claim shows"
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer(scheme_name, item) for item in items})
    submitted = rows()
    assert submitted != claimed, "the submit shows"
    target = Target.objects.filter(benchmark=benchmark).order_by("pk").first()
    assert target is not None
    Target.objects.filter(pk=target.pk).update(word="bright", stage="done")
    benchmark_changed(benchmark_id=benchmark.pk)
    edited = rows()
    assert (edited[0].word, edited[0].stage) == ("bright", "done") != (submitted[0].word, submitted[0].stage)
