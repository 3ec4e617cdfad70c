"""Reads for the annotator's side: the page of one HIT, a worker's live claim and history."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Target, Worker
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
    highlight never needs ``|safe``. ``context`` and ``offset`` are the stored ones, for the API.
    """

    before: str
    target: str
    after: str
    word: str
    context: str
    offset: int
    rows: list[ItemRow]


def hit_page(
    *,
    hit: HIT | int,
    selected: Mapping[int, str] | None = None,
    missing: Iterable[int] = (),
) -> HitPage:
    """The page of a HIT (or HIT id); ``selected`` pre-fills answers (a refused form, or a submitted HIT).

    One query: the items in display order, each row carrying the target and its context.
    """
    hit_id = hit if isinstance(hit, int) else hit.pk
    items = list(
        HITItem.objects.filter(hit_id=hit_id)
        .order_by("position")
        .values_list("pk", "text", "hit__target__word", "hit__target__offset", "hit__target__context__text")
    )
    if items:
        _, _, word, offset, text = items[0]
    else:
        target = Target.objects.select_related("context").get(hits__pk=hit_id)
        word, offset, text = target.word, target.offset, target.context.text
    if text[offset : offset + len(word)] == word:
        before, marked, after = text[:offset], word, text[offset + len(word) :]
    else:
        # The model guarantees the offset; should an import ever break it, show the text unmarked.
        before, marked, after = text, "", ""
    selected = selected or {}
    missing_ids = set(missing)
    rows = [
        ItemRow(id=pk, number=number, text=item_text, selected=selected.get(pk, ""), missing=pk in missing_ids)
        for number, (pk, item_text, *_) in enumerate(items, start=1)
    ]
    return HitPage(before=before, target=marked, after=after, word=word, context=text, offset=offset, rows=rows)


def assignment_answers(*, assignment: Assignment) -> dict[int, str]:
    """The worker's own stored answers, item id -> value."""
    return dict(Answer.objects.filter(assignment=assignment).values_list("item_id", "value"))


def assignment_for_page(*, assignment_id: int, user_id: int | None) -> Assignment | None:
    """The assignment with its HIT, target and context, if it belongs to the user's worker."""
    if user_id is None:
        return None
    return Assignment.objects.filter(pk=assignment_id, worker__user_id=user_id).first()


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
