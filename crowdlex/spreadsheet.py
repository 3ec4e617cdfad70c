"""CSV that a spreadsheet opens as data: no cell runs as a formula (CSV injection, as OWASP describes).

Every CSV table meant for a spreadsheet writes through ``SpreadsheetSafeWriter`` (labels,
candidates, HITs, proposals, suggestions); a release format (the ProLex CSV, the JSON formats, the
dataset folder) keeps the text exact, since it must read back as it was released.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

# A cell starting with one of these is read as a formula by Excel, LibreOffice or Google Sheets.
FORMULA_TRIGGERS = frozenset("=+-@\t\r")
# Text that is a plain number ("-1", "+2.5e3") is data: a spreadsheet reads it as that number.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class Writable(Protocol):
    def write(self, text: str, /) -> object: ...


def spreadsheet_safe(row: Iterable[Any]) -> list[Any]:
    """The row with every text cell that would run as a formula prefixed with a single quote.

    Numbers, empty cells and text that is a plain number stay as they are: they are data.
    """
    return [
        "'" + cell if type(cell) is str and cell[:1] in FORMULA_TRIGGERS and not _NUMBER.fullmatch(cell) else cell
        for cell in row
    ]


class SpreadsheetSafeWriter:
    """``csv.writer`` that neutralises formula cells (``spreadsheet_safe``) in every row it writes."""

    def __init__(self, out: Writable, **format: Any) -> None:
        self.writer = csv.writer(out, **format)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self.writer.writerow(spreadsheet_safe(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        self.writer.writerows(map(spreadsheet_safe, rows))
