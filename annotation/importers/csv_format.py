"""Our CSV format: one row per candidate, rows of one target together (docs/formats.md).

Rows are read one at a time; consecutive rows with the same context, target, offset and part of
speech make one target. Quoted cells may span lines; messages name the line the row starts on.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator

from annotation.importers.errors import shown
from annotation.importers.formats import ImportFormat, ParsedFile, register_import_format
from annotation.importers.reading import numbered_lines
from annotation.importers.records import (
    CandidateRecord,
    TargetRecord,
    Where,
    candidate_text,
    check_offset,
    own_label,
    own_pos,
)

REQUIRED_COLUMNS = ("context", "target", "offset", "pos", "candidate")
OPTIONAL_COLUMNS = ("lemma", "sources", "labels")


def _split(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(";") if part.strip()]


def csv_rows(stream: io.BufferedIOBase, *, file: str) -> Iterator[tuple[Where, list[str]]]:
    """The non-blank rows of a CSV file, each with the line it starts on; a malformed one is refused."""
    reader = csv.reader(text for _, text in numbered_lines(stream, file=file))
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise Where(file, start).error(f"malformed CSV: {exc}") from exc
        if row and any(cell.strip() for cell in row):
            yield Where(file, start), row


def parse_csv(stream: io.BufferedIOBase, *, file: str) -> Iterator[TargetRecord]:
    header: list[str] | None = None
    current: TargetRecord | None = None
    current_key: tuple[str, str, str, str] | None = None
    for where, row in csv_rows(stream, file=file):
        refuse_nul(row, header, where)
        if header is None:
            header = _header(row, where)
            continue
        if len(row) != len(header):
            raise where.error(f"malformed CSV: expected {len(header)} fields as in the header, found {len(row)}")
        cells = dict(zip(header, row, strict=True))
        key = (cells["context"], cells["target"], cells["offset"], cells["pos"])
        if current is not None and key == current_key:
            _same_lemma(current, _lemma(cells, where), where)
        else:
            if current is not None:
                yield current
            current, current_key = _target(cells, where), key
        current.candidates.append(_candidate(cells, where))
    if current is not None:
        yield current
    if header is None:
        raise Where(file, 1).error("missing field (the file has no header row)", "context")


def refuse_nul(row: list[str], header: list[str] | None, where: Where) -> None:
    """PostgreSQL stores no NUL character (and UTF-8 text has no lone surrogates to refuse)."""
    for index, cell in enumerate(row):
        if "\x00" in cell:
            name = header[index] if header and index < len(header) else ""
            problem = "contains a NUL character, which cannot be stored (a UTF-16 file? save it as UTF-8)"
            raise where.error(problem, name or f"column {index + 1}")


def _header(row: list[str], where: Where) -> list[str]:
    header = [name.strip().lower() for name in row]
    repeated = [name for name, count in Counter(header).items() if name and count > 1]
    if repeated:
        raise where.error("the column appears twice in the header (one would be silently ignored)", repeated[0])
    for column in REQUIRED_COLUMNS:
        if column not in header:
            raise where.error("missing field (no such column in the header)", column)
    return header


def _lemma(cells: dict[str, str], where: Where) -> str:
    lemma = cells.get("lemma", "").strip()
    where.check_length(lemma, "lemma", "IMPORT_MAX_WORD_LENGTH")
    return lemma


def _same_lemma(target: TargetRecord, lemma: str, where: Where) -> None:
    """Rows after a target's first may leave the lemma empty, or repeat it; another lemma is an error."""
    if not lemma or lemma == target.lemma:
        return
    if target.lemma:
        raise where.error(
            f"lemma {shown(lemma)} differs from {shown(target.lemma)} on line {target.where.line}, "
            "the first row of this target",
            "lemma",
        )
    target.lemma = lemma


def _target(cells: dict[str, str], where: Where) -> TargetRecord:
    context = cells["context"]
    if not context.strip():
        raise where.error("must not be empty", "context")
    where.check_length(context, "context", "IMPORT_MAX_TEXT_LENGTH")
    word = cells["target"]
    if not word.strip():
        raise where.error("must not be empty", "target")
    where.check_length(word, "target", "IMPORT_MAX_WORD_LENGTH")
    raw_offset = cells["offset"].strip()
    # str.isdigit() also accepts digits such as "¹" that int() refuses.
    if not (raw_offset.isascii() and raw_offset.isdigit()):
        raise where.error(f"offset must be a non-negative integer, not {shown(raw_offset)}", "offset")
    try:
        number = int(raw_offset)
    except ValueError:  # past Python's limit on digits (4,300)
        raise where.error(f"offset of {len(raw_offset)} digits is too long", "offset") from None
    offset = check_offset(context, word, number, where)
    return TargetRecord(
        where=where,
        context_text=context,
        word=word,
        offset=offset,
        pos=own_pos(cells["pos"], where),
        lemma=_lemma(cells, where),
    )


def _candidate(cells: dict[str, str], where: Where) -> CandidateRecord:
    text = cells["candidate"].strip()
    return CandidateRecord(
        text=text,
        normalized=candidate_text(text, where, "candidate"),
        sources=sorted(set(_split(cells.get("sources", "")))),
        labels=[own_label(value, where, "labels") for value in _split(cells.get("labels", ""))],
        where=where,
    )


register_import_format(
    ImportFormat("csv", "CSV (one candidate per row)", lambda stream, file: ParsedFile(parse_csv(stream, file=file)))
)
