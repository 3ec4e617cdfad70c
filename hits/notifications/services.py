"""Recording a benchmark's events once and delivering them by e-mail and webhook (docs/design.md §16,
docs/notifications.md).

``notification_record`` writes an event under a key naming its occurrence; the unique constraint
(benchmark, kind, key) makes a second record of it a no-op, and the delivery is queued only once the
recording transaction commits (``transaction.on_commit``), so a rolled-back operation tells no one.
``notification_deliver`` (run by the task ``hits.tasks.notification_deliver``) e-mails the researchers
who asked for it, once, and posts the event to the webhook, signed; a failed post is tried again by
the task with a doubling wait, up to ``WEBHOOK_MAX_ATTEMPTS`` posts, each recorded as a
``WebhookDelivery`` the benchmark's page lists.

Every write the operations page shows moves the benchmark's change key in its transaction, naming
no target (no figures are recomputed): a notification recorded, its e-mail marked sent (or unmarked
after a failure) and each post's outcome (docs/design.md §7, "Kept pages").
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.urls import reverse
from django.utils import timezone

from annotation.access import role_of
from annotation.activity import activity_record
from annotation.changes import benchmark_changed
from annotation.models import ActivityKind, Benchmark, TargetStage
from crowdlex.celery import app
from hits.budget import WARNING_SHARE, budget_status
from hits.models import (
    HIT,
    VALID_STATUSES,
    Batch,
    BatchStatus,
    CrowdLimits,
    confirmed,
)
from hits.notifications.addresses import WebhookAddressRefused, webhook_session, webhook_url_check
from hits.notifications.models import Notification, NotificationKind, NotificationSettings, WebhookDelivery

logger = logging.getLogger(__name__)
# Queued by its registered name (hits.tasks imports this module inside the task).
NOTIFICATION_DELIVER_TASK = "hits.tasks.notification_deliver"

# The header that carries a webhook request's time and signature: "t=<unix seconds>,v1=<hex HMAC-SHA256>".
SIGNATURE_HEADER = "Crowdlex-Signature"
EVENT_HEADER = "Crowdlex-Event"


def webhook_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """HMAC-SHA256, keyed with the benchmark's secret, of ``<timestamp>.`` followed by the body, in hex."""
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def webhook_verify(*, secret: str, header: str, body: bytes, now: float | None = None, tolerance: int = 300) -> bool:
    """What a receiver does (docs/notifications.md): the header's signature matches the body and its
    time is within ``tolerance`` seconds of now. Compared in constant time."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs((now if now is not None else time.time()) - timestamp) > tolerance:
        return False
    expected = webhook_signature(secret=secret, timestamp=timestamp, body=body)
    return hmac.compare_digest(expected, parts.get("v1", ""))


def notification_settings(*, benchmark: Benchmark) -> NotificationSettings:
    """The benchmark's notification settings (an unsaved, empty row when none were set)."""
    return NotificationSettings.objects.filter(benchmark=benchmark).first() or NotificationSettings(benchmark=benchmark)


