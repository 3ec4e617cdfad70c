"""Reads of batches, HITs and assignments: for researchers (progress, costs, answers) and for the
annotator's side (the page of one HIT, a worker's live claim and history)."""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Aggregate, Count, F, FloatField, Func, Max, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Benchmark, TargetStage, Worker
from hits.models import (
    HIT,
    SUBMITTED_STATUSES,
    VALID_STATUSES,
    Answer,
    Assignment,
    AssignmentStatus,
    Backend,
    Batch,
    BatchStatus,
    HITFlag,
    HITItem,
    HITReservation,
    confirmed,
)
from schemes import get_scheme
from schemes.base import Page, SchemeSettings

# A HIT offers its free slots while its batch is open and its target still collects: once a target
# is done, nothing more of it is collected whatever slots its HITs have left (the claim query in
# hits.services.queue says the same in SQL).
OFFERED_HIT = Q(batch__status=BatchStatus.OPEN) & ~Q(target__stage=TargetStage.DONE)


@dataclass(frozen=True)
class AnnotatorWork:
    """What one named annotator was assigned in a benchmark and how far they are."""

    worker_id: int
    name: str
    targets: int
    shared: int
    submitted: int
    in_progress: int

    @property
    def percent(self) -> int:
        return round(100 * self.submitted / self.targets) if self.targets else 0


def benchmark_has_reservations(*, benchmark: Benchmark) -> bool:
    return HITReservation.objects.filter(hit__batch__benchmark=benchmark).exists()


def benchmark_assignments(*, benchmark: Benchmark, now: datetime | None = None) -> list[AnnotatorWork]:
    """Each annotator with reserved HITs in the benchmark (``HITReservation``): HITs assigned,
    those shared with another annotator, submitted and in progress; by name."""
    now = now or timezone.now()
    reserved = list(
        HITReservation.objects.filter(hit__batch__benchmark=benchmark).values_list(
            "hit_id", "worker_id", "worker__external_id"
        )
    )
    holders = Counter(hit_id for hit_id, _, _ in reserved)
    work = Assignment.objects.filter(hit_id__in=holders).values_list("hit_id", "worker_id", "status", "deadline")
    submitted: Counter[int] = Counter()
    in_progress: Counter[int] = Counter()
    for _, worker_id, status, deadline in work:
        if status in SUBMITTED_STATUSES:
            submitted[worker_id] += 1
        elif status == AssignmentStatus.CLAIMED and deadline > now:
            in_progress[worker_id] += 1
    names = {worker_id: name for _, worker_id, name in reserved}
    targets = Counter(worker_id for _, worker_id, _ in reserved)
    shared = Counter(worker_id for hit_id, worker_id, _ in reserved if holders[hit_id] > 1)
    return sorted(
        (
            AnnotatorWork(
                worker_id=worker_id,
                name=names[worker_id],
                targets=targets[worker_id],
                shared=shared[worker_id],
                submitted=submitted[worker_id],
                in_progress=in_progress[worker_id],
            )
            for worker_id in targets
        ),
        key=lambda row: row.name,
    )


def open_batch_holdings(
    *, benchmark: Benchmark, step: int, target_ids: list[int] | None = None
) -> tuple[dict[int, int], dict[int, int]]:
    """What non-closed batches of ``step`` collect: candidate id -> batch id (a candidate is in at
    most one), and target id -> batch id (for schemes whose item is the target itself)."""
    items = HITItem.objects.filter(hit__batch__benchmark=benchmark, hit__batch__step=step).exclude(
        hit__batch__status=BatchStatus.CLOSED
    )
    if target_ids is not None:
        items = items.filter(hit__target_id__in=target_ids)
    candidates: dict[int, int] = {}
    targets: dict[int, int] = {}
    for candidate_id, target_id, batch_id in items.values_list("candidate_id", "hit__target_id", "hit__batch_id"):
        if candidate_id is not None:
            candidates[candidate_id] = batch_id
        targets[target_id] = batch_id
    return candidates, targets


