"""Exports of a benchmark: streamed to a response or a file (``analysis.exports`` writes the
formats), and export jobs that a Celery task fills when an export is too large for a request."""

from __future__ import annotations

import gzip
import io
import logging
import os
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from analysis import exports
from analysis.figures import scheme_figures, stamped
from analysis.models import ExportJob, ExportStatus
from analysis.pseudonyms import WorkerNames
from analysis.services.dataset import benchmark_dataset_zip
from analysis.services.reports import (
    BenchmarkData,
    benchmark_agreement,
    benchmark_data,
    benchmark_filter_audit,
    benchmark_statistics,
)
from analysis.services.sources import benchmark_source_yield
from annotation.activity import activity_record
from annotation.changes import benchmark_changed
from annotation.models import ActivityKind, Benchmark
from annotation.selectors import benchmark_simulated
from crowdlex.celery import app
from review.selectors import interaction_summary

logger = logging.getLogger(__name__)

EXPORT_DIRECTORY = "exports"
# The task that writes a job's file (analysis.tasks), by its registered name.
EXPORT_RUN_TASK = "analysis.tasks.export_run"


def stats_document(benchmark: Benchmark, workers: WorkerNames, split: str | None) -> dict[str, Any]:
    """The ``stats`` export: the scheme's document, and for every scheme the share of assignments with each
    telemetry signal (docs/quality.md), ``simulated``: whether a simulated crowd gave labels, and for a
    scheme that judges candidates ``by_candidate_source`` (``analysis.services.sources``)."""
    figures = scheme_figures(benchmark)
    document = figures.document or stamped(figures.statistics)
    by_source = benchmark_source_yield(benchmark=benchmark, split=split)
    return {
        **document(benchmark, workers, split),
        "interaction": interaction_summary(benchmark=benchmark),
        "simulated": benchmark_simulated(benchmark),
        # Which candidate source pays off (docs/design.md §14), for schemes that judge candidates.
        **({"by_candidate_source": by_source} if by_source is not None else {}),
    }


def benchmark_stats_document(
    *,
    benchmark: Benchmark,
    workers: WorkerNames,
    data: BenchmarkData | None = None,
    split: str | None = None,
) -> dict[str, Any]:
    """The ``stats`` export: statistics, the filter audit and agreement figures (pairs summarised),
    each worker named by ``workers`` (their database id left out: it is the same in every benchmark)."""
    data = data or benchmark_data(benchmark=benchmark, split=split)
    agreement = benchmark_agreement(benchmark=benchmark, data=data, include_pairs=False)
    for row in agreement["worker_agreement"]:
        del row["worker_id"]
        row["worker"] = workers(row["worker"])
    return {
        "benchmark": benchmark.name,
        "split": split,
        "generated_at": timezone.now().isoformat(),
        "statistics": benchmark_statistics(benchmark=benchmark, data=data),
        "filter_audit": benchmark_filter_audit(benchmark=benchmark, data=data),
        "agreement": agreement,
    }


def benchmark_export(
    *,
    benchmark: Benchmark,
    format: str,
    out: io.TextIOBase | Any,
    progress: Callable[[int, int], None] | None = None,
    raw_workers: bool = False,
    split: str | None = None,
) -> int:
    """Write one export format to a text stream, in bounded memory; returns characters written.

    Workers are pseudonymised unless ``raw_workers``, which is logged (internal use only).
    """
    if raw_workers:
        logger.warning("benchmark %s exported as %s with raw worker ids", benchmark.name, format)
    written = 0
    pieces = exports.export_pieces(
        benchmark=benchmark,
        format=format,
        progress=progress,
        statistics=lambda workers: stats_document(benchmark, workers, split),
        raw_workers=raw_workers,
        split=split,
    )
    for chunk in exports.batched_text(pieces):
        out.write(chunk)
        written += len(chunk)
    return written


