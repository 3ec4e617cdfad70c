"""The data browser's CSV downloads and the batch's HITs CSV: the bytes of every table, view, scheme and
reader are those of the reference kept below (the CSV as the browser wrote it when it read each
chunk of rows by the pages' keyset and the cells the pages show), and a download runs the same
statements on small and on larger data (docs/design.md §7, "The data browser")."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Prefetch
from django.test.utils import CaptureQueriesContext

from analysis.browser import TABLES, Context, page_read, view_read
from analysis.browser.core import Table, View, _beyond, _fetched, _ordered, filtered
from analysis.models import SavedView
from annotation.access import Role
from annotation.models import BenchmarkMember, Candidate, Label, Target, Worker, WorkerKind
from annotation.tallies import tallies_benchmark_recount
from crowdlex.spreadsheet import SpreadsheetSafeWriter
from hits import selectors
from hits.models import HIT, Batch, HITItem
from review.models import WorkerFlag
from tests.analysis.test_data_browser import _grow, build
from tests.base import PASSWORD, Cast, logged_in, make_user
from tests.scheme_benchmarks import BENCHMARK_SCHEMES

pytestmark = pytest.mark.django_db

# Texts a CSV must quote or a spreadsheet would run: commas, quotes, line breaks, other scripts, and
# the formula triggers after blanks.
AWKWARD = (
    "a,b",
    'say "hi"',
    "two\nlines",
    "cr\r\nlf",
    "naïve — 東京 ü",
    "+1",
    "-x",
    "@sum(1)",
    " =cmd",
    "\tindent",
    "\u00a0+hidden",
    "-1.5e3",
    "",
)


# The reference: the CSV as the browser wrote it before downloads read one stream of rows -----------


class _Echo:
    def write(self, value: str) -> str:
        return value


def reference_rows(table: Table, context: Context, view: View, chunk: int) -> Iterator[list[str]]:
    """The view's CSV rows, header first, read ``chunk`` rows per query by the pages' keyset, with
    the cells the pages show (their CSV values)."""
    columns = table.columns(context)
    yield [column.title for column in columns]
    column = next(found for found in columns if found.key == view.sort)
    ordered = _ordered(filtered(table, context, view), column, descending=view.descending)
    position: tuple[Any, int] | None = None
    while True:
        part = ordered if position is None else ordered.filter(_beyond(position, descending=view.descending))
        keys = list(part.values_list("pk", "browser_sort")[:chunk])
        if not keys:
            return
        for cells in table.cells(context, _fetched(table, context, keys)):
            yield [cell.value for cell in cells]
        if len(keys) < chunk:
            return
        position = (keys[-1][1], keys[-1][0])


def reference_csv(benchmark: Any, user: Any, table: str, query: str, chunk: int = 3) -> bytes:
    found = TABLES[table]
    context = Context.of(benchmark, user, links=False)
    view = view_read(found, context, dict(pair.split("=", 1) for pair in query.split("&") if pair))
    writer = SpreadsheetSafeWriter(_Echo())
    return "".join(writer.writerow(row) for row in reference_rows(found, context, view, chunk)).encode()


def reference_hits_csv(batch: Batch) -> bytes:
    """The batch's HITs CSV as it was written: a HIT, its items prefetched, per row."""
    item_count = selectors.batch_max_items(batch=batch)
    fields = ["text", "candidate_id", "kind"]
    header = ["hit_id", "batch_id", "target_id", "target", "pos", "offset", "part", "context"]
    rows: list[list[str]] = [header + [f"item_{i}_{name}" for i in range(1, item_count + 1) for name in fields]]
    items = Prefetch("items", queryset=HITItem.objects.order_by("position"))
    hits = HIT.objects.filter(batch=batch).select_related("target__context").prefetch_related(items).order_by("id")
    for hit in hits.iterator(chunk_size=2):
        target = hit.target
        row = [str(hit.pk), str(batch.pk), str(target.pk), target.word, target.pos, str(target.offset)]
        row += [str(hit.part), target.context.text]
        cells = [""] * (len(fields) * item_count)
        for item in hit.items.all():
            start = (item.position - 1) * len(fields)
            cells[start : start + len(fields)] = [item.text, str(item.candidate_id or ""), item.kind]
        rows.append(row + cells)
    writer = SpreadsheetSafeWriter(_Echo())
    return "".join(writer.writerow(row) for row in rows).encode()


# The data ---------------------------------------------------------------------------------------