def notification_settings_update(
    *, benchmark: Benchmark, webhook_url: str, email_me: bool, user: User, by: Any = None
) -> tuple[NotificationSettings, str]:
    """Set the webhook URL and whether ``user`` gets the e-mails. Returns the settings and the new
    webhook secret when one was made now (a first URL): it is shown once, then never again.

    A URL reaching an address that is not public is refused (``ValidationError`` on ``webhook_url``;
    ``hits.notifications.addresses``), before anything is changed."""
    try:
        webhook_url_check(webhook_url)
    except WebhookAddressRefused as refused:
        raise ValidationError({"webhook_url": [str(refused)]}) from None
    with transaction.atomic():
        found, _ = NotificationSettings.objects.select_for_update().get_or_create(benchmark=benchmark)
        new_secret = ""
        changes: dict[str, Any] = {}
        if webhook_url != found.webhook_url:
            changes["webhook_url"] = [found.webhook_url, webhook_url]
            found.webhook_url = webhook_url
            if webhook_url and not found.webhook_secret:
                new_secret = found.webhook_secret = secrets.token_hex(32)
            found.save(update_fields=["webhook_url", "webhook_secret"])
        subscribed = found.pk is not None and found.email_to.filter(pk=user.pk).exists()
        if email_me and not subscribed:
            found.email_to.add(user)
            changes["email"] = f"{user.get_username()} gets e-mails"
        elif subscribed and not email_me:
            found.email_to.remove(user)
            changes["email"] = f"{user.get_username()} gets no e-mails"
        if changes:
            activity_record(
                benchmark=benchmark,
                kind=ActivityKind.SETTING_CHANGED,
                summary="notification settings changed: " + ", ".join(sorted(changes)),
                by=by,
                result={"changed": {key: value for key, value in changes.items()}},
            )
    return found, new_secret


def webhook_secret_rotate(*, benchmark: Benchmark, by: Any = None) -> str:
    """A new signing secret for the benchmark's webhook (shown once); the old one stops working now."""
    with transaction.atomic():
        found, _ = NotificationSettings.objects.select_for_update().get_or_create(benchmark=benchmark)
        found.webhook_secret = secrets.token_hex(32)
        found.save(update_fields=["webhook_secret"])
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.SETTING_CHANGED,
            summary="a new webhook signing secret was made; the old one no longer signs",
            by=by,
            result={"changed": {"webhook_secret": "rotated"}},
        )
    return found.webhook_secret


def notification_record(
    *, benchmark: Benchmark | int, kind: str, key: str, summary: str, data: dict[str, Any]
) -> Notification | None:
    """Record an event once (the same benchmark, kind and key: nothing happens) and deliver it after
    commit. Returns the new row, or None when it was recorded before."""
    benchmark_id = benchmark if isinstance(benchmark, int) else benchmark.pk
    try:
        with transaction.atomic():
            notification = Notification.objects.create(
                benchmark_id=benchmark_id, kind=kind, key=key[:100], summary=summary[:500], payload=data
            )
            benchmark_changed(benchmark_id=benchmark_id, target_ids=())
    except IntegrityError:
        return None
    transaction.on_commit(lambda: app.tasks[NOTIFICATION_DELIVER_TASK].delay(notification.pk))
    return notification


