"""The projects open to one annotator (docs/design.md §11): each open local batch with HITs left for
them, what it is called, what it asks, what it pays and whether a qualification test stands before it."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import connection
from django.utils import timezone

from annotation.models import Benchmark, Label, Target, TargetStage, Worker
from crowdlex.dialect import Dialect, dialect
from crowdlex.sql import execute, typed
from crowds.interface import queue_backend_names
from hits.models import (
    HIT,
    Assignment,
    AssignmentStatus,
    Batch,
    BatchStatus,
    HITItem,
    HITReservation,
    QualificationAttempt,
    QualificationTest,
)
from schemes import get_scheme


class Qualification:
    """Where the annotator stands with the test before a project's HITs."""

    NONE = ""  # no active test: the HITs are open to all
    NEEDED = "needed"  # not taken (or not finished) yet: the queue offers nothing until it is passed
    PASSED = "passed"
    FAILED = "failed"  # the queue never offers its HITs to this annotator


@dataclass(frozen=True)
class Project:
    """What an annotator sees of one open local batch.

    ``hits_left`` counts the HITs ``assignment_claim_next`` would let this annotator claim in the
    batch, the qualification test aside (``qualification`` says where they stand with it): open,
    target not done, a free slot, reserved for them if reserved at all, never worked on by them, and
    none of its candidates judged by them (or in a HIT they hold) where the benchmark asks for
    distinct workers per candidate.
    """

    batch_id: int
    title: str
    summary: str
    benchmark_name: str
    benchmark_title: str
    # Per HIT; None when the batch pays nothing.
    reward: Decimal | None
    time_allowed: timedelta
    hits_left: int
    qualification: str
    # True when some of its HITs were reserved for this annotator by name.
    assigned: bool

    @property
    def startable(self) -> bool:
        """The queue hands out its HITs now (no test, or a passed one)."""
        return self.qualification in (Qualification.NONE, Qualification.PASSED)

    @property
    def minutes_allowed(self) -> int:
        return max(1, round(self.time_allowed.total_seconds() / 60))


# A batch's title when the researcher left it as it was: the benchmark's names the project better.
_DEFAULT_TITLE = Batch._meta.get_field("title").get_default()


@functools.cache
def _projects_sql(sql_dialect: Dialect) -> str:
    """One statement: the HITs left per open local batch for one worker (counted in SQL over the
    claim's partial index ``hit_claim_order``, which holds only HITs with a free slot), with the
    batch, its benchmark and the worker's standing with the benchmark's test.

    The per-HIT rules of the claim (``hits.services.queue._claimable_shape``) become anti-joins the
    planner can hash: the worker's assignments, the HITs holding a candidate they judged or hold in
    a live claim, and the done targets of benchmarks with an open batch (by the (benchmark, stage)
    index) are each read once rather than probed once per HIT; no table of targets is joined. At
    50,000 open HITs it ran in about 15 ms (warm cache) on a development machine. Built once per
    process and ``sql_dialect``, whose placeholders differ (``typed``)."""
    # The crowds whose workers claim here (the local queue); names are plain words (crowds.interface).
    queue = ", ".join(f"'{name}'" for name in queue_backend_names())
    hit, batch, benchmark, target, assignment, item, label, reservation, test, attempt, worker = (
        model._meta.db_table
        for model in (
            HIT,
            Batch,
            Benchmark,
            Target,
            Assignment,
            HITItem,
            Label,
            HITReservation,
            QualificationTest,
            QualificationAttempt,
            Worker,
        )
    )
    now = typed(Assignment._meta.get_field("deadline"))
    return f"""
        WITH seen AS (
            SELECT l.candidate_id FROM {label} l WHERE l.worker_id = %s
            UNION
            SELECT hi.candidate_id FROM {assignment} a JOIN {item} hi ON hi.hit_id = a.hit_id
            WHERE a.worker_id = %s AND a.status = '{AssignmentStatus.CLAIMED}' AND a.deadline > {now}
              AND hi.candidate_id IS NOT NULL
        ),
        judged AS (
            SELECT DISTINCT i.hit_id FROM {item} i JOIN seen ON seen.candidate_id = i.candidate_id
        ),
        open_hits AS (
            SELECT h.batch_id, h.reserved
            FROM {hit} h
            JOIN {batch} b ON b.id = h.batch_id
            JOIN {benchmark} bm ON bm.id = b.benchmark_id
            WHERE b.status = '{BatchStatus.OPEN}' AND b.backend IN ({queue}) AND b.paused_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM {worker} w WHERE w.id = %s AND w.blocked)
              AND h.target_id NOT IN (
                  SELECT t.id FROM {target} t JOIN {batch} ob ON ob.benchmark_id = t.benchmark_id
                  WHERE ob.status = '{BatchStatus.OPEN}' AND ob.backend IN ({queue})
                    AND t.stage = '{TargetStage.DONE}'
              )
              AND h.assignments_active < h.assignments_required
              AND (NOT h.reserved OR h.id IN (SELECT r.hit_id FROM {reservation} r WHERE r.worker_id = %s))
              AND h.id NOT IN (SELECT a.hit_id FROM {assignment} a WHERE a.worker_id = %s)
              AND NOT (bm.distinct_workers_per_candidate AND h.id IN (SELECT hit_id FROM judged))
        ),
        counted AS (
            -- Whether any of them is reserved, as both databases aggregate it (SQLite has no BOOL_OR).
            SELECT batch_id, COUNT(*) AS hits_left, MAX(CASE WHEN reserved THEN 1 ELSE 0 END) AS assigned
            FROM open_hits GROUP BY batch_id
        )
        SELECT b.id, b.title, b.step, b.reward, b.assignment_duration, bm.name, bm.title, bm.scheme,
               c.hits_left, c.assigned, q.id, qa.submitted_at, qa.passed
        FROM counted c
        JOIN {batch} b ON b.id = c.batch_id
        JOIN {benchmark} bm ON bm.id = b.benchmark_id
        LEFT JOIN {test} q ON q.benchmark_id = bm.id AND q.active
        LEFT JOIN {attempt} qa ON qa.test_id = q.id AND qa.worker_id = %s
        ORDER BY b.id
    """