def benchmark_export_to_path(
    *,
    benchmark: Benchmark,
    format: str,
    path: str | os.PathLike[str],
    progress: Callable[[int, int], None] | None = None,
    raw_workers: bool = False,
    split: str | None = None,
    license: str = "unknown",
) -> Path:
    """Write an export to a file, gzip-compressed when the name ends in ``.gz``; the dataset format
    as a zip of its folder, with ``license`` in its card (its workers are always pseudonymised).

    The file appears complete or not at all: it is written under a temporary name and renamed.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)

    def write(text: io.TextIOBase | Any) -> None:
        benchmark_export(
            benchmark=benchmark, format=format, out=text, progress=progress, raw_workers=raw_workers, split=split
        )

    # A name of its own per writer: a job taken over from a worker thought dead may still be written by it.
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex}.partial")
    if format == exports.DATASET:
        return benchmark_dataset_zip(benchmark=benchmark, path=target, license=license)
    try:
        if target.suffix == ".gz":
            with (
                gzip.GzipFile(partial, mode="wb", compresslevel=6, mtime=0) as raw,
                io.TextIOWrapper(raw, encoding="utf-8", newline="") as text,
            ):
                write(text)
        else:
            with partial.open("w", encoding="utf-8", newline="") as plain:
                write(plain)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def export_filename(*, benchmark: Benchmark, format: str, compress: bool, raw_workers: bool = False) -> str:
    """The file name of an export; one with raw worker ids says so."""
    chosen = exports.export_format(format)
    if chosen is None:
        raise ValueError(exports.unknown_format(format))
    marked = "-raw-worker-ids" if raw_workers else ""
    return f"{benchmark.name}-{format}{marked}{chosen.suffix}" + (".gz" if compress else "")


def export_job_create(
    *,
    benchmark: Benchmark,
    format: str,
    created_by: User | AnonymousUser | None = None,
    compress: bool = True,
    raw_workers: bool = False,
    license: str = "",
) -> ExportJob:
    """Record an export request and queue ``analysis.tasks.export_run`` once the row is committed.

    ``raw_workers`` exports worker ids instead of pseudonyms (internal use: marked in the file name).
    """
    problem = exports.unknown_format(format, benchmark)
    if problem is not None:
        raise ValueError(problem)
    user = created_by if isinstance(created_by, User) else None
    if format == exports.DATASET:
        # A zip is compressed already, and a published dataset never names workers.
        compress, raw_workers = False, False
    job = ExportJob.objects.create(
        benchmark=benchmark, format=format, created_by=user, raw_workers=raw_workers, license=license
    )
    name = export_filename(benchmark=benchmark, format=format, compress=compress, raw_workers=raw_workers)
    job.path = f"{EXPORT_DIRECTORY}/{job.pk}-{name}"
    job.save(update_fields=["path"])
    activity_record(
        benchmark=benchmark,
        kind=ActivityKind.EXPORTED,
        summary=f"export {job.pk} ({format}{', raw worker ids' if raw_workers else ''}) queued",
        by=user,
        result={"export": job.pk, "format": format, "raw_workers": raw_workers, "compress": compress},
        # An export changes no figure (as a download: ``export_download_record``).
        target_ids=(),
    )
    _queue_export_run(job.pk)
    return job


def export_download_record(*, benchmark: Benchmark, format: str, by: User | AnonymousUser | None = None) -> None:
    """Log a direct download (streamed from the request, no job) in the benchmark's activity log,
    naming no target: the key moves for the log's page, no figure is computed again."""
    activity_record(
        benchmark=benchmark,
        kind=ActivityKind.EXPORTED,
        summary=f"{format} downloaded directly",
        by=by if isinstance(by, User) else None,
        result={"format": format, "direct": True},
        # A download changes no figure: the figures kept per target and the exports' fits stay
        # (analysis.exports.fits), and no warm of every figure is queued.
        target_ids=(),
    )


def _queue_export_run(job_id: int) -> None:
    """Queue ``analysis.tasks.export_run`` for the job once the current transaction commits. Named
    by its registered name: the task imports this module, so this one does not import it."""
    transaction.on_commit(lambda: app.tasks[EXPORT_RUN_TASK].delay(job_id))


def export_job_restart(*, job: ExportJob) -> bool:
    """Queue a failed export job again, to be written afresh; False (and nothing queued) unless it failed.

    A conditional UPDATE (failed -> pending, row count checked): a double click queues it once.
    """
    restarted = _job_moved(
        ExportJob.objects.filter(pk=job.pk, status=ExportStatus.FAILED),
        status=ExportStatus.PENDING,
        progress=0.0,
        error="",
        finished_at=None,
        heartbeat_at=None,
    )
    if restarted:
        _queue_export_run(job.pk)
    job.refresh_from_db()
    return bool(restarted)


