"""Records made ahead in a thread of their own come in order, errors come where they happened, and
a writer that stops early stops the thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from annotation.importers import prefetch
from annotation.importers.records import TargetRecord, Where


def _records(count: int, *, fail_at: int | None = None) -> Iterator[TargetRecord]:
    for number in range(count):
        if number == fail_at:
            raise ValueError(f"record {number} is bad")
        yield TargetRecord(where=Where("f", line=number + 1), context_text=f"context {number}", word=None)


def _threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name == "import-records"}


def test_the_records_come_in_order_across_batches() -> None:
    count = prefetch.BATCH_RECORDS * prefetch.BATCHES_AHEAD * 3 + 7

    lines = [record.where.line for record in prefetch.records_ahead(_records(count))]

    assert lines == list(range(1, count + 1))
    assert not _threads()


def test_an_error_making_a_record_is_raised_after_the_records_before_it() -> None:
    seen = []
    with pytest.raises(ValueError, match="record 120 is bad"):
        for record in prefetch.records_ahead(_records(500, fail_at=120)):
            seen.append(record.where.line)

    assert seen == list(range(1, 121))
    assert not _threads()


def test_a_writer_that_stops_early_stops_the_thread() -> None:
    records = prefetch.records_ahead(_records(100_000))
    assert next(records).where.line == 1
    assert _threads()

    records.close()

    assert not _threads()
