"""What the judgments mean, where it is stored: worker flags and export jobs (DESIGN §5, §7)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Benchmark, Worker


class FlagReason(models.TextChoices):
    CONTROL_ACCURACY = "control_accuracy", "control accuracy below the threshold"
    FAST = "fast", "implausibly fast"
    STRAIGHT_LINE = "straight_line", "the same answer on every row"
    ABSTAIN = "abstain", "abstains far more than the crowd"
    IDENTICAL = "identical", "answers identical to another worker's"
    DISAGREEMENT = "disagreement", "low agreement with the majority"


class WorkerFlag(models.Model):
    """A reason to review a worker's work in one benchmark, with its evidence."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="worker_flags")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="flags")
    reason = models.CharField(max_length=20, choices=FlagReason.choices)
    evidence = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    cleared_at = models.DateTimeField(null=True, blank=True)
    cleared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "worker", "reason"], name="workerflag_unique_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.worker} in {self.benchmark}: {self.reason}"

    @property
    def active(self) -> bool:
        return self.cleared_at is None


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