def export_jobs_fail_stuck() -> int:
    """Mark failed the running export jobs silent for longer than EXPORT_JOB_TIMEOUT_SECONDS; returns how many.

    Their worker stopped and no redelivered task took them over (which the broker does after
    CELERY_VISIBILITY_TIMEOUT, well before this): a researcher restarts them. Periodic (Celery beat).
    """
    now = timezone.now()
    timeout = settings.EXPORT_JOB_TIMEOUT_SECONDS
    return _job_moved(
        ExportJob.objects.filter(status=ExportStatus.RUNNING, heartbeat_at__lt=now - timedelta(seconds=timeout)),
        status=ExportStatus.FAILED,
        error=f"Stopped: no progress for {timeout // 60} minutes (its worker ended). Restart it.",
        finished_at=now,
    )


def _job_moved(jobs: QuerySet[ExportJob], **changes: Any) -> int:
    """``jobs.update(**changes)`` with the change key of each benchmark whose job changed state moved
    in the same transaction, so the exports page kept for a reader shows it (docs/design.md §7,
    "Kept pages"; a job's progress between states moves none). No target's figures move."""
    with transaction.atomic():
        benchmarks = sorted(set(jobs.values_list("benchmark_id", flat=True)))
        moved = jobs.update(**changes)
        if moved:
            for benchmark_id in benchmarks:
                benchmark_changed(benchmark_id=benchmark_id, target_ids=())
    return moved


def export_job_file(job: ExportJob) -> Path:
    """The job's file under MEDIA_ROOT; refuses a stored path that would lead outside it."""
    root = Path(settings.MEDIA_ROOT).resolve()
    path = (root / job.path).resolve()
    if not job.path or root not in path.parents:
        raise ValueError(f"export {job.pk} has no file under MEDIA_ROOT")
    return path


def export_job_run(*, job_id: int) -> ExportJob | None:
    """Run a pending export job, or take over one whose worker died; idempotent.

    The job is claimed with a conditional UPDATE, row count checked: pending -> running, or a
    running job whose heartbeat is older than EXPORT_JOB_HEARTBEAT_SECONDS (its worker was killed
    mid-task and the broker handed the unacknowledged task to another). So a redelivered task, or
    two workers, never write a job whose writer is alive. Progress is stored every few thousand
    rows, with the heartbeat, outside any transaction, so pollers see it. Returns the job as it is
    now (running if another worker holds it), or None if it is gone.
    """
    now = timezone.now()
    silent = now - timedelta(seconds=settings.EXPORT_JOB_HEARTBEAT_SECONDS)
    claimed = _job_moved(
        ExportJob.objects.filter(pk=job_id).filter(
            Q(status=ExportStatus.PENDING) | Q(status=ExportStatus.RUNNING, heartbeat_at__lt=silent)
        ),
        status=ExportStatus.RUNNING,
        progress=0.0,
        heartbeat_at=now,
    )
    job = ExportJob.objects.select_related("benchmark").filter(pk=job_id).first()
    if job is None or not claimed:
        return job

    def progress(done: int, total: int) -> None:
        share = min(done / total, 0.99) if total else 0.0
        ExportJob.objects.filter(pk=job_id, status=ExportStatus.RUNNING).update(
            progress=share, heartbeat_at=timezone.now()
        )

    try:
        benchmark_export_to_path(
            benchmark=job.benchmark,
            format=job.format,
            path=export_job_file(job),
            progress=progress,
            raw_workers=job.raw_workers,
            license=job.license or "unknown",
        )
    except Exception as error:
        logger.exception("export %s failed", job_id)
        _job_moved(
            ExportJob.objects.filter(pk=job_id),
            status=ExportStatus.FAILED,
            error=f"{type(error).__name__}: {error}",
            finished_at=timezone.now(),
        )
    else:
        _job_moved(
            ExportJob.objects.filter(pk=job_id), status=ExportStatus.DONE, progress=1.0, finished_at=timezone.now()
        )
    job.refresh_from_db()
    return job
