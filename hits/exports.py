"""A batch as an MTurk-style input CSV: one row per HIT, columns named like template variables.

Columns: hit_id, batch_id, target_id, target, pos, offset, part, context, then for each position i
(counting from 1, in display order) item_i_text, item_i_candidate_id (empty for controls) and
item_i_kind (candidate, control_target or control_distractor). Rows stream from the database in
batches, so memory stays bounded whatever the batch size. Cells a spreadsheet would run as
formulas are neutralised (``crowdlex.spreadsheet``).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

from django.conf import settings

from crowdlex.spreadsheet import Writable, spreadsheet_safe_chunks
from hits import selectors
from hits.models import Batch

HIT_COLUMNS = ["hit_id", "batch_id", "target_id", "target", "pos", "offset", "part", "context"]
ITEM_FIELDS = ["text", "candidate_id", "kind"]


def hits_csv_header(*, item_count: int) -> list[str]:
    return HIT_COLUMNS + [f"item_{i}_{field}" for i in range(1, item_count + 1) for field in ITEM_FIELDS]


def _hits_csv_batches(*, batch: Batch) -> tuple[list[str], Iterator[list[list[Any]]], tuple[int, ...]]:
    """The header, the rows (one per HIT in id order, CSV_DOWNLOAD_BATCH_ROWS at a time; short HITs
    leave their last columns empty) and the columns that hold text."""
    size = settings.CSV_DOWNLOAD_BATCH_ROWS
    item_count = selectors.batch_max_items(batch=batch)
    width = len(ITEM_FIELDS) * item_count
    hits, items = selectors.batch_export_rows(batch=batch, chunk_size=size)
    item = next(items, None)

    def rows(chunk: list[tuple[Any, ...]]) -> list[list[Any]]:
        nonlocal item
        out = []
        for pk, target_id, word, pos, offset, part, context in chunk:
            cells: list[Any] = [""] * width
            # The items come in the HITs' order: this HIT's are next.
            while item is not None and item[0] == pk:
                start = (item[1] - 1) * len(ITEM_FIELDS)
                cells[start : start + len(ITEM_FIELDS)] = [item[2], item[3] or "", item[4]]
                item = next(items, None)
            out.append([pk, batch.pk, target_id, word, pos, offset, part, context, *cells])
        return out

    batches = (rows(chunk) for chunk in iter(lambda: list(islice(hits, size)), []))
    text = (3, 4, 7, *(len(HIT_COLUMNS) + index for index in range(width) if index % len(ITEM_FIELDS) != 1))
    return hits_csv_header(item_count=item_count), batches, text


def hits_csv_chunks(*, batch: Batch) -> Iterator[str]:
    """The CSV as text, its header's line first then a string per batch of rows, for a streaming HTTP
    response: two statements whatever the batch holds (``selectors.batch_export_rows``), run when the
    body is first read, not when the response is made."""
    header, batches, text = _hits_csv_batches(batch=batch)
    yield from spreadsheet_safe_chunks(header, batches, text=text)


def hits_csv_write(*, batch: Batch, out: Writable) -> int:
    """Write the CSV to a text stream; returns the number of HITs written."""
    header, batches, text = _hits_csv_batches(batch=batch)
    written = 0

    def counted() -> Iterator[list[list[Any]]]:
        nonlocal written
        for rows in batches:
            written += len(rows)
            yield rows

    for chunk in spreadsheet_safe_chunks(header, counted(), text=text):
        out.write(chunk)
    return written
