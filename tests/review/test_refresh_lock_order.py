"""A refresh moves the benchmark's change counter after every lock on the work it filters
(docs/design.md §7, "The counter row is locked last").

A return or an expiry locks its work (the assignment, the HIT's slot counter) and then the
benchmark's counter row. A refresh that blocked a spammer used to move the counter for the block's
activity entry first and then lock the spammer's work to filter it: with a return on the same HIT
between the two, each waited for the other and PostgreSQL broke the deadlock by failing one, a
return answered 500 or a refresh rolled back."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections, transaction
from django.db.models import F

from annotation.changes import benchmark_changed, change_key
from hits.models import HIT, Assignment, Worker
from review.models import ReviewSettings
from review.services import benchmark_refresh
from tests.review.builders import make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_on_a_lock(pid: int) -> bool:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


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

    refresh_pid: list[int] = []
    errors: list[BaseException] = []

    def refresh() -> None:
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                refresh_pid.append(cursor.fetchone()[0])
            benchmark_refresh(benchmark=benchmark)
        except BaseException as error:
            errors.append(error)
        finally:
            connections.close_all()

    returned = False
    refresher = threading.Thread(target=refresh)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL deadlock_timeout = '100ms'")
            cursor.execute("SET LOCAL lock_timeout = '20s'")
        # As a return: the HIT's slot counter locked first ...
        HIT.objects.filter(pk=hit_id).update(assignments_active=F("assignments_active"))
        refresher.start()
        deadline = time.monotonic() + 20
        while not (refresh_pid and _waiting_on_a_lock(refresh_pid[0])) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert refresh_pid and _waiting_on_a_lock(refresh_pid[0]), "the refresh never waited for the HIT"
        # ... then the counter row, which the refresh must not hold while it waits for the HIT.
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
        returned = True
    refresher.join(30)

    assert returned and not refresher.is_alive()
    assert errors == []
    sam.refresh_from_db()
    submitted.refresh_from_db()
    assert sam.blocked and submitted.filtered
    assert change_key(benchmark_id=benchmark.pk) != key_before
