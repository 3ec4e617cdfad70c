"""Our CSV format: one row per candidate, rows of one target together (docs/formats.md).

Rows are read one at a time; consecutive rows with the same context, target, offset and part of
speech make one target. Quoted cells may span lines; messages name the line the row starts on.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from annotation.importers.reading import numbered_lines
from annotation.importers.records import (
    MAX_CANDIDATE_LENGTH,
    MAX_WORD_LENGTH,
    CandidateRecord,
    TargetRecord,
    Where,
    check_offset,
    own_label,
    own_pos,
)
from annotation.models import normalize_candidate

REQUIRED_COLUMNS = ("context", "target", "offset", "pos", "candidate")
OPTIONAL_COLUMNS = ("lemma", "sources", "labels")


def _split(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(";") if part.strip()]


def parse_csv(stream: io.BufferedIOBase, *, file: str) -> Iterator[TargetRecord]:
    lines = (text for _, text in numbered_lines(stream, file=file))
    reader = csv.reader(lines)
    header: list[str] | None = None
    current: TargetRecord | None = None
    current_key: tuple[str, str, str, str] | None = None
    row_start = 1
    while True:
        row_start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise Where(file, row_start).error(f"malformed CSV: {exc}") from exc
        if not row or all(not cell.strip() for cell in row):
            continue
        where = Where(file, row_start)
        if header is None:
            header = [name.strip().lower() for name in row]
            for column in REQUIRED_COLUMNS:
                if column not in header:
                    raise where.error("missing field (no such column in the header)", column)
            continue
        if len(row) != len(header):
            raise where.error(f"malformed CSV: expected {len(header)} fields as in the header, found {len(row)}")
        cells = dict(zip(header, row, strict=True))
        key = (cells["context"], cells["target"], cells["offset"], cells["pos"])
        if key != current_key:
            if current is not None:
                yield current
            current, current_key = _target(cells, where), key
        assert current is not None
        current.candidates.append(_candidate(cells, where))
    if current is not None:
        yield current
    if header is None:
        raise Where(file, 1).error("missing field (the file has no header row)", "context")


def _target(cells: dict[str, str], where: Where) -> TargetRecord:
    context = cells["context"]
    if not context.strip():
        raise where.error("must not be empty", "context")
    word = cells["target"]
    if not word.strip():
        raise where.error("must not be empty", "target")
    if len(word) > MAX_WORD_LENGTH:
        raise where.error(f"longer than {MAX_WORD_LENGTH} characters", "target")
    raw_offset = cells["offset"].strip()
    if not raw_offset.isdigit():
        raise where.error(f"offset must be a non-negative integer, not {raw_offset!r}", "offset")
    offset = check_offset(context, word, int(raw_offset), where)
    lemma = cells.get("lemma", "").strip()
    if len(lemma) > MAX_WORD_LENGTH:
        raise where.error(f"longer than {MAX_WORD_LENGTH} characters", "lemma")
    return TargetRecord(
        where=where,
        context_text=context,
        word=word,
        offset=offset,
        pos=own_pos(cells["pos"], where),
        lemma=lemma,
    )


def _candidate(cells: dict[str, str], where: Where) -> CandidateRecord:
    text = cells["candidate"].strip()
    normalized = normalize_candidate(text)
    if not normalized:
        raise where.error("empty candidate", "candidate")
    if len(text) > MAX_CANDIDATE_LENGTH:
        raise where.error(f"candidate longer than {MAX_CANDIDATE_LENGTH} characters", "candidate")
    return CandidateRecord(
        text=text,
        normalized=normalized,
        sources=sorted(set(_split(cells.get("sources", "")))),
        labels=[own_label(value, where, "labels") for value in _split(cells.get("labels", ""))],
        where=where,
    )
