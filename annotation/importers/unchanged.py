"""A re-import of the very file imported last under an origin: answered from its SHA-256 and what
that import left, without parsing the file or writing a row (docs/design.md §2).

After every import the :class:`Import` keeps the SHA-256 of the file's bytes as given (gzipped or
not) and ``file_result``: the format, what importing the same file again reports (every row it
names skipped, the file's own repeats merged, its id mismatches), its file facts, and how many
rows the import holds (contexts, targets, candidates and its labels). A later import of the same
bytes under the same origin into the same benchmark, read with the same format, checks those row
counts with one statement; if they still hold it reports what a full re-import would, restores
the file facts if another file replaced them, and writes nothing else. Any difference (other
bytes, another format, a row gone) runs the full import, which is always correct.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import asdict
from typing import IO, Any

from django.db import connection

from annotation.importers.reading import Source
from annotation.importers.report import EntityCounts, IdMismatch, ImportReport
from annotation.models import Import, Label

_READ_BYTES = 1024 * 1024
_KINDS = ("contexts", "targets", "candidates", "labels")


def source_sha256(path_or_file: Source) -> str | None:
    """SHA-256 of the bytes of a path or of a seekable binary file (read to its end, then put back
    where it was); None for a file that cannot be read twice, or a path that cannot be opened (the
    import then says why)."""
    digest = hashlib.sha256()
    if isinstance(path_or_file, str | os.PathLike):
        try:
            with open(path_or_file, "rb") as raw:
                while block := raw.read(_READ_BYTES):
                    digest.update(block)
        except OSError:
            return None
        return digest.hexdigest()
    if isinstance(path_or_file, io.TextIOBase) or not _seekable(path_or_file):
        return None
    start = path_or_file.tell()
    while block := path_or_file.read(_READ_BYTES):
        digest.update(block)
    path_or_file.seek(start)
    return digest.hexdigest()


def _seekable(file: IO[bytes]) -> bool:
    try:
        return bool(file.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def held_rows(import_record: Import) -> dict[str, int]:
    """How many contexts, targets and candidates the import holds, and labels of its origin on
    them: one statement."""
    through = {kind: getattr(Import, kind).through._meta.db_table for kind in _KINDS[:3]}
    label = Label._meta.db_table
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT count(*) FROM {quote(through['contexts'])} WHERE import_id = %(id)s),"
            f" (SELECT count(*) FROM {quote(through['targets'])} WHERE import_id = %(id)s),"
            f" (SELECT count(*) FROM {quote(through['candidates'])} WHERE import_id = %(id)s),"
            f" (SELECT count(*) FROM {quote(label)} WHERE origin = %(origin)s AND assignment_id IS NULL"
            f" AND candidate_id IN (SELECT candidate_id FROM {quote(through['candidates'])}"
            f" WHERE import_id = %(id)s))",
            {"id": import_record.pk, "origin": import_record.origin},
        )
        row = cursor.fetchone()
    return dict(zip(_KINDS, row, strict=True))


def file_result(report: ImportReport, *, candidate_repeats: int, facts: Any, rows: dict[str, int]) -> dict[str, Any]:
    """What importing the same file again would report, from the report of this import: every row
    it named is then stored, so what it created or found is skipped; a context spelled otherwise
    than the stored one and a target named twice merge again, as do the candidates the file names
    twice (``candidate_repeats``), while candidates whose sources grew are stored grown."""
    counts = {
        "contexts": {"merged": report.contexts.merged, "skipped": report.contexts.created + report.contexts.skipped},
        "targets": {"merged": report.targets.merged, "skipped": report.targets.created + report.targets.skipped},
        "candidates": {
            "merged": candidate_repeats,
            "skipped": sum(asdict(report.candidates).values()) - candidate_repeats,
        },
        "labels": {"merged": 0, "skipped": report.labels.created + report.labels.skipped},
    }
    return {
        "format": report.format,
        "counts": counts,
        "id_mismatch_count": report.id_mismatch_count,
        "id_mismatches": [asdict(mismatch) for mismatch in report.id_mismatches],
        "facts": facts,
        "rows": rows,
    }


def unchanged_report(import_record: Import, report: ImportReport) -> bool:
    """Fill ``report`` as a full re-import of the file would and say True, when the import holds
    what it did after its last file; False when the full import must run."""
    stored = import_record.file_result
    if stored.get("format") != report.format or held_rows(import_record) != stored.get("rows"):
        return False
    for kind in _KINDS:
        setattr(report, kind, EntityCounts(**stored["counts"][kind]))
    report.id_mismatch_count = stored["id_mismatch_count"]
    report.id_mismatches = [IdMismatch(**mismatch) for mismatch in stored["id_mismatches"]]
    report.unchanged = True
    return True
