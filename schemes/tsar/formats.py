"""The TSAR-2022 TSV files as an import format (docs/formats.md, "TSAR-2022 TSV").

``sentence<TAB>complex word`` (the shared task's ``*_none.tsv``), optionally followed by every
annotator's suggestion (``*_gold.tsv``), UTF-8, one instance a line: read by ``tsv.read_gold``,
which refuses a bad line with its file, line and field. Each line becomes a context (the sentence)
and a target (the complex word at its first occurrence in the sentence; a word the sentence does not
hold is an error naming the line and the field ``complex word``), whose lemma is the word and whose
part of speech is empty: no language's resource is read. The line is kept as written
(``Target.extra["tsar"]["row"]``), so the ``tsar`` export writes an imported file back as released:
the same lines in the same order, suggestions in the file's own order.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from annotation.importers import ImportFormat, ParsedFile, register_import_format
from annotation.importers.errors import ImportFailed, shown
from annotation.importers.reading import READ_ERRORS
from annotation.importers.records import TargetRecord, Where, unstorable_text
from schemes.tsar.metrics import GoldInstance
from schemes.tsar.tsv import numbered_text, read_gold

NAME = "tsar"
#: The key of what an imported line keeps in ``Target.extra``.
ROW = "row"


def released_annotations(row: str) -> tuple[str, ...]:
    """The suggestions of a line as written (fields after the sentence and the word), trimmed,
    empty fields left out: what ``tsv.read_gold`` reads of it."""
    return tuple(field.strip() for field in row.split("\t")[2:] if field.strip())


def _lines(stream: io.BufferedIOBase, file: str) -> Iterator[bytes]:
    try:
        yield from stream
    except READ_ERRORS as exc:
        raise ImportFailed(f"cannot read the file: {exc}", file=file) from exc


def _record(instance: GoldInstance, row: str, number: int, file: str) -> TargetRecord:
    where = Where(file, number)
    for name, text in (("sentence", row), ("complex word", instance.complex_word)):
        problem = unstorable_text(text)
        if problem:
            raise where.error(problem, name)
    where.check_length(instance.sentence, "sentence", "IMPORT_MAX_TEXT_LENGTH")
    where.check_length(instance.complex_word, "complex word", "IMPORT_MAX_WORD_LENGTH")
    offset = instance.sentence.find(instance.complex_word)
    if offset < 0:
        raise where.error(f"the sentence does not hold the complex word {shown(instance.complex_word)}", "complex word")
    return TargetRecord(
        where=where,
        context_text=instance.sentence,
        word=instance.complex_word,
        offset=offset,
        lemma=instance.complex_word,
        extra={NAME: {ROW: row}},
    )


def parse_tsar(stream: io.BufferedIOBase, *, file: str) -> list[TargetRecord]:
    """Every line checked and made a record before anything is stored (an import is all or nothing)."""
    raw = list(_lines(stream, file))
    rows = {number: text for number, text in numbered_text(raw, file=file) if text.strip()}
    instances = read_gold(raw, file=file)
    if not instances:
        raise ImportFailed("the file holds no instance (sentence<TAB>complex word...)", file=file)
    # read_gold keeps the file's order and skips exactly the blank lines, so the two walks align.
    return [_record(instance, rows[number], number, file) for instance, number in zip(instances, rows, strict=True)]


def _parsed(stream: io.BufferedIOBase, file: str) -> ParsedFile:
    records = parse_tsar(stream, file=file)
    return ParsedFile(records=records, total=len(records))


def _sniff(head: bytes) -> bool:
    """A TSAR file's first line holds a tab: our CSV and the other schemes' files never do there."""
    first = head.split(b"\n", 1)[0]
    return b"\t" in first and not first.startswith((b"{", b"["))


register_import_format(
    ImportFormat(
        NAME,
        "TSAR-2022 TSV (sentence, complex word, then each annotator's suggestion)",
        _parsed,
        scheme=NAME,
        sniff=_sniff,
    )
)
