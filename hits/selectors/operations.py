"""A batch's throughput over the last hours and its ETA (docs/design.md §16).

Throughput counts assignments handed in (submitted, whatever became of them later) by the hour,
over the last ``THROUGHPUT_WINDOW_HOURS``: one grouped statement for any number of batches, over the
partial index on ``Assignment.submitted_at``, each submission's batch read by its HIT's primary key,
so it reads only the window's submissions whatever the number of HITs; a batch's page and poll read
the same statement with the batch's live claims OR-ed in (``batch_live``). The ETA
divides the work still missing (required assignments less valid ones, ``BatchProgress``) by the
last hour's count, and says so; with nothing handed in during the last hour there is no ETA.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, DateTimeField, F, OuterRef, Q, QuerySet, Subquery, Value
from django.utils import timezone

from crowdlex.dialect import HoursBetween
from crowdlex.statements import shaped_rows
from hits.models import HIT, SUBMITTED_STATUSES, Assignment, AssignmentStatus, Batch
from hits.selectors.researcher import BatchProgress, batches_progress


@dataclass(frozen=True)
class Throughput:
    """``per_hour[i]``: assignments handed in between ``i + 1`` and ``i`` hours ago (the last hour first)."""

    per_hour: list[int]
    remaining: int
    now: datetime

    @property
    def last_hour(self) -> int:
        return self.per_hour[0] if self.per_hour else 0

    @property
    def eta(self) -> timedelta | None:
        """How long the remaining work takes at the last hour's rate; None when nothing came in, zero when done."""
        if self.remaining <= 0:
            return timedelta(0)
        if not self.last_hour:
            return None
        return timedelta(hours=self.remaining / self.last_hour)

    @property
    def finish_at(self) -> datetime | None:
        eta = self.eta
        return None if eta is None else self.now + eta

    @property
    def basis(self) -> str:
        """What the ETA rests on, in words for the page."""
        if self.remaining <= 0:
            return "nothing left to collect"
        if not self.last_hour:
            return "no work in the last hour"
        noun = "assignment" if self.last_hour == 1 else "assignments"
        return f"at the last hour's rate of {self.last_hour} {noun} an hour"

    @property
    def eta_words(self) -> str:
        eta = self.eta
        if eta is None:
            return "no estimate"
        if eta == timedelta(0):
            return "done"
        minutes = math.ceil(eta.total_seconds() / 60)
        if minutes < 90:
            return f"about {minutes} minutes"
        hours = minutes / 60
        if hours < 48:
            return f"about {round(hours)} hours"
        return f"about {round(hours / 24)} days"

    @property
    def sparkline_max(self) -> int:
        return max(self.per_hour, default=0)

    @property
    def oldest_first(self) -> list[int]:
        return list(reversed(self.per_hour))

    def as_dict(self) -> dict[str, object]:
        eta = self.eta
        return {
            "last_hour": self.last_hour,
            "per_hour": self.per_hour,
            "remaining": self.remaining,
            "eta_seconds": None if eta is None else round(eta.total_seconds()),
            "finish_at": None if self.finish_at is None else self.finish_at.isoformat(),
            "basis": self.basis,
        }


def _window_rows(
    ids: list[int], now: datetime, since: datetime, claims: bool
) -> QuerySet[Assignment, tuple[int, float | None, int, int]]:
    handed_in = Q(submitted_at__gt=since, submitted_at__lte=now, status__in=SUBMITTED_STATUSES)
    claimed = Q(status=AssignmentStatus.CLAIMED, deadline__gt=now)
    batch = Subquery(HIT.objects.filter(pk=OuterRef("hit_id")).values("batch_id"))
    return (
        Assignment.objects.filter(handed_in | claimed if claims else handed_in)
        .annotate(batch=batch)
        .filter(batch__in=ids)
        # A claim has no submission time: its age is NULL, its row apart from the window's.
        .annotate(ago=HoursBetween(Value(now, output_field=DateTimeField()), F("submitted_at")))
        .values_list("batch", "ago")
        .annotate(handed_in=Count("id", filter=handed_in), claimed=Count("id", filter=claimed))
        .order_by()
    )


def _handed_in_and_claimed(
    ids: list[int], *, now: datetime, hours: int, claims: bool
) -> tuple[dict[int, list[int]], Counter[int]]:
    """The batches' submissions of the window by hours ago and, with ``claims``, their claims before
    their deadline, in one grouped statement over the assignments: the window on the submission
    time's partial index and, OR-ed with it, the claims on the (status, deadline) index (a bitmap
    OR in PostgreSQL), so it reads the window's submissions and the live claims, not every HIT's work.
    Each row's batch is read by its HIT's primary key, not joined: a join lets the planner walk every
    HIT of the table in id order to meet the window's few submissions."""
    per_hour: dict[int, list[int]] = defaultdict(lambda: [0] * hours)
    in_flight: Counter[int] = Counter()
    if not ids:
        return per_hour, in_flight
    # The statement built by the ORM once per process (``crowdlex.statements.shaped_rows``): every
    # batch page and poll reads it.
    rows = shaped_rows(_window_rows, ids, now, now - timedelta(hours=hours), claims)
    for batch_id, ago, handed, claimed_count in rows:
        if handed:
            per_hour[batch_id][min(hours - 1, max(0, int(ago)))] += handed
        in_flight[batch_id] += claimed_count
    return per_hour, in_flight


def batches_throughput(
    *, batches: Iterable[Batch], progress: dict[int, BatchProgress], now: datetime | None = None
) -> dict[int, Throughput]:
    """Throughput and ETA of each batch, in one statement; ``progress`` gives the work remaining."""
    now = now or timezone.now()
    hours = max(1, settings.THROUGHPUT_WINDOW_HOURS)
    ids = [batch.pk for batch in batches]
    counts, _ = _handed_in_and_claimed(ids, now=now, hours=hours, claims=False)
    return {batch_id: _throughput(counts[batch_id], progress[batch_id], now) for batch_id in ids}


def _throughput(per_hour: list[int], progress: BatchProgress, now: datetime) -> Throughput:
    remaining = max(0, progress.assignments_required - progress.assignments_valid)
    return Throughput(per_hour=per_hour, remaining=remaining, now=now)


def batch_throughput(*, batch: Batch, progress: BatchProgress, now: datetime | None = None) -> Throughput:
    return batches_throughput(batches=[batch], progress={batch.pk: progress}, now=now)[batch.pk]


def batch_live(*, batch: Batch) -> tuple[BatchProgress, Throughput]:
    """A batch's progress and throughput now, for its page and its poll (docs/design.md §7, §16): the
    progress kept per change of the benchmark (``batches_progress``) with what moves no change key
    read live in one statement: the work in flight (a claim moves no key) and the window's
    submissions (the window slides with the clock)."""
    now = timezone.now()
    kept = batches_progress(batches=[batch])[batch.pk]
    hours = max(1, settings.THROUGHPUT_WINDOW_HOURS)
    per_hour, in_flight = _handed_in_and_claimed([batch.pk], now=now, hours=hours, claims=True)
    progress = dataclasses.replace(kept, assignments_in_flight=in_flight[batch.pk])
    return progress, _throughput(per_hour[batch.pk], progress, now)