def _body(notification: Notification) -> bytes:
    page = settings.SITE_URL.rstrip("/") + reverse("benchmark-detail", kwargs={"name": notification.benchmark.name})
    document = {
        "id": notification.pk,
        "event": notification.kind,
        "benchmark": notification.benchmark.name,
        "summary": notification.summary,
        "created_at": notification.created_at.isoformat(),
        "url": page,
        "data": notification.payload,
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def _email(notification: Notification, found: NotificationSettings) -> None:
    """E-mail the researchers who asked for it, once (the row is marked first, then the mail sent;
    a failure un-marks it so the task's next try sends it)."""
    # Only those who still see the benchmark: access taken away ends the e-mails too.
    recipients = sorted(
        user.email
        for user in found.email_to.filter(is_active=True)
        if user.email and role_of(user, notification.benchmark_id) is not None
    )
    if not recipients:
        return
    if not _emailed_mark(notification, timezone.now()):
        return
    page = settings.SITE_URL.rstrip("/") + reverse("benchmark-detail", kwargs={"name": notification.benchmark.name})
    try:
        send_mail(
            subject=f"[crowdlex] {notification.benchmark.name}: {notification.get_kind_display()}",
            message=f"{notification.summary}\n\n{page}\n\nYou get this because you asked for e-mail about "
            f"{notification.benchmark.name} on its notifications page.",
            from_email=None,
            recipient_list=recipients,
        )
    except Exception:
        _emailed_mark(notification, None)
        raise


def _emailed_mark(notification: Notification, at: datetime | None) -> bool:
    """Mark the notification's e-mail sent at ``at`` (when it was not yet), or unmarked (None), with
    the move of its benchmark's change key; whether a row changed."""
    with transaction.atomic():
        marked = Notification.objects.filter(pk=notification.pk)
        changed = (marked.filter(emailed_at__isnull=True) if at is not None else marked).update(emailed_at=at)
        if changed:
            benchmark_changed(benchmark_id=notification.benchmark_id, target_ids=())
    return bool(changed)


def _to_deliver(*, notification_id: int, attempt: int) -> Notification | None:
    """The notification with its benchmark and settings, whether anyone asked for its e-mail and
    whether this attempt is recorded already: one statement, so a notification nobody asked for
    costs its task one statement."""
    asked = NotificationSettings.email_to.through.objects.filter(
        notificationsettings__benchmark_id=OuterRef("benchmark_id")
    )
    return (
        Notification.objects.select_related("benchmark", "benchmark__notification_settings")
        .annotate(
            wants_email=Exists(asked),
            attempted=Exists(WebhookDelivery.objects.filter(notification_id=OuterRef("pk"), attempt=attempt)),
        )
        .filter(pk=notification_id)
        .first()
    )


def _outcome(*, attempt: int, error: str) -> dict[str, Any]:
    """What a post's outcome writes on its notification: delivered, given up, or the error to try again on."""
    if not error:
        return {"delivered_at": timezone.now(), "webhook_error": ""}
    if attempt >= settings.WEBHOOK_MAX_ATTEMPTS:
        return {"delivered_at": timezone.now(), "webhook_error": f"gave up after {attempt} attempts: {error}"}
    return {"webhook_error": error}


def notification_deliver(*, notification_id: int, attempt: int = 1) -> int | None:
    """E-mail and post one notification; returns the seconds to wait before trying the webhook again
    (None: delivered, given up, or nothing to deliver). Idempotent: a delivered notification, or an
    attempt already recorded (a task run twice), posts nothing. The attempt and its outcome on the
    notification are written in one transaction: a task that dies between them cannot leave an
    attempt recorded whose outcome never is (the next run would see the attempt and stop)."""
    notification = _to_deliver(notification_id=notification_id, attempt=attempt)
    if notification is None:
        return None
    found: NotificationSettings | None = getattr(notification.benchmark, "notification_settings", None)
    if found is None:
        return None
    if attempt == 1 and notification.wants_email:  # type: ignore[attr-defined]
        _email(notification, found)
    if not found.webhook_url or notification.delivered_at is not None or notification.attempted:  # type: ignore[attr-defined]
        return None
    body = _body(notification)
    timestamp = int(time.time())
    signature = webhook_signature(secret=found.webhook_secret, timestamp=timestamp, body=body)
    started = time.monotonic()
    status_code, error = None, ""
    try:
        # Its connections refuse an address that is not public, whatever the name resolves to now.
        response = webhook_session().post(
            found.webhook_url,
            data=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": "crowdlex-webhook",
                SIGNATURE_HEADER: f"t={timestamp},v1={signature}",
                EVENT_HEADER: notification.kind,
            },
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            allow_redirects=False,
        )
        status_code = response.status_code
        if not 200 <= status_code < 300:
            error = f"the webhook answered {status_code}"
    except WebhookAddressRefused as refused:
        error = f"refused: {refused}"[:1000]
    except requests.RequestException as failure:
        error = f"{type(failure).__name__}: {failure}"[:1000]
    try:
        with transaction.atomic():
            WebhookDelivery.objects.create(
                notification=notification,
                attempt=attempt,
                url=found.webhook_url,
                status_code=status_code,
                error=error,
                seconds=round(time.monotonic() - started, 3),
            )
            Notification.objects.filter(pk=notification.pk).update(**_outcome(attempt=attempt, error=error))
            benchmark_changed(benchmark_id=notification.benchmark_id, target_ids=())
    except IntegrityError:
        return None
    if not error or attempt >= settings.WEBHOOK_MAX_ATTEMPTS:
        return None
    return int(settings.WEBHOOK_RETRY_SECONDS * 2 ** (attempt - 1))