def awkward_world(scheme_name: str, cast: Cast) -> dict[str, Any]:
    """``build``'s benchmark, plus awkward texts where a researcher's data may put them: candidates,
    sources, origins, a worker's id, a context, and labels at times with and without microseconds."""
    world = build(scheme_name, cast)
    benchmark = world["benchmark"]
    first = world["first"]
    first.context.text = 'A, "quoted"\nline; =SUM(A1) ' + first.context.text
    first.context.save(update_fields=["text"])
    Target.objects.filter(pk=first.pk).update(offset=first.offset + 26)
    odd = Worker.objects.create(kind=WorkerKind.IMPORTED, external_id=f'=HYPERLINK("x"),\n"w" {benchmark.name}')
    WorkerFlag.objects.create(benchmark=benchmark, worker=odd, reason="fast")
    if Candidate.objects.filter(target=first).exists():
        for index, text in enumerate(AWKWARD):
            candidate = Candidate.objects.create(
                target=first, text=text or "·", sources=[text or "-", "a,b", "=src"] if index % 2 else []
            )
            Label.objects.create(
                candidate=candidate,
                value=("accept", "reject", "abstain")[index % 3],
                origin=text or "file",
                position=index,
                worker=odd if index % 2 else world["judges"][0],
            )
    # A time on the second (isoformat leaves its microseconds out) and one in another year.
    labels = list(Label.objects.filter(candidate__target__benchmark=benchmark).order_by("pk"))
    if labels:
        Label.objects.filter(pk=labels[0].pk).update(created_at=datetime(2024, 2, 29, 23, 59, 59, tzinfo=UTC))
        Label.objects.filter(pk=labels[-1].pk).update(created_at=datetime(2025, 1, 1, 0, 0, 0, 120, tzinfo=UTC))
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    world["odd"] = odd
    return world


def download(client: Any, benchmark: Any, table: str, query: str) -> bytes:
    answer = client.get(f"/benchmarks/{benchmark.name}/data/{table}.csv?{query}")
    assert answer.status_code == 200, answer
    assert answer["Content-Type"] == "text/csv; charset=utf-8"
    assert answer["Content-Disposition"] == f'attachment; filename="{benchmark.name}-{table}.csv"'
    return b"".join(answer.streaming_content)


# One filtered and sorted view per table, beside every sort.
FILTERED = {
    "items": "q=a&sort=candidates&dir=desc",
    "candidates": "q=e&sort=score&dir=desc",
    "labels": "counted=yes&sort=candidate&dir=asc",
    "hits": "q=sat&sort=done&dir=desc",
    "workers": "kind=imported&sort=labels&dir=desc",
}


