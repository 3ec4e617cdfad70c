"""A refresh moves the benchmark's change counter after every lock on the work it filters
(docs/design.md §7, "The counter row is locked last").

A return or an expiry locks its work (the assignment, the HIT's slot counter) and then the
benchmark's counter row. A refresh that blocked a spammer used to move the counter for the block's
activity entry first and then lock the spammer's work to filter it: with a return on the same HIT
between the two, each waited for the other and PostgreSQL broke the deadlock by failing one, a
return answered 500 or a refresh rolled back."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F

from annotation.changes import change_key
from hits.models import HIT, Assignment, Worker
from review.models import ReviewSettings
from review.services import benchmark_refresh
from tests.lock_race import raced_with_a_return
from tests.review.builders import make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_refresh_blocking_a_spammer_waits_for_a_return_on_the_same_hit_without_a_deadlock() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    sam = simulated("sam")
    submitted = work_once(sam, benchmark, spammer)
    assert submitted is not None
    hit_id = submitted.hit_id
    # The refresh below has the spammer to block and their work to filter again, as when the
    # spammer's work arrives after the researcher asked for automatic blocks.
    ReviewSettings.objects.update_or_create(benchmark=benchmark, defaults={"auto_block_spammers": True})
    Assignment.objects.filter(pk=submitted.pk).update(filtered=False)
    HIT.objects.filter(pk=hit_id).update(assignments_active=F("assignments_active") + 1)
    assert not Worker.objects.get(pk=sam.pk).blocked
    key_before = change_key(benchmark_id=benchmark.pk)

    race = raced_with_a_return(
        hit_id=hit_id, benchmark_id=benchmark.pk, change=lambda: benchmark_refresh(benchmark=benchmark)
    )
    assert race.waited, "the refresh never waited for the HIT"

    assert race.returned and race.finished
    assert race.errors == []
    sam.refresh_from_db()
    submitted.refresh_from_db()
    assert sam.blocked and submitted.filtered
    assert change_key(benchmark_id=benchmark.pk) != key_before
