"""CSV that a spreadsheet opens as data: no cell runs as a formula (CSV injection, as OWASP describes).

Every CSV table meant for a spreadsheet writes through ``SpreadsheetSafeWriter`` (proposals,
suggestions) or, a batch of rows at a time, ``spreadsheet_safe_chunks`` (the data browser's tables,
a batch's HITs) or ``neutralised`` (the labels, candidates and answers exports); a release format
(the ProLex CSV, the JSON formats, the dataset folder) keeps the text exact, since it must read
back as it was released.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

# A cell starting with one of these is read as a formula by Excel, LibreOffice or Google Sheets.
FORMULA_TRIGGERS = frozenset("=+-@\t\r")
# Spreadsheets skip leading blanks before they look for a formula (" =3+3" runs), so the first
# character that is not one of these is the one checked; a tab or carriage return is a trigger of
# its own wherever it leads (OWASP, "CSV Injection").
_LEADING_BLANKS = (
    " \n\x0b\x0c\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# Text that is a plain number ("-1", "+2.5e3") is data: a spreadsheet reads it as that number.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


# A cell whose first character is none of these never runs as a formula: the one test most cells
# of a large download need (``_runs_as_formula`` for the few that start with one).
_MAY_RUN = frozenset(FORMULA_TRIGGERS) | frozenset(_LEADING_BLANKS)


class Writable(Protocol):
    def write(self, text: str, /) -> object: ...


def _runs_as_formula(cell: str) -> bool:
    if cell[:1] in ("\t", "\r"):
        return True
    first = cell.lstrip(_LEADING_BLANKS)
    return first[:1] in FORMULA_TRIGGERS and not _NUMBER.fullmatch(first.rstrip())


def spreadsheet_safe(row: Iterable[Any]) -> list[Any]:
    """The row with every text cell that would run as a formula prefixed with a single quote: one
    whose first character that is not blank (a space, a no-break space, a newline) is a formula
    trigger, or that starts with a tab or a carriage return.

    Numbers, empty cells and text that is a plain number (" -1" too) stay as they are: they are data.
    """
    return [cell if type(cell) is not str or not _runs_as_formula(cell) else "'" + cell for cell in row]


class SpreadsheetSafeWriter:
    """``csv.writer`` that neutralises formula cells (``spreadsheet_safe``) in every row it writes."""

    def __init__(self, out: Writable, **format: Any) -> None:
        self.writer = csv.writer(out, **format)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self.writer.writerow(spreadsheet_safe(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        self.writer.writerows(map(spreadsheet_safe, rows))


def neutralised(rows: Sequence[list[Any]], text: Sequence[int]) -> None:
    """Neutralise, in place, the cells of the columns ``text`` of ``rows`` (each text or None) as
    ``spreadsheet_safe`` neutralises text cells: the first character of each is the one test most
    cells need."""
    may_run = _MAY_RUN
    for index in text:
        for row in rows:
            cell = row[index]
            if cell and cell[:1] in may_run and _runs_as_formula(cell):
                row[index] = "'" + cell


def spreadsheet_safe_chunks(
    header: Sequence[str] | None,
    batches: Iterable[Sequence[list[Any]]],
    *,
    text: Sequence[int],
    lineterminator: str = "\r\n",
) -> Iterator[str]:
    """The CSV of ``header`` and the rows of ``batches`` (each batch a list of rows, each row a list
    the batch's owner gives up), as ``SpreadsheetSafeWriter`` writes it: the header's line, then one
    string per batch. The cells of the columns ``text`` are text (never None) and are neutralised as
    ``spreadsheet_safe`` does; the other columns hold only numbers, None (written empty) or text that
    cannot start with a formula trigger (a number, a time, yes/no), which ``spreadsheet_safe``
    leaves as they are anyway. Formatting a batch at a time, not a row, is what keeps a download of
    hundreds of thousands of rows near the cost of reading them (docs/design.md §7, "Whole CSV
    downloads"). ``lineterminator`` ends each line, as ``csv.writer``'s own. With ``header`` None,
    the batches' strings alone: the rest of a download whose head was kept."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=lineterminator)
    if header is not None:
        writer.writerow(spreadsheet_safe(header))
        yield buffer.getvalue()
    for rows in batches:
        neutralised(rows, text)
        buffer.seek(0)
        buffer.truncate()
        writer.writerows(rows)
        yield buffer.getvalue()


def formula_cells(cells: Iterable[str | None]) -> dict[str, str]:
    """The cells among ``cells`` (text or None, each looked at once: pass the distinct ones) that
    would run as a formula, each to its text neutralised as ``spreadsheet_safe`` neutralises it."""
    may_run = _MAY_RUN
    return {cell: "'" + cell for cell in cells if cell and cell[:1] in may_run and _runs_as_formula(cell)}
