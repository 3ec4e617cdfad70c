"""Celery tasks of the analysis app: thin wrappers that look rows up and call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="analysis.tasks.export_run", ignore_result=True)
def export_run(job_id: int) -> None:
    """Write an export job's file; a job already running, done or gone is left alone."""
    from analysis.services import export_job_run

    export_job_run(job_id=job_id)
