"""Celery tasks of the analysis app: thin wrappers that look rows up and call one service.

Both are idempotent and acknowledged late (CELERY_TASK_ACKS_LATE): a task whose worker dies runs
again on another, and one that meets a database going away (a restart) is retried shortly.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.models import Benchmark

# A restarted database fails the queries in flight; the retry, seconds later, finds it back.
DATABASE_GONE = (OperationalError, InterfaceError)
RETRY = {"autoretry_for": DATABASE_GONE, "retry_backoff": 2, "max_retries": 5}


@shared_task(name="analysis.tasks.benchmark_refresh", acks_late=True, **RETRY)
def benchmark_refresh(benchmark_id: int, full: bool = False) -> dict[str, int] | None:
    """Spam recompute, flags, filtering and advancement of one benchmark (queued after each submit).

    Idempotent and safe to run twice at once (the service locks the benchmark row), so a
    redelivered or duplicated message does no harm. ``full`` also recomputes the bot signals
    now (see ``signals_due``). Returns a small summary, or None if the benchmark is gone.
    """
    from analysis.pipeline_services import benchmark_refresh as refresh

    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return None
    result = refresh(benchmark=benchmark, full=full)
    return {
        "filtered": result.filtered,
        "unfiltered": result.unfiltered,
        "flags_raised": result.flags_raised,
        "advanced": len(result.advanced_targets),
        "done": len(result.done_targets),
    }


@shared_task(name="analysis.tasks.export_run", ignore_result=True, acks_late=True, **RETRY)
def export_run(job_id: int) -> None:
    """Write an export job's file; a job done, gone, or running with a live worker is left alone,
    and one whose worker died is taken over (``export_job_run``)."""
    from analysis.services import export_job_run

    export_job_run(job_id=job_id)


@shared_task(name="analysis.tasks.export_jobs_fail_stuck", ignore_result=True)
def export_jobs_fail_stuck() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): mark failed the export jobs whose worker stopped for good."""
    from analysis.services import export_jobs_fail_stuck as fail_stuck

    return fail_stuck()
