"""``benchmark_import``: the one import operation behind the command, the API and the upload form."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import models, transaction

from annotation.access import benchmark_owned_by
from annotation.activity import activity_record
from annotation.importers.errors import ImportFailed
from annotation.importers.formats import ImportFormat, import_format, import_format_names
from annotation.importers.prefetch import records_ahead
from annotation.importers.reading import Source, open_binary, sniff_format, source_name
from annotation.importers.records import unstorable_text
from annotation.importers.report import ImportReport
from annotation.importers.unchanged import file_result, held_rows, source_sha256, unchanged_report
from annotation.importers.writer import BenchmarkWriter
from annotation.models import ActivityKind, Benchmark, Candidate, Context, Import, Label, Target
from crowdlex.dialect import dialect
from crowdlex.followup import benchmark_refresh_queue

# progress(targets_done, targets_total or None when the file is streamed)
Progress = Callable[[int, int | None], None]
MAX_ORIGIN_LENGTH = 200
ANALYZE_AFTER_ROWS = 10_000


def benchmark_import(
    *,
    path_or_file: Source,
    benchmark_name: str,
    fmt: str = "auto",
    created_by: User | None = None,
    progress: Progress | None = None,
    origin: str | None = None,
    new_label_set: bool = False,
) -> ImportReport:
    """Import contexts, targets, candidates and labels from a file into a benchmark (created if needed).

    ``path_or_file`` is a path or a binary file object, gzipped or not. ``fmt`` is ``auto`` (told
    from the content: ``jsonl``, ``csv`` or ``swords``) or the name of a registered format
    (``annotation.importers.formats``; schemes add theirs, such as ``prolex`` and ``sws``). A
    format of one scheme creates a benchmark of that scheme and refuses a benchmark of another.
    Imported labels are keyed by ``origin`` (default: the file name) and their position, so keep
    the name to re-import a file.

    No label is counted twice: labels for candidates that already hold labels imported under
    another origin are refused, naming that origin and how many candidates overlap, unless
    ``new_label_set`` declares them a set of their own (a re-annotation); the report then names
    the origins they sit beside. The rows the file names are recorded as the origin's import, so
    :func:`import_delete` can remove it.

    A file whose bytes equal the last file imported under the origin into this benchmark is not
    read again: its SHA-256 and what that import left answer the re-import in a few statements,
    writing nothing (``annotation.importers.unchanged``; docs/design.md §2).

    All or nothing: the import is one transaction and any bad input raises :class:`ImportFailed`
    naming file, line (or SWORDS id) and field, with nothing written. Idempotent: importing the same
    file again changes nothing (contexts by normalised-text digest, targets by their unique key,
    candidates by normalised text, labels by candidate, origin and position). Concurrent imports
    into one benchmark queue on its row lock (``select_for_update``).
    """
    file = source_name(path_or_file)
    origin = (origin or file).strip()[:MAX_ORIGIN_LENGTH] or file
    problem = unstorable_text(origin)
    if problem:
        raise ImportFailed(problem, file=file, field="origin")
    if fmt != "auto" and import_format(fmt) is None:
        known = ", ".join(import_format_names())
        raise ImportFailed(f"unknown format {fmt!r} (use auto, {known})", file=file, field="format")
    try:
        validate_slug(benchmark_name)
    except ValidationError as exc:
        raise ImportFailed(
            f"benchmark name {benchmark_name!r} must be letters, digits, hyphens or underscores",
            file=file,
            field="benchmark",
        ) from exc

    started = time.perf_counter()
    digest = source_sha256(path_or_file)
    with open_binary(path_or_file, file=file) as stream:
        chosen = import_format(sniff_format(stream, file=file) if fmt == "auto" else fmt)
        assert chosen is not None
        report = ImportReport(benchmark=benchmark_name, origin=origin, format=chosen.name, new_label_set=new_label_set)
        if digest is not None and _unchanged(digest, chosen, report, file=file, created_by=created_by):
            if progress is not None:
                progress(0, 0)
            report.seconds = time.perf_counter() - started
            return report
        parsed = chosen.parse(stream, file)

        with transaction.atomic():
            benchmark, report.benchmark_created = Benchmark.objects.get_or_create(
                name=benchmark_name,
                defaults={"created_by": created_by, **({"scheme": chosen.scheme} if chosen.scheme else {})},
            )
            if report.benchmark_created:
                benchmark_owned_by(benchmark=benchmark, user=created_by)
            benchmark = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
            _check_scheme(benchmark, chosen, file)
            import_record, _ = Import.objects.get_or_create(
                benchmark=benchmark, origin=origin, defaults={"created_by": created_by}
            )
            writer = BenchmarkWriter(
                benchmark=benchmark,
                import_record=import_record,
                report=report,
                on_flush=(lambda done: progress(done, parsed.total)) if progress is not None else None,
            )
            writer.add_all(records_ahead(parsed.records))
            if report.label_overlaps:
                if not new_label_set:
                    raise ImportFailed(_counted_twice(report), file=file, field="labels")
                Import.objects.filter(pk=import_record.pk).update(new_label_set=True)
            if parsed.finish is not None:
                parsed.finish(report)
            if parsed.facts is not None:
                _keep_file_facts(benchmark, chosen.name, parsed.facts, report)
            Import.objects.filter(pk=import_record.pk).update(
                file_sha256=digest or "",
                file_result=file_result(
                    report,
                    candidate_repeats=writer.candidate_repeats,
                    facts=parsed.facts,
                    rows=held_rows(import_record),
                ),
            )
            if report.candidates.created >= ANALYZE_AFTER_ROWS:
                _plan_candidate_keys()
            if _rows_created(report) >= ANALYZE_AFTER_ROWS:
                transaction.on_commit(_refresh_planner_statistics, robust=True)
            if report.labels.created:
                # Imported labels may settle a step: the pipeline advances what they complete.
                benchmark_refresh_queue([benchmark.pk])
            activity_record(
                benchmark=benchmark,
                kind=ActivityKind.IMPORTED,
                summary=f"imported {origin} ({chosen.name}): {report.contexts.created} contexts, "
                f"{report.targets.created} targets, {report.candidates.created} candidates and "
                f"{report.labels.created} labels created",
                by=created_by,
                result=_activity_result(report),
            )
    report.seconds = time.perf_counter() - started
    return report


def _unchanged(digest: str, chosen: ImportFormat, report: ImportReport, *, file: str, created_by: User | None) -> bool:
    """Answer a re-import of the same bytes under the same origin from what its last import left;
    False when the full import must run. Under the benchmark's row lock, as imports are."""
    found = Import.objects.filter(benchmark__name=report.benchmark, origin=report.origin, file_sha256=digest).first()
    if found is None:
        return False
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update(no_key=True).get(pk=found.benchmark_id)
        _check_scheme(benchmark, chosen, file)
        # Read again under the lock: an import that finished meanwhile may have replaced the file.
        import_record = Import.objects.filter(pk=found.pk, file_sha256=digest).first()
        if import_record is None or not unchanged_report(import_record, report):
            return False
        facts = import_record.file_result.get("facts")
        if facts is not None:
            _keep_file_facts(benchmark, chosen.name, facts, report)
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.IMPORTED,
            summary=f"imported {report.origin} ({chosen.name}) again: the same file as its last import, nothing new",
            by=created_by,
            result=_activity_result(report),
        )
    return True


