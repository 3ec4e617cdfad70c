"""Celery tasks of the analysis: thin, idempotent, by id (STYLE: Where logic lives)."""

from __future__ import annotations

from celery import shared_task

from analysis import services


@shared_task(name="analysis.tasks.export_run", ignore_result=True)
def export_run(job_id: int) -> None:
    """Write an export job's file; a job already running, done or gone is left alone."""
    services.export_job_run(job_id=job_id)
