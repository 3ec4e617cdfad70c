"""A batch as an MTurk-style input CSV: one row per HIT, columns named like template variables.

Columns: hit_id, batch_id, target_id, target, pos, offset, part, context, then for each position i
(counting from 1, in display order) item_i_text, item_i_candidate_id (empty for controls) and
item_i_kind (candidate, control_target or control_distractor). Rows stream from the database in
batches, so memory stays bounded whatever the batch size. Cells a spreadsheet would run as
formulas are neutralised (``crowdlex.spreadsheet``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from django.conf import settings

from crowdlex.kept_pages import Resumable
from crowdlex.spreadsheet import Writable, spreadsheet_safe_chunks
from hits import selectors
from hits.models import Batch

HIT_COLUMNS = ["hit_id", "batch_id", "target_id", "target", "pos", "offset", "part", "context"]
ITEM_FIELDS = ["text", "candidate_id", "kind"]


def hits_csv_header(*, item_count: int) -> list[str]:
    return HIT_COLUMNS + [f"item_{i}_{field}" for i in range(1, item_count + 1) for field in ITEM_FIELDS]


def _hits_csv_rows(
    *, batch_id: int, item_count: int, size: int, after: int = 0
) -> tuple[Iterator[tuple[list[list[Any]], int]], tuple[int, ...]]:
    """The rows of the HITs after the HIT ``after`` (0: every HIT), one per HIT in id order, ``size``
    at a time, each batch with the id of its last HIT (short HITs leave their last columns empty),
    and the columns that hold text."""
    width = len(ITEM_FIELDS) * item_count
    hits, items = selectors.batch_export_rows(batch_id=batch_id, chunk_size=size, after=after)
    item = next(items, None)

    def rows(chunk: list[tuple[Any, ...]]) -> tuple[list[list[Any]], int]:
        nonlocal item
        out = []
        for pk, target_id, word, pos, offset, part, context in chunk:
            cells: list[Any] = [""] * width
            # The items come in the HITs' order: this HIT's are next.
            while item is not None and item[0] == pk:
                start = (item[1] - 1) * len(ITEM_FIELDS)
                cells[start : start + len(ITEM_FIELDS)] = [item[2], item[3] or "", item[4]]
                item = next(items, None)
            out.append([pk, batch_id, target_id, word, pos, offset, part, context, *cells])
        return out, chunk[-1][0]

    batches = (rows(chunk) for chunk in iter(lambda: list(islice(hits, size)), []))
    text = (3, 4, 7, *(len(HIT_COLUMNS) + index for index in range(width) if index % len(ITEM_FIELDS) != 1))
    return batches, text


def hits_csv_chunks(*, batch: Batch) -> Resumable:
    """The CSV as text, its header's line first then a string per batch of rows, for a streaming HTTP
    response: three statements whatever the batch holds (the widest HIT, then
    ``selectors.batch_export_rows``), run when the body is first read, not when the response is
    made. Each chunk carries the id of the last HIT it wrote: the chunks after it are made again by
    ``hits_csv_rest`` (``crowdlex.kept_pages.Resumable``)."""
    size = settings.CSV_DOWNLOAD_BATCH_ROWS
    batch_id = batch.pk
    widest = 0

    def chunks() -> Iterator[tuple[str, int]]:
        nonlocal widest
        widest = selectors.batch_max_items(batch=batch)
        batches, text = _hits_csv_rows(batch_id=batch_id, item_count=widest, size=size)
        last = 0

        def tracked() -> Iterator[list[list[Any]]]:
            nonlocal last
            for rows, through in batches:
                last = through
                yield rows

        for chunk in spreadsheet_safe_chunks(hits_csv_header(item_count=widest), tracked(), text=text):
            yield chunk, last

    def rest(after: int) -> Callable[[], Iterator[str]]:
        return functools.partial(hits_csv_rest, batch_id=batch_id, item_count=widest, size=size, after=after)

    return Resumable(chunks(), rest)


def hits_csv_rest(*, batch_id: int, item_count: int, size: int, after: int) -> Iterator[str]:
    """The chunks of the batch's CSV after the one that wrote the HIT ``after`` (0: the header's line),
    byte for byte as ``hits_csv_chunks`` makes them: two statements."""
    batches, text = _hits_csv_rows(batch_id=batch_id, item_count=item_count, size=size, after=after)
    return spreadsheet_safe_chunks(None, (rows for rows, _ in batches), text=text)


def hits_csv_write(*, batch: Batch, out: Writable) -> int:
    """Write the CSV to a text stream; returns the number of HITs written."""
    item_count = selectors.batch_max_items(batch=batch)
    batches, text = _hits_csv_rows(batch_id=batch.pk, item_count=item_count, size=settings.CSV_DOWNLOAD_BATCH_ROWS)
    written = 0

    def counted() -> Iterator[list[list[Any]]]:
        nonlocal written
        for rows, _ in batches:
            written += len(rows)
            yield rows

    for chunk in spreadsheet_safe_chunks(hits_csv_header(item_count=item_count), counted(), text=text):
        out.write(chunk)
    return written