def _standing(*, test_id: int | None, submitted_at: datetime | None, passed: bool | None) -> str:
    if test_id is None:
        return Qualification.NONE
    if submitted_at is None or passed is None:
        return Qualification.NEEDED
    return Qualification.PASSED if passed else Qualification.FAILED


def work_projects(*, worker: Worker, now: datetime | None = None) -> list[Project]:
    """The projects with HITs left for ``worker``, oldest batch first (the order of the claim).

    One statement whatever the number of batches or HITs (``_projects_sql``); none for a blocked
    worker, whom the queue gives nothing. A project whose test
    the worker failed is listed too (``Qualification.FAILED``), so a page can say why its HITs never
    come; it is not ``startable``.
    """
    now = now or timezone.now()
    params = [worker.pk, worker.pk, now, worker.pk, worker.pk, worker.pk, worker.pk]
    with connection.cursor() as cursor:
        execute(cursor, _projects_sql(dialect()), params)
        rows = cursor.fetchall()
    projects = []
    for (
        batch_id,
        batch_title,
        step,
        reward,
        duration,
        benchmark_name,
        benchmark_title,
        scheme_name,
        hits_left,
        assigned,
        test_id,
        submitted_at,
        passed,
    ) in rows:
        # PostgreSQL returns an interval and a numeric; SQLite a count of microseconds and a number.
        if not isinstance(duration, timedelta):
            duration = timedelta(microseconds=int(duration))
        reward = Decimal(str(reward)) if reward is not None else None
        projects.append(
            Project(
                batch_id=batch_id,
                title=title_of_project(batch_title, benchmark_title, benchmark_name),
                summary=get_scheme(scheme_name, step=step).page.summary,
                benchmark_name=benchmark_name,
                benchmark_title=benchmark_title or benchmark_name,
                reward=reward if reward else None,
                time_allowed=duration,
                hits_left=int(hits_left),
                qualification=_standing(test_id=test_id, submitted_at=submitted_at, passed=passed),
                assigned=bool(assigned),
            )
        )
    return projects


def title_of_project(batch_title: str, benchmark_title: str, benchmark_name: str) -> str:
    """The name an annotator knows a batch by: its own title, unless the researcher left the field's
    default (the same for every batch), then its benchmark's title or name."""
    if batch_title and batch_title != _DEFAULT_TITLE:
        return batch_title
    return benchmark_title or benchmark_name
