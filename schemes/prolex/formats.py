"""The ProLex CSV release (Zhang et al. 2024): reading it into records and writing its rows.

ASCII CSV with the columns ``target word``, ``Sentence`` (every occurrence of the target wrapped
in ``**``, kept verbatim), ``acc_subs``, ``unacc_subs``, ``prof_acc_subs``, ``prof_unacc_subs``
(each a Python list of strings, read with ``ast.literal_eval``), and in some releases the levels:
``t_words_cefr`` (an integer) and ``prof_acc_cefr`` / ``prof_unacc_cefr`` (lists of levels, one
per entry of the proficiency lists; ``levels`` says how levels are written).

A row becomes a target in its sentence (the ``**`` marks removed) at the first marked occurrence,
with a candidate per distinct substitute and an imported label per entry of ``acc_subs`` (1) and
``unacc_subs`` (-1). The row itself is kept with the target (``Target.extra["prolex"]``): lists
keep their order, their duplicates and their strings as written, so the release exports back
with the same content, columns and row order.
"""

from __future__ import annotations

import ast
import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from annotation.importers import ImportFormat, ParsedFile, register_import_format
from annotation.importers.csv_format import csv_rows, refuse_nul
from annotation.importers.errors import shown
from annotation.importers.records import (
    CandidateRecord,
    LabelRecord,
    TargetRecord,
    Where,
    candidate_text,
    check_offset,
)
from annotation.models import LabelValue, normalize_candidate

NAME = "prolex"
COLUMNS = ("target word", "Sentence", "acc_subs", "unacc_subs", "prof_acc_subs", "prof_unacc_subs")
LEVEL_COLUMNS = ("t_words_cefr", "prof_acc_cefr", "prof_unacc_cefr")
LIST_COLUMNS = COLUMNS[2:]
# The levels of the proficiency lists, column by column.
LEVELS_OF = {"prof_acc_cefr": "prof_acc_subs", "prof_unacc_cefr": "prof_unacc_subs"}
MARK = "**"
# The step an imported ProLex label belongs to: the scheme's one step (schemes.prolex.JUDGE_STEP).
IMPORTED_STEP = 1
# What an entry of a list says of its substitute: 1 for acc_subs, -1 for unacc_subs (the
# proficiency lists only sort the acceptable ones by level).
LABELS = {
    "acc_subs": LabelRecord(value=LabelValue.ACCEPT, raw_value="1", step=IMPORTED_STEP),
    "unacc_subs": LabelRecord(value=LabelValue.REJECT, raw_value="-1", step=IMPORTED_STEP),
}


@dataclass
class ProlexRow:
    """One row of a ProLex file; a level column absent from the file is None."""

    target: str
    sentence: str
    acc_subs: list[str]
    unacc_subs: list[str]
    prof_acc_subs: list[str]
    prof_unacc_subs: list[str]
    t_words_cefr: int | str | None = None
    prof_acc_cefr: list[int | str] | None = None
    prof_unacc_cefr: list[int | str] | None = None

    def cells(self, columns: Sequence[str]) -> list[str]:
        """The row's cells under ``columns``, lists written as Python writes them."""
        # Read from the row's own fields: ``to_json`` copies every list deep, which the text does not need.
        values: dict[str, Any] = {"target word": self.target, "Sentence": self.sentence, **self.__dict__}
        return [value if isinstance(value, str) else str(value) for value in (values[column] for column in columns)]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProlexRow:
        return cls(**data)

    @property
    def unmarked(self) -> str:
        return self.sentence.replace(MARK, "")


def _header(row: list[str], where: Where) -> list[str]:
    columns = [cell.strip() for cell in row]
    repeated = sorted({column for column in columns if columns.count(column) > 1})
    if repeated:
        raise where.error(f"columns appear twice: {', '.join(repeated)}")
    missing = [column for column in COLUMNS if column not in columns]
    if missing:
        raise where.error(f"missing columns: {', '.join(missing)} (a ProLex file has {', '.join(COLUMNS)})")
    unknown = [column for column in columns if column not in COLUMNS + LEVEL_COLUMNS]
    if unknown:
        raise where.error(f"unknown columns: {', '.join(unknown)} (known: {', '.join(COLUMNS + LEVEL_COLUMNS)})")
    return columns


