"""A batch's throughput over the last hours and its ETA (docs/design.md §16).

Throughput counts assignments handed in (submitted, whatever became of them later) by the hour,
over the last ``THROUGHPUT_WINDOW_HOURS``: one grouped statement for any number of batches, over the
partial index on ``Assignment.submitted_at``, each submission's batch read by its HIT's primary key,
so it reads only the window's submissions whatever the number of HITs. The ETA
divides the work still missing (required assignments less valid ones, ``BatchProgress``) by the
last hour's count, and says so; with nothing handed in during the last hour there is no ETA.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, DateTimeField, F, OuterRef, Subquery, Value
from django.utils import timezone

from crowdlex.dialect import HoursBetween
from hits.models import HIT, SUBMITTED_STATUSES, Assignment, Batch
from hits.selectors.researcher import BatchProgress


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


def batches_throughput(
    *, batches: Iterable[Batch], progress: dict[int, BatchProgress], now: datetime | None = None
) -> dict[int, Throughput]:
    """Throughput and ETA of each batch, in one statement; ``progress`` gives the work remaining."""
    now = now or timezone.now()
    hours = max(1, settings.THROUGHPUT_WINDOW_HOURS)
    ids = [batch.pk for batch in batches]
    counts: dict[int, list[int]] = defaultdict(lambda: [0] * hours)
    if ids:
        # Each submission's batch read by its HIT's primary key, not joined: a join lets the planner
        # walk every HIT of the table in id order to meet the window's few submissions.
        batch = Subquery(HIT.objects.filter(pk=OuterRef("hit_id")).values("batch_id"))
        rows = (
            Assignment.objects.filter(
                submitted_at__gt=now - timedelta(hours=hours),
                submitted_at__lte=now,
                status__in=SUBMITTED_STATUSES,
            )
            .annotate(batch=batch)
            .filter(batch__in=ids)
            .annotate(ago=HoursBetween(Value(now, output_field=DateTimeField()), F("submitted_at")))
            .values_list("batch", "ago")
            .annotate(count=Count("id"))
            .order_by()
        )
        for batch_id, ago, count in rows:
            counts[batch_id][min(hours - 1, max(0, int(ago)))] += count
    found = {}
    for batch_id in ids:
        done = progress[batch_id]
        remaining = max(0, done.assignments_required - done.assignments_valid)
        found[batch_id] = Throughput(per_hour=counts[batch_id], remaining=remaining, now=now)
    return found


def batch_throughput(*, batch: Batch, progress: BatchProgress, now: datetime | None = None) -> Throughput:
    return batches_throughput(batches=[batch], progress={batch.pk: progress}, now=now)[batch.pk]