def _valid(prefix: str = "") -> Q:
    """Work that counts: submitted or approved, not filtered as spam (DESIGN §5), and confirmed by its crowd."""
    return Q(**{f"{prefix}status__in": VALID_STATUSES, f"{prefix}filtered": False}) & confirmed(prefix)


VALID_ASSIGNMENT = _valid()


def _in_flight(now: datetime, prefix: str = "") -> Q:
    return Q(**{f"{prefix}status": AssignmentStatus.CLAIMED, f"{prefix}deadline__gt": now})


@dataclass(frozen=True)
class BatchProgress:
    """Where a batch stands. Costs are the reward times a number of assignments; the MTurk fees
    come with the MTurk backend."""

    hits_total: int
    hits_complete: int
    assignments_required: int
    assignments_valid: int
    assignments_filtered: int
    assignments_in_flight: int
    median_seconds: float | None
    reward: Decimal

    @property
    def percent_complete(self) -> float:
        return 100.0 * self.hits_complete / self.hits_total if self.hits_total else 0.0

    @property
    def percent_assignments(self) -> float:
        if not self.assignments_required:
            return 0.0
        return min(100.0, 100.0 * self.assignments_valid / self.assignments_required)

    @property
    def cost_so_far(self) -> Decimal:
        return self.reward * self.assignments_valid

    @property
    def cost_projected(self) -> Decimal:
        """What the required assignments cost; re-collection after spam filtering adds to it."""
        return self.reward * self.assignments_required


class _Median(Aggregate):
    """PostgreSQL's exact median; other databases get theirs computed in Python."""

    function = "percentile_cont"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def _seconds_per_assignment() -> Func:
    # Time on page as the annotator page measured it; the claim-to-submit span where it did not.
    span = Func(F("submitted_at") - F("claimed_at"), template="EXTRACT(EPOCH FROM %(expressions)s)")
    return Coalesce(F("seconds_on_page"), span, output_field=FloatField())


def _median_seconds(batch_ids: list[int]) -> dict[int, float]:
    valid = Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch_id__in=batch_ids)
    if connection.vendor == "postgresql":
        rows = valid.values("hit__batch_id").annotate(median=_Median(_seconds_per_assignment())).order_by()
        return {row["hit__batch_id"]: row["median"] for row in rows if row["median"] is not None}
    seconds: dict[int, list[float]] = defaultdict(list)
    for batch_id, on_page, claimed_at, submitted_at in valid.values_list(
        "hit__batch_id", "seconds_on_page", "claimed_at", "submitted_at"
    ):
        if on_page is None and submitted_at is not None:
            on_page = (submitted_at - claimed_at).total_seconds()
        if on_page is not None:
            seconds[batch_id].append(on_page)
    return {batch_id: statistics.median(values) for batch_id, values in seconds.items()}