def _literal(cell: str, where: Where, column: str) -> Any:
    try:
        return ast.literal_eval(cell.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        raise where.error(f"not a Python literal: {shown(cell)}", column) from None


def _strings(cell: str, where: Where, column: str) -> list[str]:
    value = _literal(cell, where, column)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise where.error(f"must be a list of strings, like ['clever', 'gifted'], not {shown(cell)}", column)
    return value


def _level(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or value == "None"


def _levels(cell: str, where: Where, column: str, entries: int) -> list[int | str]:
    value = _literal(cell, where, column)
    if not isinstance(value, list) or not all(_level(item) for item in value):
        raise where.error(f"must be a list of levels (integers, or 'None' for a phrase), not {shown(cell)}", column)
    if len(value) != entries:
        raise where.error(f"has {len(value)} levels for the {entries} entries of {LEVELS_OF[column]}", column)
    return value


def _row(cells: dict[str, str], where: Where) -> ProlexRow:
    target, sentence = cells["target word"], cells["Sentence"]
    if not target.strip():
        raise where.error("must not be empty", "target word")
    where.check_length(target, "target word", "IMPORT_MAX_WORD_LENGTH")
    where.check_length(sentence, "Sentence", "IMPORT_MAX_TEXT_LENGTH")
    row = ProlexRow(
        target=target,
        sentence=sentence,
        acc_subs=_strings(cells["acc_subs"], where, "acc_subs"),
        unacc_subs=_strings(cells["unacc_subs"], where, "unacc_subs"),
        prof_acc_subs=_strings(cells["prof_acc_subs"], where, "prof_acc_subs"),
        prof_unacc_subs=_strings(cells["prof_unacc_subs"], where, "prof_unacc_subs"),
    )
    if "t_words_cefr" in cells:
        level = cells["t_words_cefr"].strip()
        if not (level.lstrip("-").isdigit() and level.isascii()) and level != "None":
            raise where.error(f"must be an integer level, or None for a phrase, not {shown(level)}", "t_words_cefr")
        row.t_words_cefr = level if level == "None" else int(level)
    for column, entries_column in LEVELS_OF.items():
        if column in cells:
            setattr(row, column, _levels(cells[column], where, column, len(getattr(row, entries_column))))
    return row


def _record(row: ProlexRow, where: Where) -> TargetRecord:
    marked = f"{MARK}{row.target}{MARK}"
    start = row.sentence.find(marked)
    if start < 0:
        raise where.error(f"does not mark the target word as {shown(marked)}", "Sentence")
    text = row.unmarked
    if not text.strip():
        raise where.error("must not be empty", "Sentence")
    offset = check_offset(text, row.target, len(row.sentence[:start].replace(MARK, "")), where, "Sentence")
    candidates: dict[str, CandidateRecord] = {}
    for column in LIST_COLUMNS:
        label = LABELS.get(column)
        for entry in getattr(row, column):
            # An empty entry stays in the row as written; there is no candidate to make of it.
            if not normalize_candidate(entry):
                continue
            normalized = candidate_text(entry, where, column)
            candidate = candidates.setdefault(
                normalized,
                CandidateRecord(text=entry.strip(), normalized=normalized, sources=[], labels=[], where=where),
            )
            if label is not None:
                candidate.labels.append(label)
    return TargetRecord(
        where=where,
        context_text=text,
        word=row.target,
        offset=offset,
        candidates=list(candidates.values()),
        extra={NAME: row.to_json()},
    )


def parse_prolex(stream: io.BufferedIOBase, *, file: str) -> tuple[list[str], Iterator[TargetRecord]]:
    """The file's columns (read first) and its records; rows are read one at a time."""
    rows = csv_rows(stream, file=file)
    first = next(rows, None)
    if first is None:
        raise Where(file, 1).error("the file is empty")
    where, header = first
    refuse_nul(header, None, where)
    columns = _header(header, where)
    return columns, _records(rows, columns)


def _records(rows: Iterator[tuple[Where, list[str]]], columns: list[str]) -> Iterator[TargetRecord]:
    seen: dict[tuple[str, str], int] = {}
    for where, row in rows:
        refuse_nul(row, columns, where)
        line = where.line
        if len(row) != len(columns):
            raise where.error(f"has {len(row)} cells for the {len(columns)} columns of the header")
        parsed = _row(dict(zip(columns, row, strict=True)), where)
        key = (parsed.target, parsed.unmarked)
        if key in seen:
            raise where.error(f"repeats the target and sentence of line {seen[key]}", "Sentence")
        seen[key] = line or 0
        yield _record(parsed, where)


def _parsed(stream: io.BufferedIOBase, file: str) -> ParsedFile:
    columns, records = parse_prolex(stream, file=file)
    return ParsedFile(records=records, facts={"columns": columns})


def _sniff(head: bytes) -> bool:
    """A CSV whose header row names ProLex's first columns (our CSV's are ``context``, ``target``, ...)."""
    lines = head.decode("utf-8", errors="replace").splitlines()
    try:
        header = next(csv.reader(lines[:1]), [])
    except csv.Error:  # not a CSV header: the import names what is wrong once a format reads it
        return False
    return set(COLUMNS[:2]) <= {cell.strip() for cell in header}


register_import_format(
    ImportFormat(NAME, "ProLex CSV (target word, Sentence, acc_subs, ...)", _parsed, scheme=NAME, sniff=_sniff)
)
