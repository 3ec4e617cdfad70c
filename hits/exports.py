"""A batch as an MTurk-style input CSV: one row per HIT, columns named like template variables.

Columns: hit_id, batch_id, target_id, target, pos, offset, part, context, then for each position i
(counting from 1, in display order) item_i_text, item_i_candidate_id (empty for controls) and
item_i_kind (candidate, control_target or control_distractor). Rows stream from the database in
chunks, so memory stays bounded whatever the batch size. Cells a spreadsheet would run as
formulas are neutralised (``crowdlex.spreadsheet``).
"""

from __future__ import annotations

from collections.abc import Iterator

from crowdlex.spreadsheet import SpreadsheetSafeWriter, Writable
from hits import selectors
from hits.models import Batch

HIT_COLUMNS = ["hit_id", "batch_id", "target_id", "target", "pos", "offset", "part", "context"]
ITEM_FIELDS = ["text", "candidate_id", "kind"]


def hits_csv_header(*, item_count: int) -> list[str]:
    return HIT_COLUMNS + [f"item_{i}_{field}" for i in range(1, item_count + 1) for field in ITEM_FIELDS]


def hits_csv_rows(*, batch: Batch) -> Iterator[list[str]]:
    """The header, then one row per HIT in id order; short HITs leave their last columns empty."""
    item_count = selectors.batch_max_items(batch=batch)
    yield hits_csv_header(item_count=item_count)
    for hit in selectors.batch_hits_for_export(batch=batch):
        target = hit.target
        row = [str(hit.pk), str(batch.pk), str(target.pk), target.word, target.pos, str(target.offset)]
        row += [str(hit.part), target.context.text]
        cells = [""] * (len(ITEM_FIELDS) * item_count)
        for item in hit.items.all():
            start = (item.position - 1) * len(ITEM_FIELDS)
            cells[start : start + len(ITEM_FIELDS)] = [item.text, str(item.candidate_id or ""), item.kind]
        yield row + cells


def hits_csv_write(*, batch: Batch, out: Writable) -> int:
    """Write the CSV to a text stream; returns the number of HITs written."""
    writer = SpreadsheetSafeWriter(out)
    rows = 0
    for row in hits_csv_rows(batch=batch):
        writer.writerow(row)
        rows += 1
    return rows - 1


class _Echo:
    """csv.writer target that hands each formatted line back instead of storing it."""

    def write(self, text: str) -> str:
        return text


def hits_csv_lines(*, batch: Batch) -> Iterator[str]:
    """The CSV as lines, for a streaming HTTP response."""
    writer = SpreadsheetSafeWriter(_Echo())
    for row in hits_csv_rows(batch=batch):
        yield writer.writerow(row)