def batches_progress(*, batches: Iterable[Batch], now: datetime | None = None) -> dict[int, BatchProgress]:
    """Progress of several batches in four grouped queries, whatever their number of HITs."""
    now = now or timezone.now()
    by_id = {batch.pk: batch for batch in batches}
    ids = list(by_id)
    if not ids:
        return {}
    hit_totals: dict[int, tuple[int, int]] = {
        batch_id: (total, required or 0)
        for batch_id, total, required in HIT.objects.filter(batch_id__in=ids)
        .values("batch_id")
        .annotate(total=Count("id"), required=Sum("assignments_required"))
        .values_list("batch_id", "total", "required")
        .order_by()
    }
    assignment_totals: dict[int, tuple[int, int, int]] = {
        batch_id: (valid, filtered, in_flight)
        for batch_id, valid, filtered, in_flight in Assignment.objects.filter(hit__batch_id__in=ids)
        .values("hit__batch_id")
        .annotate(
            valid=Count("id", filter=VALID_ASSIGNMENT),
            filtered=Count("id", filter=Q(filtered=True)),
            in_flight=Count("id", filter=_in_flight(now)),
        )
        .values_list("hit__batch_id", "valid", "filtered", "in_flight")
        .order_by()
    }
    complete: dict[int, int] = defaultdict(int)
    for batch_id in (
        Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch_id__in=ids)
        .values("hit_id", "hit__batch_id")
        .annotate(valid=Count("id"))
        .filter(valid__gte=F("hit__assignments_required"))
        .values_list("hit__batch_id", flat=True)
        .order_by()
    ):
        complete[batch_id] += 1
    medians = _median_seconds(ids)
    progress = {}
    for batch_id, batch in by_id.items():
        hits_total, required = hit_totals.get(batch_id, (0, 0))
        valid, filtered, in_flight = assignment_totals.get(batch_id, (0, 0, 0))
        progress[batch_id] = BatchProgress(
            hits_total=hits_total,
            hits_complete=complete[batch_id],
            assignments_required=required,
            assignments_valid=valid,
            assignments_filtered=filtered,
            assignments_in_flight=in_flight,
            median_seconds=medians.get(batch_id),
            reward=batch.reward,
        )
    return progress


def batch_progress(*, batch: Batch, now: datetime | None = None) -> BatchProgress:
    return batches_progress(batches=[batch], now=now)[batch.pk]


def batch_list(*, benchmark: Benchmark | None = None) -> QuerySet[Batch]:
    batches = Batch.objects.select_related("benchmark", "created_by").order_by("-created_at", "-id")
    return batches if benchmark is None else batches.filter(benchmark=benchmark)


def batch_hits(*, batch: Batch, now: datetime | None = None) -> QuerySet[HIT]:
    """The HITs of a batch with their target and counts of valid and in-flight assignments."""
    now = now or timezone.now()
    return (
        HIT.objects.filter(batch=batch)
        .select_related("target")
        .annotate(
            assignments_valid=Count("assignments", filter=_valid("assignments__")),
            assignments_in_flight=Count("assignments", filter=_in_flight(now, "assignments__")),
        )
        .order_by("id")
    )


def hit_with_items(*, hit_id: int) -> HIT:
    """One HIT with its batch, target, context and items in display order (raises HIT.DoesNotExist)."""
    return (
        HIT.objects.select_related("batch__benchmark", "target__context")
        .prefetch_related(Prefetch("items", queryset=HITItem.objects.select_related("candidate").order_by("position")))
        .get(pk=hit_id)
    )


def hit_assignments(*, hit: HIT) -> QuerySet[Assignment]:
    return (
        Assignment.objects.filter(hit=hit)
        .select_related("worker")
        .prefetch_related(Prefetch("answers", queryset=Answer.objects.order_by("item__position")))
        .order_by("id")
    )


@dataclass(frozen=True)
class AnswerRow:
    item: HITItem
    values: list[str | None]


def hit_answer_table(*, hit: HIT, assignments: list[Assignment]) -> list[AnswerRow]:
    """One row per item (display order), one column per assignment; None where there is no answer."""
    values = {(answer.assignment_id, answer.item_id): answer.value for a in assignments for answer in a.answers.all()}
    return [
        AnswerRow(item=item, values=[values.get((assignment.pk, item.pk)) for assignment in assignments])
        for item in hit.items.all()
    ]


def assignment_list() -> QuerySet[Assignment]:
    return Assignment.objects.select_related("worker", "hit__batch").order_by("id")


def batch_max_items(*, batch: Batch) -> int:
    """Items of the batch's largest HIT (positions count from 1 without gaps)."""
    return HITItem.objects.filter(hit__batch=batch).aggregate(most=Max("position"))["most"] or 0


