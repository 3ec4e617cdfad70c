"""A participant a crowd recruited for a whole batch (a Prolific study) arrives: give them a HIT.

On MTurk the worker picks a HIT and the crowd counts its assignments; on Prolific the participant
takes a place in the batch's study and this platform picks the HIT. Their identity (participant
and session ids) comes in a URL anyone can write, so nothing here counts on it: the claim takes no
slot, the work saved on it counts only once a sync finds the session among the study's
submissions under the same participant (docs/design.md §4), and a session id is bound to one assignment
for good.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef
from django.utils import timezone

from annotation.models import Worker
from crowds.interface import get_backend
from crowds.selectors import coming_work
from crowds.services.publishing import CLAIM_GRACE, CrowdActionRefused, confirmed_by_crowd
from hits.models import HIT, Assignment, AssignmentStatus, Batch, BatchStatus
from hits.selectors import OFFERED_HIT


def hit_for_participant(*, batch: Batch, worker: Worker, now: datetime) -> HIT | None:
    """The HIT of the batch a newcomer should do: one still offered and short of counted work, that
    they have not done (as the crowd confirmed it: a forged claim naming them never takes a HIT from
    them), with none of the candidates they judged already when the benchmark wants distinct people
    per candidate (docs/design.md §3: a participant of step 2 may come back for step 3), and with the
    least work counted or still coming (live claims, work awaiting confirmation), so places go where
    work is missing. A claim from a forged link only makes its HIT look busier for a while: it
    never keeps a real participant from getting work."""
    done = Assignment.objects.filter(confirmed_by_crowd(), hit=OuterRef("pk"), worker=worker)
    offered = HIT.objects.filter(OFFERED_HIT, batch=batch, assignments_active__lt=F("assignments_required")).exclude(
        Exists(done)
    )
    if batch.benchmark.distinct_workers_per_candidate:
        offered = offered.exclude(items__candidate__labels__worker=worker)
    hits = list(offered.values_list("pk", "assignments_active"))
    if not hits:
        return None
    coming = dict(
        Assignment.objects.filter(hit_id__in=[pk for pk, _ in hits])
        .filter(coming_work())
        .exclude(status=AssignmentStatus.CLAIMED, deadline__lte=now)
        .values("hit_id")
        .annotate(n=Count("pk"))
        .values_list("hit_id", "n")
    )
    best = min(hits, key=lambda row: (row[1] + coming.get(row[0], 0), row[0]))
    return HIT.objects.select_related("batch").get(pk=best[0])


def participant_binding(*, batch: Batch, participant_id: str, session_id: str, kind: str) -> Assignment | None:
    """The assignment a first visit of this session made in this batch, if any (a reload writes nothing)."""
    return (
        Assignment.objects.filter(
            hit__batch=batch, worker__kind=kind, worker__external_id=participant_id, external_id=session_id
        )
        .select_related("hit__batch", "worker")
        .first()
    )


def assignment_accept_participant(
    *,
    batch: Batch,
    participant_id: str,
    session_id: str,
    kind: str | None = None,
    now: datetime | None = None,
) -> Assignment:
    """The assignment of a participant's session, made on their first visit with a HIT chosen here.

    A reload returns the same assignment (even after the batch closed, so started work can be
    finished). The binding is pending until a sync finds the session among the study's submissions
    under the same participant, and it never keeps anyone out (docs/design.md §4): a forged visit
    naming a real participant makes a claim of its own, which neither blocks the participant's
    real session nor takes a HIT from them. Refused: a blocked participant, a session id the crowd
    confirmed for someone else, and a newcomer when no HIT needs work.

    Locking: the worker row (``FOR UPDATE``) while the HIT is chosen and the assignment made, so
    two visits of one session never make two claims; the partial unique constraints on (hit,
    worker) and on the external id hold for confirmed rows.
    """
    now = now or timezone.now()
    # The participant is a worker of the batch's crowd unless told otherwise.
    kind = kind or get_backend(batch.backend).worker_kind
    known = participant_binding(batch=batch, participant_id=participant_id, session_id=session_id, kind=kind)
    if known is not None:
        return known
    if batch.status != BatchStatus.OPEN:
        raise CrowdActionRefused("This study is closed. Please return it on Prolific.")
    if batch.paused_at is not None:
        raise CrowdActionRefused("This study is paused by its researcher for now. Please return it on Prolific.")
    worker, _ = Worker.objects.get_or_create(kind=kind, external_id=participant_id)
    with transaction.atomic():
        locked = Worker.objects.select_for_update(no_key=True).get(pk=worker.pk)
        again = participant_binding(batch=batch, participant_id=participant_id, session_id=session_id, kind=kind)
        if again is not None:
            # Two first visits of one session at once: the other one made the row while this one waited.
            return again
        if locked.blocked:
            raise CrowdActionRefused("You cannot take part in this study. Please return it on Prolific.")
        if Assignment.objects.filter(confirmed_by_crowd(), external_id=session_id).exists():
            raise CrowdActionRefused("This link belongs to another session. Please return the study on Prolific.")
        hit = hit_for_participant(batch=batch, worker=locked, now=now)
        if hit is None:
            raise CrowdActionRefused(
                "All the work of this study is taken or done. Please return the study on Prolific."
            )
        return Assignment.objects.create(
            hit=hit,
            worker=locked,
            status=AssignmentStatus.CLAIMED,
            external_id=session_id,
            claimed_at=now,
            deadline=now + batch.assignment_duration + CLAIM_GRACE,
        )
