"""Reads for the annotator's side: the page of one HIT, a worker's live claim and history."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Worker
from hits.models import HIT, Answer, Assignment, AssignmentStatus, Backend, HITItem

DONE_STATUSES = (AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED, AssignmentStatus.REJECTED)


@dataclass(frozen=True)
class ItemRow:
    """One row of the annotator's page. Deliberately without the item's kind: controls look
    exactly like candidates (DESIGN §1)."""

    id: int
    number: int
    text: str
    selected: str
    missing: bool


@dataclass(frozen=True)
class HitPage:
    """What the annotator's page shows: the context split around the target, and the rows.

    The three parts of the context are plain text, escaped separately by the template, so the
    highlight never needs ``|safe``.
    """

    before: str
    target: str
    after: str
    word: str
    rows: list[ItemRow]


def hit_page(
    *,
    hit: HIT,
    selected: Mapping[int, str] | None = None,
    missing: Iterable[int] = (),
) -> HitPage:
    """The page of ``hit``; ``selected`` pre-fills answers (a refused form, or a submitted HIT)."""
    target = hit.target
    text = target.context.text
    start, end = target.offset, target.offset + len(target.word)
    if text[start:end] == target.word:
        before, word, after = text[:start], text[start:end], text[end:]
    else:
        # The model guarantees the offset; should an import ever break it, show the text unmarked.
        before, word, after = text, "", ""
    selected = selected or {}
    missing_ids = set(missing)
    items = HITItem.objects.filter(hit=hit).order_by("position").values_list("pk", "text")
    rows = [
        ItemRow(id=pk, number=number, text=item_text, selected=selected.get(pk, ""), missing=pk in missing_ids)
        for number, (pk, item_text) in enumerate(items, start=1)
    ]
    return HitPage(before=before, target=word, after=after, word=target.word, rows=rows)


def assignment_answers(*, assignment: Assignment) -> dict[int, str]:
    """The worker's own stored answers, item id -> value."""
    return dict(Answer.objects.filter(assignment=assignment).values_list("item_id", "value"))


def assignment_for_page(*, assignment_id: int, user_id: int | None) -> Assignment | None:
    """The assignment with its HIT, target and context, if it belongs to the user's worker."""
    if user_id is None:
        return None
    return (
        Assignment.objects.select_related("hit__batch", "hit__target__context")
        .filter(pk=assignment_id, worker__user_id=user_id)
        .first()
    )


def live_claim(*, worker: Worker, now: datetime | None = None) -> Assignment | None:
    """The worker's claim in progress on the local queue, if any."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(
            worker=worker, status=AssignmentStatus.CLAIMED, deadline__gt=now, hit__batch__backend=Backend.LOCAL
        )
        .order_by("claimed_at")
        .first()
    )


def work_history(*, worker: Worker) -> QuerySet[Assignment]:
    """The worker's own submitted assignments, newest first (no scores, no filtering flags)."""
    return (
        Assignment.objects.filter(worker=worker, status__in=DONE_STATUSES)
        .select_related("hit__target")
        .order_by("-submitted_at", "-id")
    )


def work_counts(*, worker: Worker, now: datetime | None = None) -> dict[str, int]:
    """How many HITs the worker has submitted, in all and in the last 24 hours."""
    now = now or timezone.now()
    done = Assignment.objects.filter(worker=worker, status__in=DONE_STATUSES)
    return {
        "done": done.count(),
        "today": done.filter(submitted_at__gte=now - timedelta(days=1)).count(),
    }


def work_assignments(*, worker: Worker) -> QuerySet[Assignment]:
    """All of the worker's own assignments, newest first, for their history in the API."""
    return Assignment.objects.filter(worker=worker).select_related("hit__target").order_by("-claimed_at", "-id")
