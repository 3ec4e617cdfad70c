"""The data browser (docs/analysis.md, "The data browser"): each table's filters, sorts and keyset pages
against hand-built data for SWORDS and the other schemes, its CSV equal to the view, saved views, who
may see it, and a statement count per page that does not grow with the data."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from analysis.browser import TABLES, Context, page_read, view_read
from analysis.models import SavedView
from annotation.access import Role, access_grant
from annotation.models import (
    Activity,
    ActivityKind,
    Benchmark,
    BenchmarkMember,
    Candidate,
    CandidateStage,
    Label,
    Target,
    Worker,
    WorkerKind,
)
from annotation.models import (
    Context as TextContext,
)
from annotation.tallies import tallies_benchmark_recount
from hits.models import HIT, Assignment, Batch, HITItem
from review.models import WorkerFlag
from tests.base import PASSWORD, Cast, logged_in, make_user
from tests.scheme_benchmarks import scheme_benchmark

pytestmark = pytest.mark.django_db

SENTENCES = (
    "The cat sat on mat number 0 all afternoon.",
    "The cat sat on mat number 1 all afternoon.",
    "The cat sat on mat number 2 all afternoon.",
)
WORDS = ("perched", "rested", "=squatted", "lounged")


def _imported(name: str) -> Worker:
    return Worker.objects.create(kind=WorkerKind.IMPORTED, external_id=name)


def build(scheme_name: str, cast: Cast) -> dict[str, Any]:
    """A benchmark of the scheme with collected work (one assignment of alice), plus imported labels by
    two known workers on the first target's candidates: perched 2 accepts, rested 1 accept and
    1 reject, =squatted 2 rejects (a formula-looking text), lounged excluded."""
    benchmark, batch = scheme_benchmark(scheme_name, cast, sentences=SENTENCES, candidates=WORDS)
    first = Target.objects.filter(benchmark=benchmark).order_by("pk").first()
    assert first is not None
    judges = [_imported(f"{benchmark.name}-judge{index}") for index in range(2)]
    plan = {"perched": ["accept", "accept"], "rested": ["accept", "reject"], "=squatted": ["reject", "reject"]}
    for text, values in plan.items():
        candidate = Candidate.objects.filter(target=first, text=text).first()
        if candidate is None:  # a scheme whose item is the sentence has no candidates
            continue
        for position, (value, judge) in enumerate(zip(values, judges, strict=True)):
            Label.objects.create(candidate=candidate, value=value, origin="file", position=position, worker=judge)
    Candidate.objects.filter(target=first, text="lounged").update(stage=CandidateStage.EXCLUDED)
    # The labels were written here rather than by an import: their tallies are counted as a bulk load's.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    return {"benchmark": benchmark, "batch": batch, "first": first, "judges": judges}


def table_page(client: Client, benchmark: Benchmark, table: str, query: str = "") -> Any:
    return client.get(f"/benchmarks/{benchmark.name}/data/{table}/?{query}")


def rows_of(answer: Any) -> list[list[str]]:
    """The cells' texts of the page's table, row by row (the test client's context)."""
    assert answer.status_code == 200, answer.content[:500]
    return [[cell.text for cell, _ in row] for row in answer.context["rows"]]


def ids_of(answer: Any) -> list[int]:
    return [row.pk for row in answer.context["page"].objects]


def walk(client: Client, benchmark: Benchmark, table: str, query: str) -> tuple[list[int], list[str]]:
    """Every id of the view, following the next links from the first page; the queries followed."""
    ids: list[int] = []
    followed = [query]
    while True:
        answer = table_page(client, benchmark, table, followed[-1])
        ids += ids_of(answer)
        following = answer.context["page"].next
        if not following:
            return ids, followed
        followed.append(following)


def test_each_table_shows_the_benchmarks_rows_and_only_theirs(cast: Cast) -> None:
    world = build("swords", cast)
    other = build("swords", cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    expected = {
        "items": set(Target.objects.filter(benchmark=benchmark).values_list("pk", flat=True)),
        "candidates": set(Candidate.objects.filter(target__benchmark=benchmark).values_list("pk", flat=True)),
        "labels": set(Label.objects.filter(candidate__target__benchmark=benchmark).values_list("pk", flat=True)),
        "hits": set(HIT.objects.filter(batch__benchmark=benchmark).values_list("pk", flat=True)),
        "workers": {judge.pk for judge in world["judges"]} | {Worker.objects.get(user=cast.alice).pk},
    }
    for table, ids in expected.items():
        assert ids, table
        answer = table_page(client, benchmark, table)
        assert set(ids_of(answer)) == ids, table
        assert not set(ids_of(table_page(client, other["benchmark"], table))) & ids or table == "workers"


def test_the_items_table_filters_by_text_stage_batch_and_hit(cast: Cast) -> None:
    world = build("swords", cast)
    benchmark, first = world["benchmark"], world["first"]
    client = logged_in(cast.researcher)
    assert ids_of(table_page(client, benchmark, "items", "q=number 1")) == [
        Target.objects.get(benchmark=benchmark, context__text=SENTENCES[1]).pk
    ]
    Target.objects.filter(pk=first.pk).update(stage="done")
    assert ids_of(table_page(client, benchmark, "items", "stage=done")) == [first.pk]
    hit = HIT.objects.filter(batch=world["batch"]).order_by("pk").first()
    assert hit is not None
    assert ids_of(table_page(client, benchmark, "items", f"hit={hit.pk}")) == [hit.target_id]
    assert len(ids_of(table_page(client, benchmark, "items", f"batch={world['batch'].pk}"))) == 3
    # The item shows its context around it, and its counts lead to its candidates and HITs.
    answer = table_page(client, benchmark, "items", f"q={first.pk}")
    row = answer.context["rows"][0]
    texts = [cell.text for cell, _ in row]
    assert "[sat]" in texts[2] and texts[5] == "4"
    assert f"/data/candidates/?target={first.pk}" in row[5][0].url


def test_the_candidates_table_counts_scores_and_filters_in_the_schemes_words(cast: Cast) -> None:
    world = build("swords", cast)
    benchmark, first = world["benchmark"], world["first"]
    client = logged_in(cast.researcher)
    answer = table_page(client, benchmark, "candidates", f"target={first.pk}&sort=score&dir=desc")
    rows = rows_of(answer)
    by_text = {row[1]: row for row in rows}
    # Labels, accepts, score, category: alice's collected labels count too.
    perched = Candidate.objects.get(target=first, text="perched")
    collected = Label.objects.filter(candidate=perched, assignment__isnull=False).count()
    assert by_text["perched"][5] == str(2 + collected)
    assert by_text["=squatted"][8] in ("inconceivable", "conceivable")
    assert by_text["lounged"][8] == "excluded" and by_text["lounged"][4] == "excluded by a researcher"
    assert rows[0][1] == "perched" and rows[-1][1] == "lounged"
    assert ids_of(table_page(client, benchmark, "candidates", "category=excluded")) == [
        Candidate.objects.get(target=first, text="lounged").pk
    ]
    acceptable = ids_of(table_page(client, benchmark, "candidates", "category=acceptable"))
    assert perched.pk in acceptable
    # With another filter the category is decided on the rows that filter keeps.
    of_first = ids_of(table_page(client, benchmark, "candidates", f"category=acceptable&target={first.pk}"))
    assert perched.pk in of_first and set(of_first) == set(acceptable) & set(
        Candidate.objects.filter(target=first).values_list("pk", flat=True)
    )
    assert set(ids_of(table_page(client, benchmark, "candidates", "q=rest"))) == set(
        Candidate.objects.filter(target__benchmark=benchmark, text="rested").values_list("pk", flat=True)
    )
    assert len(ids_of(table_page(client, benchmark, "candidates", "source=thesaurus"))) == 12
    assert ids_of(table_page(client, benchmark, "candidates", "source=coinco")) == []
    judge = world["judges"][0]
    assert len(ids_of(table_page(client, benchmark, "candidates", f"worker={judge.pk}"))) == 3
    assert len(ids_of(table_page(client, benchmark, "candidates", "stage=excluded"))) == 1
    # A candidate leads to its labels.
    assert f"candidate={perched.pk}" in answer.context["rows"][0][0][0].url


@pytest.mark.parametrize("scheme_name", ["swords", "prolex"])
def test_the_labels_table_filters_by_value_worker_origin_counting_and_date(cast: Cast, scheme_name: str) -> None:
    world = build(scheme_name, cast)
    benchmark = world["benchmark"]
    judge = world["judges"][0]
    client = logged_in(cast.researcher)
    mine = set(Label.objects.filter(worker=judge).values_list("pk", flat=True))
    assert set(ids_of(table_page(client, benchmark, "labels", f"worker={judge.pk}"))) == mine
    rejects = ids_of(table_page(client, benchmark, "labels", f"worker={judge.pk}&value=reject"))
    assert [Label.objects.get(pk=pk).value for pk in rejects] == ["reject"]
    collected = set(
        Label.objects.filter(candidate__target__benchmark=benchmark, assignment__isnull=False).values_list(
            "pk", flat=True
        )
    )
    assert collected
    assert set(ids_of(table_page(client, benchmark, "labels", "origin=file"))) == set(
        Label.objects.filter(candidate__target__benchmark=benchmark, origin="file").values_list("pk", flat=True)
    )
    # Filtered work's labels stay, marked as not counting.
    Assignment.objects.filter(hit__batch__benchmark=benchmark).update(filtered=True)
    assert set(ids_of(table_page(client, benchmark, "labels", "counted=no"))) == collected
    answer = table_page(client, benchmark, "labels", "counted=no")
    assert {row[9] for row in rows_of(answer)} == {"no (filtered)"}
    # Dates: yesterday's label is left out from today on, and kept up to yesterday.
    old = Label.objects.get(pk=min(mine))
    yesterday = timezone.now() - timedelta(days=1)
    Label.objects.filter(pk=old.pk).update(created_at=yesterday)
    today = timezone.now().date().isoformat()
    assert old.pk not in ids_of(table_page(client, benchmark, "labels", f"from={today}"))
    assert ids_of(table_page(client, benchmark, "labels", f"to={yesterday.date().isoformat()}")) == [old.pk]


@pytest.mark.parametrize("scheme_name", ["swords", "prolex"])
def test_the_hits_and_workers_tables_filter_and_link(cast: Cast, scheme_name: str) -> None:
    world = build(scheme_name, cast)
    benchmark, batch = world["benchmark"], world["batch"]
    alice = Worker.objects.get(user=cast.alice)
    client = logged_in(cast.researcher)
    worked = Assignment.objects.get(worker=alice, hit__batch=batch).hit
    answer = table_page(client, benchmark, "hits", f"worker={alice.pk}")
    assert ids_of(answer) == [worked.pk]
    row = rows_of(answer)[0]
    assert row[1] == str(batch.pk) and row[5] == "1" and row[6] == str(worked.assignments_required)
    cells = answer.context["rows"][0]
    assert cells[2][0].url.endswith(f"/data/items/?hit={worked.pk}")
    on_page = set(HITItem.objects.filter(hit=worked, candidate__isnull=False).values_list("candidate_id", flat=True))
    assert on_page and set(ids_of(client.get(cells[3][0].url))) == on_page
    Batch.objects.filter(pk=batch.pk).update(status="closed")
    assert (
        len(ids_of(table_page(client, benchmark, "hits", "status=closed"))) == HIT.objects.filter(batch=batch).count()
    )
    assert ids_of(table_page(client, benchmark, "hits", "status=open")) == []

    WorkerFlag.objects.create(benchmark=benchmark, worker=alice, reason="fast")
    world["judges"][1].blocked = True
    world["judges"][1].save()
    assert ids_of(table_page(client, benchmark, "workers", "flagged=yes")) == [alice.pk]
    assert ids_of(table_page(client, benchmark, "workers", "blocked=yes")) == [world["judges"][1].pk]
    assert ids_of(table_page(client, benchmark, "workers", "kind=local")) == [alice.pk]
    answer = table_page(client, benchmark, "workers", "q=judge0&sort=labels&dir=desc")
    assert rows_of(answer) == [
        [
            str(world["judges"][0].pk),
            world["judges"][0].external_id,
            "worker named in an imported file",
            "3",
            "0",
            "",
            "0",
            "",
        ]
    ]
    workers_page = table_page(client, benchmark, "workers", "kind=local")
    assert f"/benchmarks/{benchmark.name}/statistics/?reliability=1" in workers_page.content.decode()
    alice_row = rows_of(workers_page)[0]
    assignment = Assignment.objects.get(worker=alice, hit__batch=batch)
    if assignment.controls_total:
        assert alice_row[5] == f"{assignment.controls_correct / assignment.controls_total:.2f}"
    assert alice_row[6] == "1" and alice_row[4] == "1"


@pytest.mark.parametrize("scheme_name", ["swords", "prolex"])
@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_sort_pages_through_every_row_once_forwards_and_backwards(
    cast: Cast, table: str, scheme_name: str, settings: Any
) -> None:
    settings.DATA_BROWSER_PAGE_SIZE = 2
    world = build(scheme_name, cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    context = Context.of(benchmark, cast.researcher)
    every = set(ids_of(_all(client, benchmark, table)))
    assert len(every) > 2, "the table spans pages"
    for column in TABLES[table].columns(context):
        if column.sort is None:
            continue
        for direction in ("asc", "desc"):
            ids, followed = walk(client, benchmark, table, f"sort={column.key}&dir={direction}")
            assert sorted(ids) == sorted(every), (column.key, direction)
            view = view_read(TABLES[table], context, {"sort": column.key, "dir": direction})
            whole = page_read(TABLES[table], context, view, size=1000)
            assert ids == [row.pk for row in whole.objects], (column.key, direction)
            # Back from the last page by the previous links: the same pages, in reverse.
            last = table_page(client, benchmark, table, followed[-1])
            back: list[int] = ids_of(last)
            previous = last.context["page"].previous
            while previous:
                answer = table_page(client, benchmark, table, previous)
                back = ids_of(answer) + back
                previous = answer.context["page"].previous
            assert back == ids, (column.key, direction)


def _all(client: Client, benchmark: Benchmark, table: str) -> Any:
    with _page_size(1000):
        return table_page(client, benchmark, table)


class _page_size:
    def __init__(self, size: int) -> None:
        self.size = size

    def __enter__(self) -> None:
        from django.conf import settings

        self.before = settings.DATA_BROWSER_PAGE_SIZE
        settings.DATA_BROWSER_PAGE_SIZE = self.size

    def __exit__(self, *exc: object) -> None:
        from django.conf import settings

        settings.DATA_BROWSER_PAGE_SIZE = self.before


def test_sorts_order_by_the_column_then_the_id(cast: Cast) -> None:
    world = build("swords", cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    labels = rows_of(table_page(client, benchmark, "labels", "sort=value&dir=desc"))
    values = [row[1] for row in labels]
    assert values == sorted(values, reverse=True) and "reject" in values and "accept" in values
    texts = [row[1] for row in rows_of(table_page(client, benchmark, "candidates", "sort=text"))]
    assert texts == sorted(texts)
    counts = [int(row[3]) for row in rows_of(table_page(client, benchmark, "workers", "sort=labels&dir=desc"))]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]


def test_a_csv_download_is_the_whole_view_in_its_order_and_spreadsheet_safe(cast: Cast, settings: Any) -> None:
    settings.DATA_BROWSER_PAGE_SIZE = 2
    world = build("swords", cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    query = f"target={world['first'].pk}&sort=score&dir=desc"
    answer = client.get(f"/benchmarks/{benchmark.name}/data/candidates.csv?{query}")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(b"".join(answer.streaming_content).decode())))  # type: ignore[attr-defined,arg-type]
    header, rows = table[0], table[1:]
    assert header == ["Id", "Candidate", "Target", "Sources", "Stage", "Labels", "Accept", "Score", "Category"]
    # Every row of the view, not the page of two, in the view's order, as the pages show them.
    ids, followed = walk(client, benchmark, "candidates", query)
    assert [int(row[0]) for row in rows] == ids and len(ids) == 4
    shown = [row for page in followed for row in rows_of(table_page(client, benchmark, "candidates", page))]
    assert [row[:3] + row[4:] for row in rows] == [
        [cell if cell != "=squatted" else "'=squatted" for cell in row[:3] + row[4:]] for row in shown
    ]
    assert "'=squatted" in [row[1] for row in rows]


def test_a_csv_of_a_view_above_the_cap_is_refused_with_the_reason(cast: Cast, settings: Any) -> None:
    settings.DATA_BROWSER_CSV_MAX_ROWS = 3
    world = build("swords", cast)
    client = logged_in(cast.researcher)
    answer = client.get(f"/benchmarks/{world['benchmark'].name}/data/labels.csv?value=accept", follow=True)
    assert answer.redirect_chain and "DATA_BROWSER_CSV_MAX_ROWS" in answer.content.decode()
    assert "value=accept" in answer.redirect_chain[-1][0]


def test_bad_filters_sorts_and_positions_are_named(cast: Cast) -> None:
    world = build("swords", cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    for query, named in (
        ("sort=nothing", "Sort (sort)"),
        ("dir=up", "Direction (dir)"),
        ("batch=abc", "Batch (batch)"),
        ("pos=noun-ish", "Part of speech (pos)"),
        ("after=garbage", "(after)"),
    ):
        answer = table_page(client, benchmark, "items", query)
        assert answer.status_code == 400 and named in answer.content.decode(), query
    answer = table_page(client, benchmark, "labels", "from=27/11/2026")
    assert answer.status_code == 400 and "YYYY-MM-DD" in answer.content.decode()


def test_saved_views_are_kept_per_benchmark_shared_replaced_and_deleted(cast: Cast) -> None:
    world = build("swords", cast)
    benchmark = world["benchmark"]
    BenchmarkMember.objects.create(benchmark=benchmark, user=cast.researcher, role=Role.OWNER)
    viewer = make_user("vera", researcher=True)
    editor = make_user("ed", researcher=True)
    access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=cast.researcher)
    access_grant(benchmark=benchmark, user=editor, role=Role.EDITOR, by=cast.researcher)
    owner = logged_in(cast.researcher)
    query = "value=reject&sort=worker&dir=desc&after=xyz"
    answer = owner.post(
        f"/benchmarks/{benchmark.name}/data/views/", {"table": "labels", "name": " rejects ", "query": query}
    )
    # A position is never saved: the view opens at its first page (and a bad one is no error here).
    assert answer.status_code == 302
    saved = SavedView.objects.get(benchmark=benchmark)
    assert (saved.name, saved.table, saved.query) == ("rejects", "labels", "value=reject&sort=worker&dir=desc")
    shown = logged_in(viewer).get(f"/benchmarks/{benchmark.name}/data/labels/")
    assert [found.name for found in shown.context["saved"]] == ["rejects"]
    assert f'href="?{saved.query.replace("&", "&amp;")}"' in shown.content.decode()
    assert table_page(logged_in(viewer), benchmark, "items").context["saved"] == []
    # Saving under the same name replaces it.
    owner.post(
        f"/benchmarks/{benchmark.name}/data/views/", {"table": "labels", "name": "rejects", "query": "value=accept"}
    )
    assert SavedView.objects.get(benchmark=benchmark).query == "value=accept&sort=id&dir=asc"
    # A view with a filter the table refuses is not saved.
    answer = owner.post(
        f"/benchmarks/{benchmark.name}/data/views/",
        {"table": "labels", "name": "bad", "query": "value=maybe"},
        follow=True,
    )
    assert "Value (value)" in answer.content.decode() and SavedView.objects.count() == 1
    # A viewer may not delete another's view; its saver and an editor may.
    delete = f"/benchmarks/{benchmark.name}/data/views/{saved.pk}/delete"
    assert logged_in(viewer).post(delete).status_code == 403
    assert logged_in(editor).post(delete).status_code == 302
    assert not SavedView.objects.exists()
    logged_in(viewer).post(f"/benchmarks/{benchmark.name}/data/views/", {"table": "hits", "name": "mine", "query": ""})
    mine = SavedView.objects.get()
    assert logged_in(viewer).post(f"/benchmarks/{benchmark.name}/data/views/{mine.pk}/delete").status_code == 302


@pytest.mark.parametrize("scheme_name", ["swords", "sws"])
def test_saving_renaming_and_deleting_a_view_are_in_the_activity_log(cast: Cast, scheme_name: str) -> None:
    world = build(scheme_name, cast)
    benchmark = world["benchmark"]
    BenchmarkMember.objects.create(benchmark=benchmark, user=cast.researcher, role=Role.OWNER)
    viewer = make_user("vera", researcher=True)
    access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=cast.researcher)
    owner = logged_in(cast.researcher)
    logged = Activity.objects.filter(benchmark=benchmark, kind__startswith="view_")
    owner.post(f"/benchmarks/{benchmark.name}/data/views/", {"table": "items", "name": "mine", "query": "sort=id"})
    saved = SavedView.objects.get(benchmark=benchmark)
    owner.post(f"/benchmarks/{benchmark.name}/data/views/", {"table": "items", "name": "mine", "query": "sort=id"})
    rename = f"/benchmarks/{benchmark.name}/data/views/{saved.pk}/rename"
    # Another's view is renamed by its saver or an editor only; a refused rename logs nothing.
    assert logged_in(viewer).post(rename, {"name": "theirs"}).status_code == 403
    assert owner.post(rename, {"name": "  first   pass "}).status_code == 302
    owner.post(f"/benchmarks/{benchmark.name}/data/views/", {"table": "items", "name": "other", "query": ""})
    answer = owner.post(rename, {"name": "other"}, follow=True)
    assert "The items table already has a saved view “other”." in answer.content.decode()
    assert SavedView.objects.get(pk=saved.pk).name == "first pass"
    owner.post(f"/benchmarks/{benchmark.name}/data/views/{saved.pk}/delete")
    entries = list(logged.order_by("id").values_list("kind", "summary", "actor__username"))
    assert entries == [
        (ActivityKind.VIEW_SAVED, "saved the view “mine” of the items table", "rita"),
        (ActivityKind.VIEW_SAVED, "saved again the view “mine” of the items table", "rita"),
        (ActivityKind.VIEW_RENAMED, "renamed the view “mine” of the items table to “first pass”", "rita"),
        (ActivityKind.VIEW_SAVED, "saved the view “other” of the items table", "rita"),
        (ActivityKind.VIEW_DELETED, "deleted the view “first pass” of the items table", "rita"),
    ]
    assert logged.get(kind=ActivityKind.VIEW_RENAMED).result["name"] == ["mine", "first pass"]
    page = owner.get(f"/benchmarks/{benchmark.name}/activity/").content.decode()
    assert "renamed the view “mine” of the items table to “first pass”" in page


def test_outsiders_get_nothing(cast: Cast) -> None:
    world = build("swords", cast)
    benchmark = world["benchmark"]
    BenchmarkMember.objects.create(benchmark=benchmark, user=cast.researcher, role=Role.OWNER)
    saved = SavedView.objects.create(benchmark=benchmark, table="items", name="kept", query="")
    stranger = logged_in(make_user("stan", researcher=True))
    for table in TABLES:
        assert table_page(stranger, benchmark, table).status_code == 404
        assert stranger.get(f"/benchmarks/{benchmark.name}/data/{table}.csv").status_code == 404
    assert (
        stranger.post(f"/benchmarks/{benchmark.name}/data/views/", {"table": "items", "name": "x"}).status_code == 404
    )
    assert stranger.post(f"/benchmarks/{benchmark.name}/data/views/{saved.pk}/delete").status_code == 404
    assert logged_in(cast.alice).get(f"/benchmarks/{benchmark.name}/data/labels/").status_code == 403
    assert Client().get(f"/benchmarks/{benchmark.name}/data/labels/").status_code == 302
    assert SavedView.objects.count() == 1


def _grow(world: dict[str, Any], cast: Cast, times: int) -> None:
    """More of everything: targets with candidates, labels by more workers, HITs and flags."""
    benchmark = world["benchmark"]
    for index in range(times):
        text = f"A dog ran past tree number {index} in the rain."
        context = TextContext.objects.create(benchmark=benchmark, text=text)
        target = context.targets.create(benchmark=benchmark, word="ran", offset=text.index("ran"), pos="verb")
        judge = _imported(f"{benchmark.name}-grown{index}")
        WorkerFlag.objects.create(benchmark=benchmark, worker=judge, reason="fast")
        HIT.objects.create(batch=world["batch"], target=target, part=0, assignments_required=3)
        for word in ("sped", "dashed", "raced"):
            candidate = Candidate.objects.create(target=target, text=word, sources=["coinco"])
            for position, value in enumerate(("accept", "reject", "abstain")):
                Label.objects.create(candidate=candidate, value=value, origin="grown", position=position, worker=judge)
    tallies_benchmark_recount(benchmark_id=benchmark.pk)


@pytest.mark.parametrize("scheme_name", ["swords", "tsar"])
@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_page_runs_the_same_statements_on_small_and_larger_data(
    cast: Cast, table: str, scheme_name: str, settings: Any
) -> None:
    settings.DATA_BROWSER_PAGE_SIZE = 5
    world = build(scheme_name, cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    columns = [column.key for column in TABLES[table].columns(Context.of(benchmark, cast.researcher)) if column.sort]
    views = ["", f"sort={columns[-1]}&dir=desc", "q=e"]

    def statements() -> list[int]:
        counted = []
        for query in views:
            table_page(client, benchmark, table, query)  # the session and caches warm
            with CaptureQueriesContext(connection) as queries:
                answer = table_page(client, benchmark, table, query)
            assert answer.status_code == 200
            counted.append(len(queries))
        return counted

    small = statements()
    _grow(world, cast, 12)
    assert len(ids_of(table_page(client, benchmark, table))) == 5, "the larger data fills the page"
    assert statements() == small


@pytest.mark.parametrize("scheme_name", ["prolex", "sws", "tsar"])
def test_other_schemes_name_their_items_values_and_stages(cast: Cast, scheme_name: str) -> None:
    world = build(scheme_name, cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    for table in TABLES:
        answer = table_page(client, benchmark, table)
        assert answer.status_code == 200, table
    items = table_page(client, benchmark, "items")
    titles = [column.title for column in items.context["columns"]]
    if scheme_name == "sws":
        # The sentence is the item: no context column beside it.
        assert items.context["table_title"] == "Sentences" and "Context" not in titles and "Sentence" in titles
        assert rows_of(items)[0][1] in SENTENCES
        assert rows_of(items)[0][3] in ("being marked", "marked")
    elif scheme_name == "tsar":
        assert items.context["table_title"] == "Instances" and "Context" in titles
    else:
        assert items.context["table_title"] == "Targets"
        labels = rows_of(table_page(client, benchmark, "labels", "origin=file"))
        # ProLex's names of the stored values.
        assert {row[1] for row in labels} == {"1 acceptable", "-1 unacceptable"} or re.search(
            r"acceptable", " ".join(row[1] for row in labels)
        )
        candidates = table_page(client, benchmark, "candidates", f"target={world['first'].pk}&sort=score&dir=desc")
        assert "excluded" in [row[8] for row in rows_of(candidates)]
    hits = rows_of(table_page(client, benchmark, "hits"))
    assert hits and all(row[6].isdigit() for row in hits)


def test_the_benchmark_page_links_the_data_browser(cast: Cast) -> None:
    world = build("swords", cast)
    benchmark = world["benchmark"]
    answer = logged_in(cast.researcher).get(f"/benchmarks/{benchmark.name}/")
    assert f"/benchmarks/{benchmark.name}/data/" in answer.content.decode()
    home = logged_in(cast.researcher).get(f"/benchmarks/{benchmark.name}/data/")
    assert home.status_code == 302 and home["Location"].endswith("/data/items/")


def test_a_stranger_sees_no_worker_of_a_benchmark_they_do_not_see(cast: Cast) -> None:
    world = build("swords", cast)
    BenchmarkMember.objects.create(benchmark=world["benchmark"], user=cast.researcher, role=Role.OWNER)
    mine = build("swords", cast)
    stranger: User = make_user("stan", researcher=True)
    BenchmarkMember.objects.create(benchmark=mine["benchmark"], user=stranger, role=Role.OWNER)
    names = [row[1] for row in rows_of(table_page(logged_in(stranger), mine["benchmark"], "workers"))]
    assert names and not any(judge.external_id in names for judge in world["judges"])


def _walked(client: Client, benchmark: Benchmark, table: str, query: str) -> tuple[int, list[int]]:
    """The view's count and every id of it, followed page by page forwards, then back from the last page."""
    answer = table_page(client, benchmark, table, query)
    count = answer.context["page"].count
    ids, followed = walk(client, benchmark, table, query)
    back: list[int] = []
    previous = table_page(client, benchmark, table, followed[-1]).context["page"].previous
    while previous:
        page = table_page(client, benchmark, table, previous).context["page"]
        back = ids_of_page(page) + back
        previous = page.previous
    assert len(followed) == 1 or back == ids[: len(back)]
    return count, ids


def ids_of_page(page: Any) -> list[int]:
    return [row.pk for row in page.objects]


@pytest.mark.parametrize("scheme_name", ["swords", "prolex", "sws", "tsar"])
def test_views_built_once_show_what_the_orm_shows_for_every_benchmark_value_and_change(
    cast: Cast, scheme_name: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view's count and page of ids are statements built once per shape of view (docs/design.md §7,
    "Statements built once"): another benchmark, another filter's id or choice, another position and
    every kind of change show what the statements the ORM builds each time show."""
    from analysis.browser import core

    settings.DATA_BROWSER_PAGE_SIZE = 2
    worlds = [build(scheme_name, cast), build(scheme_name, cast)]
    client = logged_in(cast.researcher)
    shaped_views = []
    counting = core.shaped_rows_counted

    def counted(*arguments: Any, **options: Any) -> int:
        shaped_views.append(arguments[1])
        return counting(*arguments, **options)

    monkeypatch.setattr(core, "shaped_rows_counted", counted)

    def views(world: dict[str, Any]) -> list[tuple[str, str]]:
        benchmark, judge = world["benchmark"], world["judges"][0]
        return [
            ("items", ""),
            ("items", "stage=reduce&sort=candidates&dir=desc"),
            ("items", "stage=done"),
            ("items", f"batch={world['batch'].pk}&sort=hits"),
            ("candidates", "sort=labels&dir=desc"),
            ("candidates", f"target={world['first'].pk}&stage=excluded"),
            ("candidates", f"target={world['first'].pk}&stage=reduce"),
            ("candidates", f"worker={judge.pk}"),
            ("labels", f"worker={judge.pk}&value=accept"),
            ("labels", f"worker={judge.pk}&value=reject&sort=time&dir=desc"),
            ("labels", "counted=no&sort=assignment"),
            ("labels", f"target={world['first'].pk}&sort=batch&dir=desc"),
            ("hits", f"batch={world['batch'].pk}&sort=done&dir=desc"),
            ("hits", "status=open&sort=part"),
            ("hits", f"worker={Worker.objects.get(user=cast.alice).pk}"),
            ("workers", "sort=labels&dir=desc"),
        ] + [(table, "sort=id&dir=desc") for table in TABLES if benchmark]

    def compared() -> None:
        for world in worlds:
            for table, query in views(world):
                shaped = _walked(client, world["benchmark"], table, query)
                with monkeypatch.context() as orm:
                    orm.setattr(core, "_view_shape", lambda *arguments, **options: None)
                    assert _walked(client, world["benchmark"], table, query) == shaped, (table, query)

    compared()
    assert len(shaped_views) > 20 and len(set(shaped_views)) < len(shaped_views)
    # Each kind of change: labels given, a candidate excluded, work filtered, a target moved on.
    first, judge = worlds[1]["first"], worlds[1]["judges"][1]
    for candidate in Candidate.objects.filter(target=first).order_by("pk")[:2]:
        Label.objects.create(candidate=candidate, value="accept", origin="file", position=9, worker=judge)
    tallies_benchmark_recount(benchmark_id=worlds[1]["benchmark"].pk)
    kept = Candidate.objects.filter(target=first).exclude(stage=CandidateStage.EXCLUDED).order_by("pk")
    Candidate.objects.filter(pk__in=list(kept.values_list("pk", flat=True)[:1])).update(stage=CandidateStage.EXCLUDED)
    Assignment.objects.filter(hit__batch__benchmark=worlds[1]["benchmark"]).update(filtered=True)
    Target.objects.filter(pk=Target.objects.filter(benchmark=worlds[1]["benchmark"]).latest("pk").pk).update(
        stage="done"
    )
    compared()


def _shown(client: Client, benchmark: Benchmark, table: str, query: str) -> list[Any]:
    """Every page of the view as shown, followed forwards from the first page and back from the
    last: each page's count, cells (text, link, CSV value) and next and previous pages."""
    pages: list[Any] = []
    following = query
    while True:
        page = table_page(client, benchmark, table, following).context["page"]
        pages.append((page.count, page.count_capped, page.rows, page.next, page.previous))
        if not page.next:
            break
        following = page.next
    previous = pages[-1][-1]
    while previous:
        page = table_page(client, benchmark, table, previous).context["page"]
        pages.append((page.count, page.rows, page.next, page.previous))
        previous = page.previous
    return pages


@pytest.mark.parametrize("scheme_name", ["swords", "prolex", "sws", "tsar"])
def test_searches_text_positions_and_workers_built_once_show_what_the_orm_shows(
    cast: Cast, scheme_name: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view with a search (its text a parameter, compared whole or contained, a pattern's own
    characters taken as they are), a page after a text sort's position and the workers table, for a
    researcher and a superuser, are statements built once per shape of view that show what the
    ORM's statements show (docs/design.md §7, "Statements built once")."""
    from analysis.browser import core

    settings.DATA_BROWSER_PAGE_SIZE = 2
    worlds = [build(scheme_name, cast), build(scheme_name, cast)]
    BenchmarkMember.objects.create(benchmark=worlds[1]["benchmark"], user=cast.researcher, role=Role.OWNER)
    judge = worlds[1]["judges"][0]
    WorkerFlag.objects.create(worker=judge, benchmark=worlds[1]["benchmark"], reason="agreement")
    # A word whose pattern characters the search takes as they are.
    Candidate.objects.filter(target=worlds[1]["first"], text="rested").update(text="re%st_ed")
    superuser = User.objects.create_superuser("root-browser", "", PASSWORD)
    shaped_views: list[str] = []
    counting = core.shaped_rows_counted

    def counted(*arguments: Any, **options: Any) -> int:
        shaped_views.append(arguments[1])
        return counting(*arguments, **options)

    monkeypatch.setattr(core, "shaped_rows_counted", counted)
    views = [
        ("items", "q=cat"),
        ("items", "q=MAT NUMBER 1&sort=item&dir=desc"),
        ("items", "q=%&sort=stage"),
        ("candidates", "q=e&sort=text"),
        ("candidates", "q=%st_&sort=item&dir=desc"),
        ("candidates", "q=_"),
        ("candidates", "q=ERCH&stage=reduce&sort=sources"),
        ("labels", "q=r&sort=candidate"),
        ("labels", "origin=file&sort=worker&dir=desc"),
        ("labels", "origin=fil"),
        ("labels", "q=%25"),
        ("hits", "q=a&sort=item"),
        ("hits", "sort=status&dir=desc"),
        ("workers", ""),
        ("workers", "q=judge&sort=worker"),
        ("workers", "q=JUDGE1&kind=imported&sort=worker&dir=desc"),
        ("workers", "flagged=yes&sort=labels&dir=desc"),
        ("workers", "flagged=no&blocked=no&sort=kind"),
        ("workers", "sort=assignments&dir=desc"),
    ]
    for reader in (cast.researcher, superuser):
        client = logged_in(reader)
        for world in worlds:
            for table, query in views:
                shaped_views.clear()
                shaped = _shown(client, world["benchmark"], table, query)
                assert shaped_views, (table, query)
                with monkeypatch.context() as orm:
                    orm.setattr(core, "_view_shape", lambda *arguments, **options: None)
                    assert _shown(client, world["benchmark"], table, query) == shaped, (table, query)
    # The searches found what they look for, pattern characters as they are.
    client = logged_in(cast.researcher)
    texts = [
        row[1].text for row in table_page(client, worlds[1]["benchmark"], "candidates", "q=%st_").context["page"].rows
    ]
    if texts:
        assert texts == ["re%st_ed"]
    assert table_page(client, worlds[1]["benchmark"], "items", "q=%").context["page"].count == 0
    names = [
        row[1].text for row in table_page(client, worlds[1]["benchmark"], "workers", "q=JUDGE1").context["page"].rows
    ]
    # A judge is the benchmark's worker where they labelled (a scheme whose item is the sentence has no candidates).
    other = worlds[1]["judges"][1]
    assert names == ([other.external_id] if Label.objects.filter(worker=other).exists() else [])
    # One statement for every text searched: the shape names the filter, not its text.
    shaped_views.clear()
    for text in ("cat", "mat", "sat on"):
        table_page(client, worlds[0]["benchmark"], "items", f"q={text}")
    assert len(set(shaped_views)) == 1 and len(shaped_views) == 3
