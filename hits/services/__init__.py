"""Writes on batches, HITs and assignments; one function per domain operation (STYLE: Where logic lives)."""

from hits.services.crowd import (
    CrowdActionRefused,
    SyncReport,
    assignment_accept_remote,
    assignment_approve,
    assignment_flag_unknown,
    assignment_reject,
    batch_expire,
    batch_notify,
    batch_publish,
    batch_sync,
    batches_sync_open,
    bonus_send,
    hit_recollect,
    worker_block_remote,
    worker_bonus,
    workers_notify,
)

__all__ = [
    "CrowdActionRefused",
    "SyncReport",
    "assignment_accept_remote",
    "assignment_approve",
    "assignment_flag_unknown",
    "assignment_reject",
    "batch_expire",
    "batch_notify",
    "batch_publish",
    "batch_sync",
    "batches_sync_open",
    "bonus_send",
    "hit_recollect",
    "worker_block_remote",
    "worker_bonus",
    "workers_notify",
]
