"""Celery tasks of the analysis app: thin wrappers that look rows up and call one service.

Both are idempotent and acknowledged late (CELERY_TASK_ACKS_LATE): a task whose worker dies runs
again on another, and one that meets a database going away (a restart) is retried shortly.
"""

from __future__ import annotations

from celery import shared_task

from crowdlex.celery import DATABASE_RETRY


@shared_task(name="analysis.tasks.export_run", ignore_result=True, acks_late=True, **DATABASE_RETRY)
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


@shared_task(name="analysis.tasks.background_figures_refresh", ignore_result=True, acks_late=True, **DATABASE_RETRY)
def background_figures_refresh(benchmark_id: int, name: str) -> None:
    """Bring a benchmark's figures ``name`` up to date with its change key (``analysis.services.
    background``); figures already current, or a benchmark gone, are left alone."""
    from analysis.background import background_figures_refresh as refresh

    refresh(benchmark_id=benchmark_id, name=name)
