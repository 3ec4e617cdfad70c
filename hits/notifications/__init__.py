"""What a benchmark tells its researchers (docs/notifications.md): events recorded once, e-mailed to
those who asked and posted to a signed webhook. The models are in ``models`` (part of the hits app)."""

from hits.notifications.services import (
    EVENT_HEADER,
    SIGNATURE_HEADER,
    benchmark_watch,
    notification_deliver,
    notification_record,
    notification_settings,
    notification_settings_update,
    webhook_secret_rotate,
    webhook_signature,
    webhook_verify,
    worker_flagged_notify,
)

__all__ = [
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "benchmark_watch",
    "notification_deliver",
    "notification_record",
    "notification_settings",
    "notification_settings_update",
    "webhook_secret_rotate",
    "webhook_signature",
    "webhook_verify",
    "worker_flagged_notify",
]
