"""Annotators flag what is wrong with a HIT; researchers exclude a flagged candidate (docs/annotator.md)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.activity import activity_record
from annotation.changes import benchmark_changed
from annotation.models import ActivityKind, Candidate, CandidateStage
from crowdlex.followup import benchmark_refresh_queue
from hits.models import HIT, Assignment, HITFlag, HITFlagReason, HITItem

NOTE_MAX_LENGTH = HITFlag._meta.get_field("note").max_length or 1000


class FlagInvalid(ValidationError):
    """The flag names a reason not on the list, an item of another HIT, or has an over-long note."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid_flag")


def hit_flag_set(*, assignment: Assignment, reason: str, item_id: int | None = None, note: str = "") -> HITFlag:
    """Flag the assignment's HIT (``item_id`` None) or one of its items for the researchers.

    The HIT is not returned and the answers are untouched. One flag per item (or whole HIT) per
    assignment: flagging again replaces the reason and the note (``update_or_create``, backed by
    the partial unique constraints, so a double click stores one flag).
    """
    if reason not in HITFlagReason.values:
        raise FlagInvalid("Please choose one of the reasons listed.")
    note = note.strip()
    if len(note) > NOTE_MAX_LENGTH:
        raise FlagInvalid(f"Please keep the note under {NOTE_MAX_LENGTH} characters.")
    item = None
    if item_id is not None:
        item = HITItem.objects.filter(pk=item_id, hit_id=assignment.hit_id).first()
        if item is None:
            raise FlagInvalid("That row is not part of this HIT.")
    with transaction.atomic():
        flag, _ = HITFlag.objects.update_or_create(
            assignment=assignment, item=item, defaults={"reason": reason, "note": note}
        )
        # The flag shows on the researchers' pages of the HIT and the benchmark's flags: their kept
        # answers are not served again (docs/design.md §7, "Kept pages"); no target's figures move.
        benchmark = HIT.objects.filter(pk=assignment.hit_id).values_list("batch__benchmark_id", flat=True).get()
        benchmark_changed(benchmark_id=benchmark, target_ids=())
    return flag


def candidate_exclude(*, candidate: Candidate, by: Any = None) -> bool:
    """Exclude a candidate from the benchmark; returns False if it already was.

    The rule (docs/annotator.md): an excluded candidate is never put in a HIT again, needs no more
    labels (its target moves on without it), and statistics, scores and exports leave it and its
    labels out. HITs made before keep the row, so answers to it are still stored but count nowhere.
    Nothing is deleted: the activity entry keeps the stage it had, which ``candidate_include``
    gives back. The row is locked, so two calls exclude it once; the benchmark's refresh is
    queued so targets that waited only on this candidate advance.
    """
    with transaction.atomic():
        current = Candidate.objects.select_for_update().get(pk=candidate.pk)
        changed = current.stage != CandidateStage.EXCLUDED
        if changed:
            Candidate.objects.filter(pk=candidate.pk).update(stage=CandidateStage.EXCLUDED)
            activity_record(
                benchmark=candidate.target.benchmark_id,
                kind=ActivityKind.CANDIDATE_EXCLUDED,
                summary=f"candidate “{candidate.text}” of target {candidate.target_id} excluded",
                by=by,
                result={"candidate": candidate.pk, "target": candidate.target_id, "stage": current.stage},
            )
            benchmark_refresh_queue([candidate.target.benchmark_id])
    candidate.stage = CandidateStage.EXCLUDED
    return changed


def candidate_include(*, candidate: Candidate, stage: str = CandidateStage.REDUCE, by: Any = None) -> bool:
    """Bring an excluded candidate back at ``stage`` (the one it had when it was excluded); returns
    False if it was not excluded. The next refresh collects it again where its stage says. Locks the
    row as ``candidate_exclude`` does."""
    if stage not in CandidateStage.values or stage == CandidateStage.EXCLUDED:
        raise ValueError(f"a candidate comes back at a stage it can be collected in, not {stage!r}")
    with transaction.atomic():
        current = Candidate.objects.select_for_update().get(pk=candidate.pk)
        changed = current.stage == CandidateStage.EXCLUDED
        if changed:
            Candidate.objects.filter(pk=candidate.pk).update(stage=stage)
            activity_record(
                benchmark=candidate.target.benchmark_id,
                kind=ActivityKind.CANDIDATE_INCLUDED,
                summary=f"candidate “{candidate.text}” of target {candidate.target_id} brought back",
                by=by,
                result={"candidate": candidate.pk, "target": candidate.target_id, "stage": stage},
            )
            benchmark_refresh_queue([candidate.target.benchmark_id])
    candidate.stage = stage if changed else current.stage
    return changed
