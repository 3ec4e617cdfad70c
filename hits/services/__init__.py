"""Writes on batches, HITs and assignments; one function per domain operation
(docs/conventions.md, "Services and selectors").

The crowd operations (publish, sync, approve, pay) are the ``crowds.services`` package.
"""

from hits.services.batches import BatchStateError, batch_close, batch_reopen
from hits.services.demo import demo_batch_open
from hits.services.drafts import DraftInvalid, DraftReport, draft_parse, draft_save, draft_seconds, drafts_delete
from hits.services.flags import FlagInvalid, candidate_exclude, candidate_include, hit_flag_set
from hits.services.generation import HitsGenerationError, batch_clone, hits_generate
from hits.services.guards import PledgeMissing, mitigations_update, telemetry_store
from hits.services.queue import (
    SubmissionRefused,
    assignment_claim_next,
    assignment_confirm,
    assignment_return,
    assignment_submit,
    assignment_submit_with_part,
    assignments_expire_overdue,
)
from hits.services.settings import (
    SettingsState,
    benchmark_settings,
    benchmark_settings_update,
    collection_started,
)
from hits.services.workers import worker_block
from schemes.base import AnswersInvalid

__all__ = [
    "AnswersInvalid",
    "BatchStateError",
    "DraftInvalid",
    "DraftReport",
    "FlagInvalid",
    "HitsGenerationError",
    "PledgeMissing",
    "SettingsState",
    "SubmissionRefused",
    "assignment_claim_next",
    "assignment_confirm",
    "assignment_return",
    "assignment_submit",
    "assignment_submit_with_part",
    "assignments_expire_overdue",
    "batch_clone",
    "batch_close",
    "batch_reopen",
    "benchmark_settings",
    "benchmark_settings_update",
    "candidate_exclude",
    "candidate_include",
    "collection_started",
    "demo_batch_open",
    "draft_parse",
    "draft_save",
    "draft_seconds",
    "drafts_delete",
    "hit_flag_set",
    "hits_generate",
    "mitigations_update",
    "telemetry_store",
    "worker_block",
]
