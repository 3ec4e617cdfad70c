"""What the reporting room stores: export jobs (DESIGN §7)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Benchmark


class ExportStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ExportJob(models.Model):
    """A benchmark export written by a Celery task to a file under MEDIA_ROOT."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="exports")
    format = models.CharField(max_length=20)
    status = models.CharField(max_length=8, choices=ExportStatus.choices, default=ExportStatus.PENDING)
    progress = models.FloatField(default=0.0)
    path = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the worker writing the file last reported progress: a running job silent for long has lost its worker.
    heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__gte=0.0, progress__lte=1.0), name="exportjob_progress_share"),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} of {self.benchmark} as {self.format}"