def batch_hits_for_export(*, batch: Batch, chunk_size: int = 500) -> Iterator[HIT]:
    items = Prefetch("items", queryset=HITItem.objects.order_by("position"))
    hits = HIT.objects.filter(batch=batch).select_related("target__context").prefetch_related(items).order_by("id")
    return hits.iterator(chunk_size=chunk_size)


# --- the annotator's side ---


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
    # How the benchmark's scheme shows its HITs (schemes.base.Page), and its question around the target.
    scheme: Page
    question_before: str
    question_after: str
    # The benchmark's language (a BCP 47 tag) for the context and the rows.
    language: str

    @property
    def answered(self) -> int:
        return sum(1 for row in self.rows if row.selected)

    # The benchmark's scheme settings, for a page that shows them (how many targets to mark).
    settings: SchemeSettings


def hit_page(
    *,
    hit_id: int,
    selected: Mapping[int, str] | None = None,
    missing: Iterable[int] = (),
) -> HitPage:
    """The page of a HIT; ``selected`` pre-fills answers (a refused form, or a submitted HIT).

    One query: the items in display order, each row carrying the target and its context.
    """
    items = list(
        HITItem.objects.filter(hit_id=hit_id)
        .order_by("position")
        .values_list(
            "pk",
            "text",
            "hit__target__word",
            "hit__target__offset",
            "hit__target__context__text",
            "hit__batch__benchmark__scheme",
            "hit__batch__benchmark__language",
            "hit__batch__benchmark__scheme_settings",
            "hit__batch__step",
        )
    )
    if items:
        _, _, word, offset, text, scheme_name, language, scheme_settings, step = items[0]
    else:
        hit = HIT.objects.select_related("target__context", "batch__benchmark").get(pk=hit_id)
        word, offset, text, step = hit.target.word, hit.target.offset, hit.target.context.text, hit.batch.step
        scheme_name, language = hit.batch.benchmark.scheme, hit.batch.benchmark.language
        scheme_settings = hit.batch.benchmark.scheme_settings
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
    scheme = get_scheme(scheme_name, step=step)
    page = scheme.page
    question_before, question_after = page.question_around_target()
    return HitPage(
        before=before,
        target=marked,
        after=after,
        word=word,
        context=text,
        offset=offset,
        rows=rows,
        scheme=page,
        question_before=question_before,
        question_after=question_after,
        language=language,
        settings=scheme.settings_type.from_json(scheme_settings),
    )


def structured_answers(*, benchmark: Benchmark, kind_prefix: str) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """(target id, context id, worker id, data) of the valid answers with structured data
    (``Answer.data``) to the benchmark's items of a kind starting with ``kind_prefix``, in
    submission order: what the schemes that merge several annotators' work read."""
    rows = (
        Answer.objects.filter(
            item__hit__batch__benchmark=benchmark,
            item__kind__startswith=kind_prefix,
            assignment__status__in=VALID_STATUSES,
            assignment__filtered=False,
        )
        .order_by("assignment__submitted_at", "pk")
        .values_list("item__hit__target_id", "item__hit__target__context_id", "assignment__worker_id", "data")
    )
    for target_id, context_id, worker_id, data in rows.iterator(chunk_size=2000):
        if isinstance(data, dict):
            yield target_id, context_id, worker_id, data


def assignment_answers(*, assignment: Assignment) -> dict[int, str]:
    """The worker's own stored answers as the page posted them, item id -> value (a structured
    answer, ``Answer.data``, as its JSON text)."""
    return {
        item_id: value if data is None else json.dumps(data)
        for item_id, value, data in Answer.objects.filter(assignment=assignment).values_list("item_id", "value", "data")
    }


def assignment_for_page(*, assignment_id: int, user_id: int | None) -> Assignment | None:
    """The assignment with its worker, if it belongs to the user's worker (the worker is joined in:
    the submit claims the next HIT for it)."""
    if user_id is None:
        return None
    return Assignment.objects.select_related("worker").filter(pk=assignment_id, worker__user_id=user_id).first()


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
        Assignment.objects.filter(worker=worker, status__in=SUBMITTED_STATUSES)
        .select_related("hit__target")
        .order_by("-submitted_at", "-id")
    )


