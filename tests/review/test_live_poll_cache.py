"""The live poll answers from figures computed once per change of the benchmark (annotation.changes):
a poll that sends back its ETag while nothing changed gets a 304 without reading the benchmark's
rows, any number of tabs cost what one does, and every kind of change shows on the next poll."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.changes import change_key
from annotation.models import Benchmark, Candidate, Worker
from annotation.services import benchmark_import
from hits.models import HITItem
from hits.services import (
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    batch_close,
    benchmark_settings_update,
    candidate_exclude,
)
from review.selectors import review_settings
from review.services import benchmark_refresh, review_settings_update
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db

# The tables whose rows grow with the benchmark: a poll with nothing new reads none of them.
HEAVY = re.compile(r'"(annotation_label|annotation_candidate|annotation_target|hits_hit|hits_assignment|hits_hititem)"')


def _client(cast: Cast) -> Client:
    client = Client()
    client.force_login(cast.researcher)
    return client


def _poll(client: Client, url: str, tag: str | None = None) -> tuple[Any, list[str]]:
    headers = {"If-None-Match": tag} if tag else {}
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, headers=headers)
    return response, [query["sql"] for query in queries.captured_queries]


@pytest.mark.parametrize("part", ["", "?part=batches"])
def test_a_second_poll_with_nothing_new_is_a_304_that_reads_no_rows_of_the_benchmark(cast: Cast, part: str) -> None:
    benchmark = make_benchmark(targets=2, candidates=8)
    step2_batch(benchmark)
    work_once(simulated("ann"), benchmark, honest())
    client = _client(cast)
    url = f"/benchmarks/{benchmark.name}/live/{part}"

    first, first_statements = _poll(client, url)
    assert first.status_code == 200
    assert any(HEAVY.search(sql) for sql in first_statements), "the first poll computes the figures"
    tag = first["ETag"]
    assert tag

    # Any number of tabs: each poll costs the same few statements, none of them on the benchmark's rows.
    for _ in range(3):
        again, statements = _poll(client, url, tag)
        assert again.status_code == 304
        assert again.content == b""
        assert [sql for sql in statements if HEAVY.search(sql)] == []
        # The session, the user, the benchmark and the reader's role, and the change key.
        assert len(statements) <= 5, statements
    # Without the ETag (a tab just opened) the figures come from the cache, not from the rows.
    fresh, statements = _poll(client, url)
    assert fresh.status_code == 200
    assert fresh.json() == first.json()
    assert [sql for sql in statements if HEAVY.search(sql)] == []


def _submit(benchmark: Benchmark, cast: Cast) -> None:
    work_once(simulated("second"), benchmark, honest())


def _claim_and_return(benchmark: Benchmark, cast: Cast) -> None:
    assignment = assignment_claim_next(worker=simulated("returner"), benchmark=benchmark)
    assert assignment is not None
    assignment_return(assignment=assignment)


def _refresh(benchmark: Benchmark, cast: Cast) -> None:
    # Work submitted, then the refresh that looks at it: the refresh alone must move the key again.
    worker = simulated("refreshed")
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None
    answer = honest()
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: answer(item) for item in items})
    before = change_key(benchmark_id=benchmark.pk)
    benchmark_refresh(benchmark=benchmark, touched_only=True)
    assert change_key(benchmark_id=benchmark.pk) != before


def _import(benchmark: Benchmark, cast: Cast, tmp_path: Any) -> None:
    path = tmp_path / "more.jsonl"
    path.write_text(
        '{"context": "A dog ran along the beach at dawn.", "target": "ran", "offset": 6, "pos": "verb", '
        '"candidates": ["sprinted", "dashed"]}\n'
    )
    benchmark_import(path_or_file=str(path), benchmark_name=benchmark.name)


def _settings(benchmark: Benchmark, cast: Cast) -> None:
    benchmark_settings_update(benchmark=benchmark, reward="0.25", by=cast.researcher)


def _review_settings(benchmark: Benchmark, cast: Cast) -> None:
    current = review_settings(benchmark=benchmark).auto_block_spammers
    review_settings_update(benchmark=benchmark, auto_block_spammers=not current, by=cast.researcher)


def _exclusion(benchmark: Benchmark, cast: Cast) -> None:
    candidate = Candidate.objects.filter(target__benchmark=benchmark).order_by("pk").first()
    assert candidate is not None
    assert candidate_exclude(candidate=candidate, by=cast.researcher)


def _batch_close(benchmark: Benchmark, cast: Cast) -> None:
    assert batch_close(batch=benchmark.batches.get(), by=cast.researcher)  # type: ignore[attr-defined]


CHANGES: dict[str, Callable[..., None]] = {
    "submit": _submit,
    "return": _claim_and_return,
    "refresh": _refresh,
    "import": _import,
    "settings": _settings,
    "review settings": _review_settings,
    "exclusion": _exclusion,
    "batch closed": _batch_close,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_change_of_the_benchmark_shows_on_the_next_poll(cast: Cast, change: str, tmp_path: Any) -> None:
    benchmark = make_benchmark(targets=2, candidates=8)
    step2_batch(benchmark)
    work_once(simulated("ann"), benchmark, honest())
    client = _client(cast)
    url = f"/benchmarks/{benchmark.name}/live/?part=batches"
    first, _ = _poll(client, url)
    tag = first["ETag"]
    key = change_key(benchmark_id=benchmark.pk)

    action = CHANGES[change]
    if change == "import":
        action(benchmark, cast, tmp_path)
    else:
        action(benchmark, cast)

    assert change_key(benchmark_id=benchmark.pk) != key
    after, statements = _poll(client, url, tag)
    assert after.status_code == 200, "a change is seen on the next poll"
    assert after["ETag"] != tag
    assert any(HEAVY.search(sql) for sql in statements), "the figures are computed again"
    if change in {"submit", "import", "exclusion", "batch closed", "return", "refresh"}:
        assert after.json() != first.json()


def test_the_figures_after_a_change_are_those_computed_from_the_rows(cast: Cast) -> None:
    """Never stale: after a submit, the cached answer equals one computed with an empty cache."""
    from django.core.cache import cache

    benchmark = make_benchmark(targets=2, candidates=8)
    step2_batch(benchmark)
    client = _client(cast)
    url = f"/benchmarks/{benchmark.name}/live/"
    client.get(url)
    for name in ("one", "two"):
        work_once(simulated(name), benchmark, honest())
        polled = client.get(url).json()
        cache.clear()
        assert client.get(url).json() == polled
    assert Worker.objects.filter(external_id__in=["one", "two"]).count() == 2


# What the benchmark page shows below its batches' table, and the live poll's batches part does not.
BELOW_THE_TABLE = re.compile(r'"(hits_hitflag|hits_hitreservation)"')


def test_the_batches_part_reads_what_its_table_shows_and_nothing_else(cast: Cast) -> None:
    """The poll's ``?part=batches`` renders the batches' table alone: it reads neither the flags'
    count nor whether a HIT is reserved (the page's links below the table), and its table is the
    one the benchmark page shows."""
    benchmark = make_benchmark(targets=2, candidates=8)
    step2_batch(benchmark)
    client = _client(cast)
    url = f"/benchmarks/{benchmark.name}/live/?part=batches"
    for name in ("one", "two"):
        work_once(simulated(name), benchmark, honest())
        # The poll without the part first: the live figures both answers hold are computed by it.
        _, figures = _poll(client, f"/benchmarks/{benchmark.name}/live/")
        assert any(HEAVY.search(sql) for sql in figures), "the figures are computed after the submit"
        polled, statements = _poll(client, url)
        assert any(HEAVY.search(sql) for sql in statements), "the table's own figures are read"
        assert [sql for sql in statements if BELOW_THE_TABLE.search(sql)] == []
        table = polled.json()["parts"]["batches"]
        assert "<tbody>" in table and f"/batches/{benchmark.batches.get().pk}/" in table  # type: ignore[attr-defined]
        page = client.get(f"/benchmarks/{benchmark.name}/").content.decode()
        assert table in page, "the part is the table the benchmark page shows"
