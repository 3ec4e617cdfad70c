"""The crowd sub-domain of hits: publishing to a paid crowd, syncing, approval and payment, costs.

``publishing`` (publish, expire, accept a remote assignment), ``sync`` (reconcile with the crowd,
re-collect), ``approval`` (approve, reject, bonus, block, notify), ``selectors`` (publish plans,
crowd status), ``costs`` (rewards, fees, hourly pay) and ``forms``. The backends themselves sit
behind one interface in ``crowds.interface``.
"""

from crowds.services.approval import (
    assignment_approve,
    assignment_reject,
    batch_notify,
    batch_review_policy_update,
    bonus_send,
    worker_block_remote,
    worker_bonus,
    workers_notify,
)
from crowds.services.participants import assignment_accept_participant
from crowds.services.pausing import batch_pause, batch_resume
from crowds.services.publishing import CrowdActionRefused, assignment_accept_remote, batch_expire, batch_publish
from crowds.services.sync import (
    SyncReport,
    assignment_flag_unknown,
    batch_sync,
    batches_sync_open,
    hit_recollect,
)

__all__ = [
    "CrowdActionRefused",
    "SyncReport",
    "assignment_accept_participant",
    "assignment_accept_remote",
    "assignment_approve",
    "assignment_flag_unknown",
    "assignment_reject",
    "batch_expire",
    "batch_notify",
    "batch_pause",
    "batch_publish",
    "batch_resume",
    "batch_review_policy_update",
    "batch_sync",
    "batches_sync_open",
    "bonus_send",
    "hit_recollect",
    "worker_block_remote",
    "worker_bonus",
    "workers_notify",
]