def work_counts(*, worker: Worker, now: datetime | None = None) -> dict[str, int]:
    """How many HITs the worker has submitted, in all and in the last 24 hours."""
    now = now or timezone.now()
    done = Assignment.objects.filter(worker=worker, status__in=SUBMITTED_STATUSES)
    return {
        "done": done.count(),
        "today": done.filter(submitted_at__gte=now - timedelta(days=1)).count(),
    }


def work_assignments(*, worker: Worker) -> QuerySet[Assignment]:
    """All of the worker's own assignments, newest first, for their history in the API."""
    return Assignment.objects.filter(worker=worker).select_related("hit__target").order_by("-claimed_at", "-id")


@dataclass(frozen=True)
class WorkProgress:
    """Where the annotator stands, for the top of a HIT's page.

    ``due_at`` is the deadline the worker is told: the claim plus the batch's assignment duration,
    which on MTurk is MTurk's own deadline (its clock starts when the worker accepts, the moment the
    page first opens). ``Assignment.deadline`` may be later: on a paid crowd the platform keeps the
    slot a little longer (``hits.crowd.publishing.CLAIM_GRACE``) so that a submit in MTurk's last
    seconds is still taken, and telling the worker that later time would make them miss MTurk's.
    """

    due_at: datetime
    seconds_left: int
    word: str
    part: int
    parts: int
    done_in_batch: int


def assignment_progress(*, assignment: Assignment, now: datetime | None = None) -> WorkProgress:
    """The worker's deadline, the HIT's part among its target's HITs in the batch (counting from 1),
    and how many HITs of the batch the worker has submitted. One statement: the HIT's row with the
    two counts as indexed subqueries."""
    now = now or timezone.now()
    parts = (
        HIT.objects.filter(batch_id=OuterRef("batch_id"), target_id=OuterRef("target_id"))
        .order_by()
        .values("batch_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    done = (
        Assignment.objects.filter(
            worker_id=assignment.worker_id, hit__batch_id=OuterRef("batch_id"), status__in=SUBMITTED_STATUSES
        )
        .order_by()
        .values("worker_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    part, word, duration, parts_count, done_count = (
        HIT.objects.filter(pk=assignment.hit_id)
        .annotate(parts_count=Subquery(parts), done_count=Subquery(done))
        .values_list("part", "target__word", "batch__assignment_duration", "parts_count", "done_count")[0]
    )
    due_at = assignment.claimed_at + duration
    return WorkProgress(
        due_at=due_at,
        seconds_left=max(0, int((due_at - now).total_seconds())),
        word=word,
        part=part + 1,
        parts=parts_count or 0,
        done_in_batch=done_count or 0,
    )


# --- annotators' flags, for researchers ---


def hit_flags(*, hit: HIT) -> QuerySet[HITFlag]:
    """The flags annotators raised on a HIT, whole-HIT flags first, then by row."""
    return (
        HITFlag.objects.filter(assignment__hit=hit)
        .select_related("assignment__worker", "item__candidate")
        .order_by(F("item__position").asc(nulls_first=True), "created_at", "id")
    )


def benchmark_flags(*, benchmark: Benchmark) -> QuerySet[HITFlag]:
    """Every flag raised in a benchmark's HITs, by target, HIT and row."""
    return (
        HITFlag.objects.filter(assignment__hit__batch__benchmark=benchmark)
        .select_related("assignment__worker", "assignment__hit__target__context", "item__candidate")
        .order_by(
            "assignment__hit__target_id",
            "assignment__hit_id",
            F("item__position").asc(nulls_first=True),
            "created_at",
            "id",
        )
    )
