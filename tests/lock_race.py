"""A change racing a return on the same HIT, on two real connections (docs/design.md §7, "The counter
row is locked last"): the test's connection locks the HIT's slot counter as a return does, the
change runs on a connection of its own until it waits for that HIT, then the return moves the
benchmark's counter and commits. A change that held the counter while it waited would deadlock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connection, connections, transaction
from django.db.models import F

from annotation.changes import benchmark_changed
from hits.models import HIT


@dataclass
class Race:
    """What the race left: whether the change waited for the HIT, whether the return committed,
    whether the change finished, and what it raised."""

    waited: bool = False
    returned: bool = False
    finished: bool = False
    errors: list[BaseException] = field(default_factory=list)


def _waiting_on_a_lock(pid: int) -> bool:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def raced_with_a_return(*, hit_id: int, benchmark_id: int, change: Callable[[], object]) -> Race:
    """Run ``change`` on a connection of its own while this one holds the HIT's slot counter; once it
    waits for the HIT, move the benchmark's counter here and commit (PostgreSQL only)."""
    race = Race()
    pid: list[int] = []

    def run() -> None:
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pid.append(cursor.fetchone()[0])
            change()
        except BaseException as error:
            race.errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL deadlock_timeout = '100ms'")
            cursor.execute("SET LOCAL lock_timeout = '20s'")
        # As a return: the HIT's slot counter locked first ...
        HIT.objects.filter(pk=hit_id).update(assignments_active=F("assignments_active"))
        thread.start()
        deadline = time.monotonic() + 20
        while not (pid and _waiting_on_a_lock(pid[0])) and time.monotonic() < deadline:
            time.sleep(0.02)
        race.waited = bool(pid) and _waiting_on_a_lock(pid[0])
        if race.waited:
            # ... then the counter row, which the change must not hold while it waits for the HIT.
            benchmark_changed(benchmark_id=benchmark_id, target_ids=[])
            race.returned = True
    thread.join(30)
    race.finished = not thread.is_alive()
    return race
