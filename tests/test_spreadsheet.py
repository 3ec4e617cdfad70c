"""CSV cells a spreadsheet would run as formulas are neutralised; data stays data."""

from __future__ import annotations

import csv
import io

import pytest

from crowdlex.spreadsheet import SpreadsheetSafeWriter, spreadsheet_safe, spreadsheet_safe_chunks


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("https://evil.example","x")', '\'=HYPERLINK("https://evil.example","x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        (" =3+3", "' =3+3"),
        ("   @SUM(A1:A9)", "'   @SUM(A1:A9)"),
        ("\u00a0+cmd|' /C calc'!A0", "'\u00a0+cmd|' /C calc'!A0"),
        ("\n=1+1", "'\n=1+1"),
        ("\ufeff=1+1", "'\ufeff=1+1"),
        ("\t-1", "'\t-1"),
        (" well-known", " well-known"),
        ("well-known", "well-known"),
        ("a = b", "a = b"),
        ("", ""),
    ],
)
def test_text_that_would_run_as_a_formula_gets_a_leading_quote(cell: str, written: str) -> None:
    assert spreadsheet_safe([cell]) == [written]


@pytest.mark.parametrize("cell", [-1, -0.25, 3, None, "-1", "+2.5", "-3e5", "-.5", " -1", "  +2.5 "])
def test_numbers_are_data_and_stay_as_they_are(cell: object) -> None:
    assert spreadsheet_safe([cell]) == [cell]


def test_the_writer_neutralises_every_row_it_writes() -> None:
    out = io.StringIO()
    writer = SpreadsheetSafeWriter(out, lineterminator="\n")
    writer.writerow(["name", "value"])
    writer.writerows([["=1+1", -1], ["plain", "@x"]])

    assert list(csv.reader(io.StringIO(out.getvalue()))) == [["name", "value"], ["'=1+1", "-1"], ["plain", "'@x"]]


TEXTS = [
    '=HYPERLINK("https://evil.example","x")',
    "-2+3",
    "\t=1+1",
    "\r=1+1",
    " =3+3",
    "\u00a0+cmd",
    "\n=1+1",
    "\ufeff=1+1",
    "\u3000@x",
    " well-known",
    "a = b",
    "",
    "-1",
    " -1",
    "+2.5",
    'a,"b"\nc',
    "naïve 東京",
]


def test_a_batch_is_written_as_the_writer_writes_its_rows_one_by_one() -> None:
    header = ["id", "text", "=total", "when"]
    rows = [
        [number, text, number * 2, None if number % 2 else "2024-01-01T00:00:00+00:00"]
        for number, text in enumerate(TEXTS)
    ]
    one_by_one = io.StringIO()
    writer = SpreadsheetSafeWriter(one_by_one)
    writer.writerow(header)
    writer.writerows(rows)

    batches = [[list(row) for row in rows[:5]], [list(row) for row in rows[5:]], []]
    chunks = list(spreadsheet_safe_chunks(header, batches, text=(1,)))

    assert len(chunks) == 4, "the header's line, then one string per batch"
    assert "".join(chunks) == one_by_one.getvalue()
