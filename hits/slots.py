"""``HIT.assignments_active``, the slot counter: the one module that writes it.

The counter is the number of a HIT's assignments that match ``hits.models.HOLDS_SLOT``: local
claims not yet expired or returned, plus work submitted or approved, not filtered and confirmed by
its crowd (a crowd claim holds nothing: the crowd decides who takes its HITs). The database refuses it above
``assignments_required`` (check constraint ``hit_never_over_assigned``) and below zero (unsigned
column). Callers hold the locks their docstrings name; these functions only move the number.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import F

from hits.models import HIT


def slot_take(*, hit_id: int) -> None:
    """One more counted assignment; call holding the HIT's row lock after checking it has room."""
    HIT.objects.filter(pk=hit_id).update(assignments_active=F("assignments_active") + 1)


def slot_take_sql(alias: str) -> str:
    """The SET clause that takes one slot of the HIT row ``alias`` inside a caller's own statement:
    the claim picks a HIT with room, takes its slot and inserts the assignment in one statement
    (``hits.services.queue``); its WHERE checks the room and its lock is the statement's."""
    return f"assignments_active = {alias}.assignments_active + 1"


def slot_retake(*, hit_id: int) -> bool:
    """One more counted assignment if the HIT still has room; a conditional UPDATE, its row count is the answer."""
    return bool(
        HIT.objects.filter(pk=hit_id, assignments_active__lt=F("assignments_required")).update(
            assignments_active=F("assignments_active") + 1
        )
    )


def slots_release(per_hit: Mapping[int, int]) -> None:
    """Counted assignments stop counting (hit id -> how many); HITs are updated in id order, so two
    concurrent releases lock HIT rows in the same order."""
    for hit_id in sorted(per_hit):
        if per_hit[hit_id]:
            HIT.objects.filter(pk=hit_id).update(assignments_active=F("assignments_active") - per_hit[hit_id])


def slots_recount(*, hit_id: int, count: int) -> None:
    """Set the counter from the assignments themselves (the review refresh recounts after filtering)."""
    HIT.objects.filter(pk=hit_id).update(assignments_active=count)