def views_of(table: str, context: Context) -> list[str]:
    keys = [column.key for column in TABLES[table].columns(context) if column.sort is not None]
    return ["", FILTERED[table], *(f"sort={key}&dir={direction}" for key in keys for direction in ("asc", "desc"))]


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_every_tables_csv_is_byte_for_byte_the_reference_in_every_sort_and_scheme(
    cast: Cast, scheme_name: str, settings: Any
) -> None:
    settings.CSV_DOWNLOAD_BATCH_ROWS = 2
    world = awkward_world(scheme_name, cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    context = Context.of(benchmark, cast.researcher, links=False)
    compared = 0
    for table in TABLES:
        for query in views_of(table, context):
            expected = reference_csv(benchmark, cast.researcher, table, query)
            assert download(client, benchmark, table, query) == expected, (table, query)
            compared += expected.count(b"\n") > 1
    assert compared > 20, "the views held rows"


def test_the_awkward_texts_reach_the_csv_quoted_and_neutralised(cast: Cast) -> None:
    world = awkward_world("swords", cast)
    benchmark = world["benchmark"]
    body = download(logged_in(cast.researcher), benchmark, "candidates", f"target={world['first'].pk}")
    texts = [row[1] for row in csv.reader(io.StringIO(body.decode(), newline=""))]
    for text in ("a,b", 'say "hi"', "two\nlines", "naïve — 東京 ü", "'@sum(1)", "' =cmd", "'\tindent", "-1.5e3"):
        assert text in texts
    assert b'"say ""hi"""' in body and b"'=squatted" in body
    labels = download(logged_in(cast.researcher), benchmark, "labels", "sort=time")
    assert b"2024-02-29T23:59:59+00:00" in labels and b"2025-01-01T00:00:00.000120+00:00" in labels
    assert b'"\'=HYPERLINK(""x""),\n""w"" ' in labels


def test_a_saved_view_downloads_what_the_reference_writes(cast: Cast, settings: Any) -> None:
    settings.CSV_DOWNLOAD_BATCH_ROWS = 2
    world = awkward_world("swords", cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    for table, query in FILTERED.items():
        answer = client.post(
            f"/benchmarks/{benchmark.name}/data/views/", {"table": table, "name": f"mine {table}", "query": query}
        )
        assert answer.status_code == 302
        saved_query = SavedView.objects.get(benchmark=benchmark, table=table).query
        assert answer["Location"].endswith(f"?{saved_query}")
        expected = reference_csv(benchmark, cast.researcher, table, saved_query)
        assert download(client, benchmark, table, saved_query) == expected


def test_readers_get_the_workers_they_got_before_and_outsiders_nothing(cast: Cast, settings: Any) -> None:
    settings.CSV_DOWNLOAD_BATCH_ROWS = 2
    world = awkward_world("swords", cast)
    benchmark = world["benchmark"]
    BenchmarkMember.objects.create(benchmark=benchmark, user=cast.researcher, role=Role.OWNER)
    other = awkward_world("swords", cast)
    viewer: User = make_user("vic", researcher=True)
    BenchmarkMember.objects.create(benchmark=benchmark, user=viewer, role=Role.VIEWER)
    admin = User.objects.create_superuser("root", "root@example.org", PASSWORD)
    for reader in (cast.researcher, viewer, admin):
        client = logged_in(reader)
        for table in TABLES:
            query = FILTERED[table] if table != "workers" else "sort=worker"
            assert download(client, benchmark, table, query) == reference_csv(benchmark, reader, table, query)
    body = download(logged_in(viewer), benchmark, "workers", "")
    assert world["judges"][0].external_id.encode() in body
    assert other["judges"][0].external_id.encode() not in body
    stranger = logged_in(make_user("stan", researcher=True))
    for table in TABLES:
        assert stranger.get(f"/benchmarks/{benchmark.name}/data/{table}.csv").status_code == 404
    assert logged_in(cast.alice).get(f"/benchmarks/{benchmark.name}/data/labels.csv").status_code == 403


@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_download_runs_the_same_statements_on_small_and_larger_data(cast: Cast, table: str, settings: Any) -> None:
    settings.CSV_DOWNLOAD_BATCH_ROWS = 4
    world = build("swords", cast)
    benchmark = world["benchmark"]
    client = logged_in(cast.researcher)
    views = ["", FILTERED[table]]

    def statements() -> tuple[list[int], int]:
        counted, size = [], 0
        for query in views:
            download(client, benchmark, table, query)  # the session and caches warm
            with CaptureQueriesContext(connection) as queries:
                size += len(download(client, benchmark, table, query))
            counted.append(len(queries))
        return counted, size

    small, small_size = statements()
    _grow(world, cast, 12)
    larger, larger_size = statements()
    assert larger_size > 2 * small_size, "the larger data spans several batches"
    assert larger == small


def test_the_batch_hits_csv_is_the_reference_and_its_statements_do_not_grow(cast: Cast) -> None:
    world = awkward_world("swords", cast)
    batch = world["batch"]
    client = logged_in(cast.researcher)

    def downloaded() -> tuple[bytes, int]:
        client.get(f"/batches/{batch.pk}/hits.csv")
        with CaptureQueriesContext(connection) as queries:
            answer = client.get(f"/batches/{batch.pk}/hits.csv")
            # The body is read inside: its statements run as it is read.
            body = b"".join(answer.streaming_content)  # type: ignore[attr-defined]
        assert answer.status_code == 200
        return body, len(queries)

    body, small = downloaded()
    assert body == reference_hits_csv(batch)
    _grow(world, cast, 12)
    body, larger = downloaded()
    assert body == reference_hits_csv(batch) and body.count(b"\n") > 12
    assert larger == small


def test_the_workers_table_builds_its_visible_workers_once_a_request(cast: Cast) -> None:
    world = build("swords", cast)
    table = TABLES["workers"]
    context = Context.of(world["benchmark"], cast.researcher)
    page = page_read(table, context, view_read(table, context, {}))
    assert page.objects, "the page shows workers"
    # The page read the rows twice (the ids, then the rows): both from the one queryset built.
    assert table.rows(context) is context.built["workers"]
    assert table.rows(context) is table.rows(context)
