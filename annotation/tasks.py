"""Celery tasks of the annotation app: thin wrappers that look rows up and call one service.

``import_run`` is idempotent and acknowledged late (CELERY_TASK_ACKS_LATE): a task whose worker
dies runs again on another, which takes the job over (the import is one transaction, so nothing of
the first run stays), and one that meets a database going away is retried shortly.
"""

from __future__ import annotations

from celery import shared_task

from crowdlex.celery import DATABASE_RETRY


@shared_task(name="annotation.tasks.import_run", ignore_result=True, acks_late=True, **DATABASE_RETRY)
def import_run(job_id: int) -> None:
    """Import an import job's stored upload (``annotation.importers.jobs.import_job_run``)."""
    from annotation.importers.jobs import import_job_run

    import_job_run(job_id=job_id)


@shared_task(name="annotation.tasks.import_jobs_fail_stuck", ignore_result=True)
def import_jobs_fail_stuck() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): mark failed the import jobs whose task was lost."""
    from annotation.importers.jobs import import_jobs_fail_stuck as fail_stuck

    return fail_stuck()


@shared_task(name="annotation.tasks.benchmark_figures_warm", ignore_result=True, acks_late=True, **DATABASE_RETRY)
def benchmark_figures_warm(benchmark_id: int, every_target: bool = True) -> None:
    """Bring a benchmark's figures up to date after a change, before its first reader
    (``annotation.warm.figures_warm_run``), unless a newer warm will. Idempotent: figures computed
    for the benchmark's change key already are read, not computed again."""
    from annotation.warm import figures_warm_run

    figures_warm_run(benchmark_id=benchmark_id, every_target=every_target)
