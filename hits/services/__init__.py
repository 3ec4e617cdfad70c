"""Writes on batches, HITs and assignments; one function per domain operation (STYLE: Where logic lives)."""

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
    "SubmissionRefused",
    "assignment_claim_next",
    "assignment_return",
    "assignment_submit",
    "assignments_expire_overdue",
]