def _check_scheme(benchmark: Benchmark, chosen: ImportFormat, file: str) -> None:
    if chosen.scheme and benchmark.scheme != chosen.scheme:
        raise ImportFailed(
            f"the {chosen.name} format imports into benchmarks of the {chosen.scheme} scheme; "
            f"benchmark {benchmark.name!r} uses {benchmark.scheme}",
            file=file,
            field="format",
        )


def _counted_twice(report: ImportReport) -> str:
    return (
        f"the same candidates already hold labels imported under another origin: {report.overlapping_origins()}. "
        f"Importing these labels as {report.origin!r} would count them twice; remove the earlier import "
        "first, or import them as a new label set if they are a new annotation of the same candidates"
    )


def _rows_created(report: ImportReport) -> int:
    return sum(counts.created for counts in (report.contexts, report.targets, report.candidates, report.labels))


# The columns an import's lookups filter on (writer.py), per table.
_LOOKED_UP_BY: dict[type[models.Model], tuple[str, ...]] = {
    Context: ("benchmark", "digest"),
    Target: ("context",),
    Candidate: ("target",),
    Label: ("candidate", "origin", "assignment"),
}


def _refresh_planner_statistics() -> None:
    """ANALYZE after a bulk load, as PostgreSQL advises: until autovacuum gets round to it, the
    planner believes the tables are as small as before and scans the labels whole for the next
    import's lookups (measured: 1 s per chunk on the SWORDS dev set instead of milliseconds).

    Only the columns those lookups filter on: the row counts are renewed all the same, at a third
    of the cost of every column (0.16 s instead of 0.45 s of PostgreSQL's time on the SWORDS test
    split), and an ANALYZE of some columns leaves the tables' change counters as they were, so
    autovacuum still analyses every column soon after."""
    dialect().planner_statistics_refresh(_LOOKED_UP_BY)


def _plan_candidate_keys() -> None:
    """ANALYZE the candidates before the commit checks the keys that name them (labels, tallies,
    the import's records; docs/design.md §7, "Candidates by benchmark"). The check is one probe of
    the candidates' primary key, but planned on statistics that count none of the rows this import
    wrote (an index built on an emptied table; a table emptied and not yet vacuumed) the planner
    may take the (benchmark, id) index instead and walk it whole for every key: 95 s instead of 9 s
    for the SWORDS test split. The statistics counted in this transaction include its own rows. It
    holds the table's statistics lock until the commit: another large import's ANALYZE waits for it.
    """
    dialect().planner_statistics_refresh({Candidate: ("benchmark",)})


def _keep_file_facts(benchmark: Benchmark, key: str, facts: dict[str, Any], report: ImportReport) -> None:
    """Store file-level facts (e.g. SWORDS ``substitutes_lemmatized``) that an export needs back."""
    previous = benchmark.extra.get(key)
    if previous == facts:
        return
    if previous is not None:
        report.warnings.append(f"{key} file facts {facts} replace {previous} from an earlier import")
    benchmark.extra = {**benchmark.extra, key: facts}
    benchmark.save(update_fields=["extra"])
    if not report.benchmark_created:
        report.updated += 1


def _activity_result(report: ImportReport) -> dict[str, object]:
    """The import's figures as the activity log keeps them."""
    return {
        "origin": report.origin,
        "format": report.format,
        **{name: getattr(report, name).created for name in ("contexts", "targets", "candidates", "labels")},
        "merged": report.candidates.merged,
        "skipped": report.candidates.skipped + report.labels.skipped,
    }
