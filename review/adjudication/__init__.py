"""Adjudication (docs/design.md §17, docs/adjudication.md): researchers' decisions on candidates,
kept apart from the crowd's labels, and the marks of resolved items."""

from review.adjudication.selectors import applied_decisions, candidate_overrides, overrides_applied
from review.adjudication.services import (
    OVERRIDE_REASON_MAX_CHARS,
    OverrideRefused,
    candidate_override_remove,
    candidate_override_restore,
    candidate_override_set,
    item_resolve,
    overrides_apply_set,
)

__all__ = [
    "OVERRIDE_REASON_MAX_CHARS",
    "OverrideRefused",
    "applied_decisions",
    "candidate_override_remove",
    "candidate_override_restore",
    "candidate_override_set",
    "candidate_overrides",
    "item_resolve",
    "overrides_applied",
    "overrides_apply_set",
]