# -- the events ---------------------------------------------------------------------------------


def _batches_done(benchmark: Benchmark) -> list[int]:
    """Open batches of the benchmark with HITs, none of which still collects: each HIT has its valid
    assignments, or its target needs no more."""
    open_ids = set(
        Batch.objects.filter(benchmark=benchmark, status=BatchStatus.OPEN, hits__isnull=False).values_list(
            "pk", flat=True
        )
    )
    if not open_ids:
        return []
    valid = Q(assignments__status__in=VALID_STATUSES, assignments__filtered=False) & confirmed("assignments__")
    collecting = set(
        HIT.objects.filter(batch_id__in=open_ids)
        .exclude(target__stage=TargetStage.DONE)
        .annotate(valid=Count("assignments", filter=valid))
        .filter(valid__lt=F("assignments_required"))
        .values_list("batch_id", flat=True)
        .distinct()
    )
    return sorted(open_ids - collecting)


def benchmark_watch(*, benchmark: Benchmark, now: datetime | None = None) -> list[Notification]:
    """Record what the benchmark's researchers are told of now: each open batch that is done (once
    per batch) and the budget crossing 80 % of its cap (once per crossing). Called by the review's
    refresh and after work is committed; cheap (a few grouped statements) and idempotent."""
    now = now or timezone.now()
    made: list[Notification] = []
    for batch_id in _batches_done(benchmark):
        notification = notification_record(
            benchmark=benchmark,
            kind=NotificationKind.BATCH_DONE,
            key=f"batch:{batch_id}",
            summary=f"batch {batch_id} of {benchmark.name} is done: every HIT has its work",
            data={"batch": batch_id},
        )
        if notification is not None:
            made.append(notification)
    made.extend(_budget_watch(benchmark=benchmark, now=now))
    return made


def _budget_watch(*, benchmark: Benchmark, now: datetime) -> Iterable[Notification]:
    limits = CrowdLimits.objects.filter(benchmark=benchmark).first()
    if limits is None or limits.budget_cap is None:
        return []
    status = budget_status(benchmark=benchmark, now=now)
    share = status.used_share or 0.0
    if share < float(WARNING_SHARE):
        if limits.budget_warned_at is not None:
            # Back below the line (the cap was raised, work was given back): the next crossing warns again.
            CrowdLimits.objects.filter(pk=limits.pk).update(budget_warned_at=None)
        return []
    if not CrowdLimits.objects.filter(pk=limits.pk, budget_warned_at__isnull=True).update(budget_warned_at=now):
        return []
    used = status.spent + status.committed
    notification = notification_record(
        benchmark=benchmark,
        kind=NotificationKind.BUDGET_WARNING,
        key=f"budget:{now.isoformat()}",
        summary=f"{benchmark.name} has used {round(share * 100)} % of its budget cap: ${used:.2f} of "
        f"${status.cap:.2f} spent or committed, ${max(status.remaining or Decimal(0), Decimal(0)):.2f} left",
        data=status.as_dict() | {"share": round(share, 4)},
    )
    return [] if notification is None else [notification]


def worker_flagged_notify(
    *, benchmark: Benchmark | int, flag_id: int, worker: str, reason: str, raised_at: datetime
) -> None:
    """A worker was flagged (or flagged again after recovering): one notification per raising."""
    notification_record(
        benchmark=benchmark,
        kind=NotificationKind.WORKER_FLAGGED,
        key=f"flag:{flag_id}:{raised_at.isoformat()}",
        summary=f"worker {worker} is flagged: {reason}",
        data={"flag": flag_id, "worker": worker, "reason": reason},
    )
