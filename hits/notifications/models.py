"""What a benchmark tells its researchers of its collection, by e-mail and by a signed webhook
(docs/design.md §16, docs/notifications.md): the settings, each event recorded once, and every
attempt to deliver it. These models belong to the ``hits`` app (``hits.models`` imports them)."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models

from annotation.models import Benchmark


class NotificationKind(models.TextChoices):
    BATCH_DONE = "batch_done", "a batch is done"
    BUDGET_WARNING = "budget_warning", "the budget is 80 % used"
    WORKER_FLAGGED = "worker_flagged", "a worker is flagged"


class NotificationSettings(models.Model):
    """Where a benchmark's notifications go: the researchers who asked for e-mail, and a webhook URL
    whose requests are signed with ``webhook_secret`` (shown once, when it is made)."""

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, related_name="notification_settings")
    webhook_url = models.URLField(max_length=500, blank=True)
    webhook_secret = models.CharField(max_length=64, blank=True, editable=False)
    email_to = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")

    class Meta:
        verbose_name_plural = "notification settings"

    def __str__(self) -> str:
        return f"notifications of {self.benchmark.name}"


class Notification(models.Model):
    """One event of a benchmark, recorded once: ``key`` names the occurrence (the batch that is done,
    the crossing of 80 % of the cap, the raising of a flag), so recording it again changes nothing."""

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    key = models.CharField(max_length=100)
    summary = models.CharField(max_length=500)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    emailed_at = models.DateTimeField(null=True, blank=True)
    # Set once the webhook answered 2xx, or when it gave up (``webhook_error`` says why).
    delivered_at = models.DateTimeField(null=True, blank=True)
    webhook_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "kind", "key"], name="notification_once_per_occurrence")
        ]
        indexes = [models.Index(fields=["benchmark", "-created_at"], name="notification_latest")]

    def __str__(self) -> str:
        return f"{self.kind} of {self.benchmark_id}: {self.summary}"


class WebhookDelivery(models.Model):
    """One attempt to post a notification to its benchmark's webhook, and what came back."""

    benchmark_path: ClassVar[str] = "notification__benchmark"

    notification = models.ForeignKey(Notification, on_delete=models.CASCADE, related_name="deliveries")
    attempt = models.PositiveSmallIntegerField()
    url = models.URLField(max_length=500)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["notification", "attempt"], name="webhookdelivery_once_per_attempt")
        ]

    def __str__(self) -> str:
        return f"delivery {self.attempt} of notification {self.notification_id}: {self.status_code or self.error}"

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
