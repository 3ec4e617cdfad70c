"""Import jobs: an upload stored, imported by a Celery task, its progress and its outcome.

The page and the API store the upload under ``MEDIA_ROOT/IMPORT_UPLOAD_DIRECTORY`` (copied a chunk
at a time from Django's temporary file), create an :class:`ImportJob` and return at once; the task
(``annotation.tasks.import_run``, inline on the embedded default) runs :func:`benchmark_import`,
all or nothing as ever, and deletes the stored upload once it has read it, whatever the outcome.

The import is one transaction, so what it reports while it runs cannot go through its own rows:
progress and the worker's heartbeat are kept in the cache (shared by every process when
``CACHE_URL`` is set), and the job row only changes when the job starts and ends.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.core.files.base import File
from django.db import transaction
from django.db.models import Q
from django.http import Http404
from django.utils import timezone

from annotation.access import Role, is_researcher, object_for
from annotation.importers.errors import ImportFailed
from annotation.importers.reading import source_name
from annotation.importers.service import benchmark_import
from annotation.importers.sources import SOURCE_NAMES, candidates_add, targets_chosen
from annotation.llm import LLM, ModelRequest, default_prompt, llm_origin, prompt_check
from annotation.models import Benchmark, ImportJob, ImportJobStatus
from crowdlex.celery import app

logger = logging.getLogger(__name__)

# The task that runs a job (annotation.tasks), by its registered name.
IMPORT_RUN_TASK = "annotation.tasks.import_run"
# Progress is kept a while after the last report: long enough for any page to read it.
PROGRESS_SECONDS = 24 * 3600


def import_job_progress_key(job_id: int) -> str:
    """The job's progress and heartbeat in the cache; its page is kept while it is the same
    (docs/design.md §7, "Kept pages": the import job's page)."""
    return f"import-job:{job_id}:progress"


def import_job_progress(job: ImportJob) -> dict[str, Any] | None:
    """What a running job has reported: ``{"done": targets, "total": targets or None, "at": epoch}``."""
    found = cache.get(import_job_progress_key(job.pk))
    return found if isinstance(found, dict) else None


def import_job_file(job: ImportJob) -> Path:
    """The job's stored upload under MEDIA_ROOT; refuses a stored path that would lead outside it."""
    root = Path(settings.MEDIA_ROOT).resolve()
    path = (root / job.path).resolve()
    if not job.path or root not in path.parents:
        raise ValueError(f"import job {job.pk} has no stored upload under MEDIA_ROOT")
    return path


def _listed_job_moved(job_id: int) -> None:
    """Move the change key of the job's benchmark, whose import page lists the job's state (docs/design.md
    §7, "Kept pages"), naming no target: the job's own row moved no figure (an import's data moves the
    key in its own transaction). Call after the job's write, in its transaction."""
    from annotation.changes import benchmark_changed

    benchmark_id = ImportJob.objects.filter(pk=job_id).values_list("benchmark_id", flat=True).first()
    if benchmark_id is not None:
        benchmark_changed(benchmark_id=benchmark_id, target_ids=())


def import_job_create(
    *,
    upload: File[Any],
    benchmark_name: str,
    fmt: str = "auto",
    origin: str | None = None,
    new_label_set: bool = False,
    created_by: User | AnonymousUser | None = None,
) -> ImportJob:
    """Store an upload, record a job to import it, and queue ``annotation.tasks.import_run`` once
    the row is committed. The caller has checked the user may import into ``benchmark_name`` and
    the upload's size (``validate_upload_size``)."""
    user = created_by if isinstance(created_by, User) else None
    job = ImportJob.objects.create(
        benchmark_name=benchmark_name,
        benchmark=Benchmark.objects.filter(name=benchmark_name).first(),
        file_name=source_name(upload)[:255],
        format=fmt,
        origin=(origin or "")[:200],
        new_label_set=new_label_set,
        created_by=user,
    )
    job.path = f"{settings.IMPORT_UPLOAD_DIRECTORY}/{job.pk}.upload"
    target = import_job_file(job)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    except OSError:
        target.unlink(missing_ok=True)
        with transaction.atomic():
            _listed_job_moved(job.pk)
            job.delete()
        raise
    with transaction.atomic():
        job.save(update_fields=["path"])
        _listed_job_moved(job.pk)
    transaction.on_commit(lambda: _queue_import_run(job.pk))
    return job


def _queue_import_run(job_id: int) -> None:
    # Named by its registered name: the task imports this module, so this one does not import it.
    app.tasks[IMPORT_RUN_TASK].delay(job_id)


def candidates_job_create(
    *,
    benchmark: Benchmark,
    source: str,
    targets: list[str] | None = None,
    model: ModelRequest | None = None,
    created_by: User | AnonymousUser | None = None,
) -> ImportJob:
    """Record a job that adds candidates from ``source`` (``candidates_add``: WordNet, or the model
    ``model`` names) and queue it like an import once the row is committed; the page and the API
    follow it on the import job's page. What can be checked before it runs is checked here, as a
    ``ValueError`` naming it: the source, the targets, the model's name, its numbers and the prompt.
    The caller has checked the user may edit the benchmark."""
    if source not in SOURCE_NAMES:
        raise ValueError(f"unknown candidate source {source!r}; expected one of {', '.join(SOURCE_NAMES)}")
    targets_chosen(benchmark=benchmark, targets=targets)
    parameters: dict[str, Any] = {"targets": list(targets or [])}
    origin = source
    if source == LLM:
        if model is None:
            raise ValueError("the llm source needs a model to ask")
        checked = model.checked()
        if checked.prompt:
            prompt_check(checked.prompt, where=checked.prompt_name)
        else:
            default_prompt(benchmark)
        parameters["model"] = dataclasses.asdict(checked)
        origin = llm_origin(checked.model)
    job = ImportJob.objects.create(
        benchmark_name=benchmark.name,
        benchmark=benchmark,
        file_name=origin[:255],
        format=source,
        origin=origin[:200],
        parameters=parameters,
        created_by=created_by if isinstance(created_by, User) else None,
    )
    _listed_job_moved(job.pk)
    transaction.on_commit(lambda: _queue_import_run(job.pk))
    return job


def _candidates_run(job: ImportJob, progress: Callable[[int, int | None], None]) -> dict[str, Any]:
    """Run a candidates job (``candidates_job_create``): its report, as ``as_dict`` gives it."""
    if job.benchmark is None:
        raise ValueError(f"the benchmark {job.benchmark_name} is gone")
    parameters = job.parameters if isinstance(job.parameters, dict) else {}
    asked = parameters.get("model")
    report = candidates_add(
        benchmark=job.benchmark,
        source=job.format,
        targets=parameters.get("targets") or None,
        created_by=job.created_by,
        model=ModelRequest(**asked) if isinstance(asked, dict) else None,
        progress=progress,
    )
    return report.as_dict()


def _heartbeat_fresh(job_id: int) -> bool:
    found = cache.get(import_job_progress_key(job_id))
    if not isinstance(found, dict):
        return False
    age = timezone.now().timestamp() - float(found.get("at", 0))
    return age < settings.IMPORT_JOB_HEARTBEAT_SECONDS


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Import a pending job's upload, or take over a running one whose worker fell silent; idempotent.

    Claimed with a conditional UPDATE (pending -> running, row count checked), so a redelivered
    task or a second worker never imports a job twice while its first worker lives. The import
    itself is :func:`benchmark_import`: one transaction, all or nothing. Returns the job as it is
    now, or None if it is gone.
    """
    now = timezone.now()
    claimable = Q(status=ImportJobStatus.PENDING)
    if not _heartbeat_fresh(job_id):
        claimable |= Q(status=ImportJobStatus.RUNNING)
    with transaction.atomic():
        claimed = ImportJob.objects.filter(claimable, pk=job_id).update(status=ImportJobStatus.RUNNING, started_at=now)
        if claimed:
            _listed_job_moved(job_id)
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None or not claimed:
        return job
    key = import_job_progress_key(job_id)
    cache.set(key, {"done": 0, "total": None, "at": now.timestamp()}, PROGRESS_SECONDS)

    def progress(done: int, total: int | None) -> None:
        cache.set(key, {"done": done, "total": total, "at": timezone.now().timestamp()}, PROGRESS_SECONDS)

    outcome: dict[str, Any] = {}
    if job.format in SOURCE_NAMES and not job.path:
        # Candidates from a source, no file: each target's candidates are kept as they come (a model's
        # run is resumable, so a job taken over from a silent worker asks only what is left).
        try:
            with _heartbeat(key):
                outcome = {"status": ImportJobStatus.DONE, "report": _candidates_run(job, progress)}
        except ValueError as error:
            outcome = {"status": ImportJobStatus.FAILED, "error": {"detail": str(error), "file": job.file_name}}
        except Exception as error:
            logger.exception("candidates job %s failed", job_id)
            outcome = {
                "status": ImportJobStatus.FAILED,
                "error": {"detail": f"{type(error).__name__}: {error}", "file": job.file_name},
            }
        with transaction.atomic():
            ImportJob.objects.filter(pk=job_id).update(finished_at=timezone.now(), **outcome)
            _listed_job_moved(job_id)
        cache.delete(key)
        job.refresh_from_db()
        return job
    try:
        with _heartbeat(key), import_job_file(job).open("rb") as stored:
            # Messages and the default origin name the uploaded file, not the stored one.
            stored.raw.name = job.file_name  # type: ignore[attr-defined]
            report = benchmark_import(
                path_or_file=stored,
                benchmark_name=job.benchmark_name,
                fmt=job.format,
                created_by=job.created_by,
                progress=progress,
                origin=job.origin or None,
                new_label_set=job.new_label_set,
            )
    except ImportFailed as error:
        outcome = {"status": ImportJobStatus.FAILED, "error": error.as_dict()}
    except Exception as error:
        logger.exception("import job %s failed", job_id)
        outcome = {
            "status": ImportJobStatus.FAILED,
            "error": {"detail": f"{type(error).__name__}: {error}", "file": job.file_name},
        }
    else:
        outcome = {
            "status": ImportJobStatus.DONE,
            "report": report.as_dict(),
            "benchmark": Benchmark.objects.filter(name=job.benchmark_name).first(),
        }
    with transaction.atomic():
        ImportJob.objects.filter(pk=job_id).update(path="", finished_at=timezone.now(), **outcome)
        _listed_job_moved(job_id)
    _stored_upload_delete(job)
    cache.delete(key)
    job.refresh_from_db()
    return job


@contextmanager
def _heartbeat(key: str) -> Iterator[None]:
    """Keep the job's heartbeat fresh while it runs, progress or not: a SWORDS file is read whole
    before its first target is written, and a live job must not look abandoned meanwhile."""
    stop = threading.Event()
    every = max(settings.IMPORT_JOB_HEARTBEAT_SECONDS / 4, 0.1)

    def beat() -> None:
        while not stop.wait(every):
            found = cache.get(key)
            if isinstance(found, dict):
                cache.set(key, {**found, "at": timezone.now().timestamp()}, PROGRESS_SECONDS)

    beating = threading.Thread(target=beat, name="import-job-heartbeat", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()


def _stored_upload_delete(job: ImportJob) -> None:
    try:
        import_job_file(job).unlink(missing_ok=True)
    except (OSError, ValueError):
        logger.warning("import job %s: the stored upload %r could not be deleted", job.pk, job.path)


def import_jobs_fail_stuck() -> int:
    """Mark failed the jobs pending or running for longer than IMPORT_JOB_TIMEOUT_SECONDS with no
    live worker, and delete their stored uploads; returns how many. Their task was lost (a broker
    emptied, a worker gone for good): the researcher uploads the file again. Periodic (Celery beat)."""
    now = timezone.now()
    timeout: int = settings.IMPORT_JOB_TIMEOUT_SECONDS
    waiting = ImportJob.objects.filter(
        status__in=[ImportJobStatus.PENDING, ImportJobStatus.RUNNING], created_at__lt=now - timedelta(seconds=timeout)
    )
    failed = 0
    for job in waiting:
        if _heartbeat_fresh(job.pk):
            continue
        # A candidates job (its parameters say what it asks) is run again, not uploaded again.
        again = "Run it again: the targets answered are kept." if job.parameters else "Upload it again."
        error = {
            "detail": f"Stopped: not finished within {timeout // 60} minutes (its worker ended). {again}",
            "file": job.file_name,
        }
        # Conditional on the status read, so a job that has just finished keeps its outcome.
        with transaction.atomic():
            stopped = ImportJob.objects.filter(pk=job.pk, status=job.status).update(
                status=ImportJobStatus.FAILED, error=error, finished_at=now, path=""
            )
            if stopped:
                _listed_job_moved(job.pk)
        if stopped:
            _stored_upload_delete(job)
            failed += 1
    return failed


def import_job_for(user: Any, job_id: int) -> ImportJob:
    """The job, if the user may see it: its creator, or a viewer of its benchmark (404 otherwise)."""
    if not is_researcher(user):
        raise Http404("No such import job.")
    # Its creator with it: the job's page names them.
    found = ImportJob.objects.select_related("benchmark", "created_by").filter(pk=job_id).first()
    if found is None:
        raise Http404("No such import job.")
    if found.created_by_id is not None and found.created_by_id == user.pk:
        return found
    if found.benchmark_id is None:
        # Into a benchmark the import has not created yet: its creator's alone.
        if user.is_superuser:
            return found
        raise Http404("No such import job.")
    return object_for(user, ImportJob.objects.select_related("benchmark", "created_by"), Role.VIEWER, pk=job_id)
