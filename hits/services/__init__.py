"""Writes on batches, HITs and assignments; one function per domain operation (STYLE: Where logic lives)."""

from hits.services.batches import BatchStateError, batch_close, batch_reopen
from hits.services.crowd import CrowdActionRefused, assignment_accept_remote, batch_expire, batch_publish
from hits.services.crowd_review import (
    assignment_approve,
    assignment_reject,
    batch_notify,
    batch_review_policy_update,
    bonus_send,
    worker_block_remote,
    worker_bonus,
    workers_notify,
)
from hits.services.crowd_sync import (
    SyncReport,
    assignment_flag_unknown,
    batch_sync,
    batches_sync_open,
    hit_recollect,
)
from hits.services.demo import demo_batch_open
from hits.services.generation import HitsGenerationError, hits_generate
from hits.services.queue import (
    AnswersInvalid,
    SubmissionRefused,
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    assignments_expire_overdue,
)

__all__ = [
    "AnswersInvalid",
    "BatchStateError",
    "CrowdActionRefused",
    "HitsGenerationError",
    "SubmissionRefused",
    "SyncReport",
    "assignment_accept_remote",
    "assignment_approve",
    "assignment_claim_next",
    "assignment_flag_unknown",
    "assignment_reject",
    "assignment_return",
    "assignment_submit",
    "assignments_expire_overdue",
    "batch_close",
    "batch_expire",
    "batch_notify",
    "batch_publish",
    "batch_reopen",
    "batch_review_policy_update",
    "batch_sync",
    "batches_sync_open",
    "bonus_send",
    "demo_batch_open",
    "hit_recollect",
    "hits_generate",
    "worker_block_remote",
    "worker_bonus",
    "workers_notify",
]
