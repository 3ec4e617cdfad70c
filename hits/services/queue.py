"""The local work queue: claim, submit, return and expire assignments (docs/design.md §3, §4).

Every function here keeps ``HIT.assignments_active`` exact, through ``hits.slots`` (the one
module that writes it; it says what the counter counts). How each function
locks is written in its docstring; rows are always locked in the same order (worker, then
assignment, then HIT) so two operations never wait on each other in a circle.
"""

from __future__ import annotations

import functools
import logging
import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.utils import timezone

from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Label, Target, TargetStage, Worker
from annotation.refresh_requests import refresh_touch
from annotation.services import candidates_propose
from annotation.tallies import tallies_labels_collected, tallies_validity_changed
from crowdlex.dialect import Dialect, dialect
from crowdlex.sql import execute, insert_rows, instances, kept_cursor, select_columns, typed, update_row
from crowds.interface import ARRIVAL_QUEUE, get_backend, queue_backend_names
from hits.models import (
    HIT,
    SUBMITTED_STATUSES,
    VALID_STATUSES,
    Answer,
    Assignment,
    AssignmentDraft,
    AssignmentStatus,
    Batch,
    BatchStatus,
    HITItem,
    HITReservation,
    Mitigations,
    QualificationAttempt,
    QualificationTest,
)
from hits.selectors.annotator import HitPart
from hits.services.drafts import draft_seconds, drafts_delete
from hits.services.guards import pledge_check, telemetry_store
from hits.slots import slot_retake, slot_take, slot_take_sql, slots_release
from hits.telemetry import Telemetry
from schemes import get_scheme
from schemes.base import CleanAnswer, ItemRef

logger = logging.getLogger(__name__)

# Expired claims are released in chunks so the expiry task never holds many row locks at once.
EXPIRE_CHUNK = 500
# On PostgreSQL a claim is one statement (``_claim_statement``); the tests switch it off to run the
# portable path, which SQLite takes.
CLAIM_IN_ONE_STATEMENT = True


class SubmissionRefused(ValidationError):
    """The assignment cannot take answers any more (returned, or expired and its HIT is full)."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message, code=code)


def _literal(value: str) -> str:
    """A string constant of the code (a status, a backend) as an SQL literal."""
    return "'" + str(value).replace("'", "''") + "'"


@functools.cache
def _claimable_shape(
    *, scoped_batch: bool, scoped_benchmark: bool, in_hand: int, sql_dialect: Dialect, avoided: bool = False
) -> str:
    """The claim's statement for one shape of parameters (``_claimable_sql``), built once per process.

    The states it filters on (open, local, done) are written into it as constants, not passed as
    parameters: PostgreSQL plans a prepared statement once for all values of its parameters (a
    generic plan) only when that plan is as good as one for the values at hand, and with the states
    as parameters it could not tell how many rows they select, so it planned the claim anew on
    every execution (over a millisecond, more than running it).

    ``avoided``: the statement takes a batch to pass over (the one whose HIT the worker just
    returned) and walks the index three times in turn, each a range of it in the claim's order: the
    batches before that one, those after it, and only then that batch itself. Each walk runs only
    when the walks before it found nothing (a one-time filter), and each locks at most one row.
    """
    hit, batch, benchmark, target, assignment, item, label, reservation, test, attempt = (
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
        )
    )
    scope = (" AND b.id = %s" if scoped_batch else "") + (" AND b.benchmark_id = %s" if scoped_benchmark else "")
    judged = f"EXISTS (SELECT 1 FROM {label} l WHERE l.candidate_id = i.candidate_id AND l.worker_id = %s)"
    if in_hand:
        judged = f"({judged} OR i.candidate_id IN ({', '.join(['%s'] * in_hand)}))"
    lock = sql_dialect.row_lock(of="h", skip_locked=True)

    # The crowds whose workers claim here (the local queue).
    queue = ", ".join(_literal(name) for name in queue_backend_names())

    def pick(where: str) -> str:
        return f"""
        SELECT h.id, b.assignment_duration
        FROM {hit} h
        JOIN {batch} b ON b.id = h.batch_id
        JOIN {benchmark} bm ON bm.id = b.benchmark_id
        JOIN {target} t ON t.id = h.target_id
        WHERE b.status = {_literal(BatchStatus.OPEN)} AND b.backend IN ({queue})
          AND b.paused_at IS NULL
          AND t.stage <> {_literal(TargetStage.DONE)}{scope}{where}
          AND h.assignments_active < h.assignments_required
          AND (NOT h.reserved OR EXISTS (SELECT 1 FROM {reservation} r WHERE r.hit_id = h.id AND r.worker_id = %s))
          AND NOT EXISTS (SELECT 1 FROM {assignment} a WHERE a.hit_id = h.id AND a.worker_id = %s)
          AND NOT EXISTS (
              SELECT 1 FROM {test} q
              WHERE q.benchmark_id = b.benchmark_id AND q.active AND NOT EXISTS (
                  SELECT 1 FROM {attempt} qa WHERE qa.test_id = q.id AND qa.worker_id = %s AND qa.passed
              )
          )
          AND NOT EXISTS (
              SELECT 1 FROM {item} i
              WHERE i.hit_id = h.id AND bm.distinct_workers_per_candidate AND {judged}
          )
        ORDER BY h.batch_id, h.assignments_active DESC, h.id
        LIMIT 1{lock}
    """

    if not avoided:
        return pick("")
    return f"""
        WITH older AS ({pick(" AND h.batch_id < %s")}),
        newer AS ({pick(" AND h.batch_id > %s AND NOT EXISTS (SELECT 1 FROM older)")}),
        avoided AS ({pick(" AND h.batch_id = %s AND NOT EXISTS (SELECT 1 FROM older UNION ALL SELECT 1 FROM newer)")})
        SELECT id, assignment_duration FROM older
        UNION ALL SELECT id, assignment_duration FROM newer
        UNION ALL SELECT id, assignment_duration FROM avoided
    """


def _claimable_sql(
    *,
    worker_id: int,
    batch_id: int | None,
    benchmark_id: int | None,
    in_hand: list[int],
    avoid_batch_id: int | None = None,
) -> tuple[str, list[Any]]:
    """The statement that locks the next HIT ``worker_id`` may take and gives its id and assignment
    duration, with its parameters.

    Written in SQL because it is the hottest query of the platform and the ORM
    spends several times longer building it than Postgres spends running it. It walks the
    partial index ``hit_claim_order`` (older batches first, the fullest HITs first, full HITs
    absent) and stops at the first HIT it can lock with ``FOR UPDATE SKIP LOCKED`` that passes
    the rules. A reserved HIT passes only for a worker it is reserved for (one index probe, made
    only for reserved HITs). A HIT of a benchmark with an active qualification test passes only
    for a worker whose attempt passed (two unique-index probes). The distinct-workers rule is a
    correlated NOT EXISTS over the HIT's items and their labels by this worker, so each HIT
    walked costs a dozen index probes however many
    labels the worker has given. SQLite (the embedded default) has no row locks: there the
    clause is left out, as the ORM's select_for_update does.
    """
    sql = _claimable_shape(
        scoped_batch=batch_id is not None,
        scoped_benchmark=benchmark_id is not None,
        in_hand=len(in_hand),
        sql_dialect=dialect(),
        avoided=avoid_batch_id is not None,
    )
    scope = [value for value in (batch_id, benchmark_id) if value is not None]
    rules = [worker_id, worker_id, worker_id, worker_id, *in_hand]
    if avoid_batch_id is None:
        return sql, [*scope, *rules]
    return sql, [*scope, avoid_batch_id, *rules] * 3


# The claim's own values (``_claim_statement``); its other columns take their fields' defaults.
_CLAIM_GIVEN = frozenset({"worker_id", "status", "claimed_at", "deadline"})


@functools.cache
def _claim_shape(sql: str) -> tuple[str, tuple[Any, ...], tuple[tuple[Any] | None, ...]]:
    """The statement of ``_claim_statement`` around ``sql``, the fields whose values it takes after
    those of ``sql``, in order, and for each the value of its default as the database takes it
    (in a tuple), when that is the same on every claim: a constant default of a field the claim
    does not give (None for the others: given, or a default computed per call). Built once per
    process and shape: preparing every default on each claim was a tenth of the claim's Python."""
    hit, assignment = HIT._meta.db_table, Assignment._meta.db_table
    columns, expressions, fields = [], [], []
    for field in Assignment._meta.concrete_fields:
        if field.primary_key:
            continue
        columns.append(connection.ops.quote_name(field.column or field.attname))
        if field.attname == "hit_id":
            expressions.append("taken.id")
            continue
        # Typed: PostgreSQL infers the parameters' types when it prepares the statement (crowdlex.sql).
        expressions.append(
            f"{typed(field)} + taken.assignment_duration" if field.attname == "deadline" else typed(field)
        )
        fields.append(field)
    statement = f"""
        WITH pick AS ({sql}),
        taken AS (
            UPDATE {hit} h SET {slot_take_sql("h")} FROM pick
            WHERE h.id = pick.id RETURNING h.id, pick.assignment_duration
        )
        INSERT INTO {assignment} ({", ".join(columns)})
        SELECT {", ".join(expressions)} FROM taken
        RETURNING id, hit_id, deadline
    """
    constants = tuple(
        None
        if field.attname in _CLAIM_GIVEN or (field.has_default() and callable(field.default))
        else (field.get_db_prep_save(field.get_default(), connection),)
        for field in fields
    )
    return statement, tuple(fields), constants


def _claim_statement(sql: str, params: list[Any], *, worker_id: int, now: datetime) -> tuple[str, list[Any]]:
    """One PostgreSQL statement that locks the HIT ``sql`` picks, takes its slot and inserts the
    claim, returning the claim's id, HIT and deadline: the three steps of ``_claim_in_steps`` in one
    round trip. The claim's other columns get their fields' defaults."""
    statement, fields, constants = _claim_shape(sql)
    given = {"worker_id": worker_id, "status": AssignmentStatus.CLAIMED, "claimed_at": now, "deadline": now}
    # The connection itself, not the proxy: preparing a value reads it several times.
    database = connections[DEFAULT_DB_ALIAS]
    values = [
        constant[0]
        if constant is not None
        else field.get_db_prep_save(given[field.attname] if field.attname in given else field.get_default(), database)
        for field, constant in zip(fields, constants, strict=True)
    ]
    return statement, [*params, *values]


def _claim(
    *,
    worker: Worker,
    batch_id: int | None,
    benchmark_id: int | None,
    in_hand: list[int],
    now: datetime,
    avoid_batch_id: int | None = None,
) -> Assignment | None:
    """Lock the next HIT ``worker`` may take, take one of its slots and insert the claim; None when
    there is none. On PostgreSQL one statement (``_claim_statement``); elsewhere three."""
    sql, params = _claimable_sql(
        worker_id=worker.pk,
        batch_id=batch_id,
        benchmark_id=benchmark_id,
        in_hand=in_hand,
        avoid_batch_id=avoid_batch_id,
    )
    if not CLAIM_IN_ONE_STATEMENT or not dialect().chains_writes:
        return _claim_in_steps(sql, params, worker=worker, now=now)
    statement, values = _claim_statement(sql, params, worker_id=worker.pk, now=now)
    with kept_cursor() as cursor:
        execute(cursor, statement, values)
        row = cursor.fetchone()
    if row is None:
        return None
    assignment_id, hit_id, deadline = row
    claimed = Assignment(id=assignment_id, hit_id=hit_id, worker=worker, claimed_at=now, deadline=deadline)
    claimed._state.adding = False
    claimed._state.db = connection.alias
    return claimed


def _claim_in_steps(sql: str, params: list[Any], *, worker: Worker, now: datetime) -> Assignment | None:
    with connection.cursor() as cursor:
        execute(cursor, sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    hit_id, duration = row
    # Postgres returns an interval; SQLite stores a DurationField as microseconds.
    if not isinstance(duration, timedelta):
        duration = timedelta(microseconds=int(duration))
    # Under the row lock just taken; the check constraint would refuse an overflow anyway.
    slot_take(hit_id=hit_id)
    return Assignment.objects.create(
        hit_id=hit_id, worker=worker, status=AssignmentStatus.CLAIMED, claimed_at=now, deadline=now + duration
    )


def _in_scope(assignment: Assignment, *, batch: Batch | None, benchmark: Benchmark | None) -> bool:
    hit_batch = assignment.hit.batch
    if get_backend(hit_batch.backend).arrival != ARRIVAL_QUEUE:
        return False
    if batch is not None and hit_batch.pk != batch.pk:
        return False
    return benchmark is None or hit_batch.benchmark_id == benchmark.pk


def assignment_claim_next(
    *,
    worker: Worker,
    batch: Batch | None = None,
    benchmark: Benchmark | None = None,
    now: datetime | None = None,
    avoid_batch: Batch | int | None = None,
    savepoint: bool = True,
) -> Assignment | None:
    """Give ``worker`` a slot on the next available local HIT, or None when there is no work.

    A HIT is available when its batch is open, not paused and local (and is ``batch`` / belongs to
    ``benchmark`` when given), its target is not done (``hits.selectors.OFFERED_HIT``), it has a
    free slot (``assignments_active < assignments_required``), it is not reserved for other
    annotators (``HITReservation``: assigned work goes only to the annotators named for it),
    the worker never had an assignment on it, the worker passed the benchmark's qualification test
    if it has an active one (``hits.qualification``), and, when the benchmark asks for distinct workers
    per candidate (docs/design.md §3), none of its candidates was judged by the worker (a label of
    theirs) or sits in another HIT they hold right now. A blocked worker gets nothing. When the
    worker already holds a live claim in the same scope, that claim is returned (resume) and
    no second slot is taken; their own overdue claims are expired on the way.

    ``avoid_batch`` (the batch of a HIT the worker just returned) is passed over while any other
    batch in scope has a HIT for them, and taken from only when none has (docs/design.md §11: a
    return never hands back the same project while another waits). Still one statement, which
    walks the index in up to three ranges (``_claimable_shape``); without it, the statement is
    the usual one.

    Locking: the worker's row is locked first (``FOR NO KEY UPDATE``), which serialises one
    worker's claims (a double click cannot take two slots) and reads ``blocked`` fresh. Then a
    single indexed query walks open HITs, older batches first and the fullest HITs first (index
    ``hit_claim_order``), and locks the first eligible HIT row with ``FOR UPDATE SKIP LOCKED``:
    concurrent claimers step over each other's rows instead of queueing, and only one HIT row
    is ever locked. Postgres re-checks the free-slot condition on the locked row, the counter
    is incremented under that lock, and the check constraint and the unique (hit, worker)
    constraint back both rules in the database.
    """
    now = now or timezone.now()
    if settings.EXPIRE_CLAIMS_ON_REQUEST:
        # No beat process expires claims here (the embedded default): the request does.
        assignments_expire_overdue(now=now)
    worker_table, assignment_table = Worker._meta.db_table, Assignment._meta.db_table
    lock = dialect().row_lock(no_key=True)
    # ``savepoint=False`` from a caller whose transaction this joins (the API's claim reads the
    # HIT's page in the same one): nothing here catches a database error, so that transaction fails
    # with it as a whole.
    with transaction.atomic(savepoint=savepoint):
        with kept_cursor() as cursor:
            execute(cursor, f"SELECT blocked FROM {worker_table} WHERE id = %s{lock}", [worker.pk])
            row = cursor.fetchone()
            if row is None or row[0]:
                return None
            # Usually empty; the HIT and batch of a held claim are loaded only when there is one.
            execute(
                cursor,
                f"SELECT {select_columns((Assignment, 'a'))} FROM {assignment_table} a"
                " WHERE a.worker_id = %s AND a.status = %s ORDER BY a.claimed_at, a.id",
                [worker.pk, AssignmentStatus.CLAIMED],
            )
            held: list[Assignment] = [instances(row, (Assignment, "a"))[0] for row in cursor.fetchall()]
        overdue = [assignment.pk for assignment in held if assignment.deadline <= now]
        if overdue:
            _release_claims(assignment_ids=overdue, status=AssignmentStatus.EXPIRED)
        live = [assignment for assignment in held if assignment.deadline > now]
        for assignment in live:
            if _in_scope(assignment, batch=batch, benchmark=benchmark):
                return assignment

        in_hand = (
            list(
                HITItem.objects.filter(
                    hit_id__in=[assignment.hit_id for assignment in live], candidate__isnull=False
                ).values_list("candidate_id", flat=True)
            )
            if live
            else []
        )
        return _claim(
            worker=worker,
            batch_id=batch.pk if batch is not None else None,
            benchmark_id=benchmark.pk if benchmark is not None else None,
            in_hand=in_hand,
            now=now,
            avoid_batch_id=avoid_batch.pk if isinstance(avoid_batch, Batch) else avoid_batch,
        )


def _bounded_seconds(seconds_on_page: float | None, *, claimed_at: datetime, now: datetime) -> float:
    """Time on page as measured by the page, never beyond the time since the claim.

    Without a figure from the page (API clients), the time since the claim stands in.
    """
    elapsed = max(0.0, (now - claimed_at).total_seconds())
    if seconds_on_page is None or not math.isfinite(seconds_on_page):
        return elapsed
    return min(max(0.0, float(seconds_on_page)), elapsed)


def assignment_submit(
    *,
    assignment: Assignment,
    answers: Mapping[Any, Any],
    seconds_on_page: float | None = None,
    now: datetime | None = None,
    worker: Worker | None = None,
    telemetry: Telemetry | None = None,
    pledged: bool = False,
    savepoint: bool = True,
) -> Assignment:
    """Store the answers of one assignment: one Answer per item, one Label per candidate item, and
    the candidates it proposes (``candidates_propose``: the generation task).

    ``answers`` maps every HITItem id of the HIT to an answer the benchmark's scheme accepts (keys
    may be digit strings, as they come from forms and JSON); the scheme checks them
    (``clean_answers``: anything else raises ``AnswersInvalid`` and stores nothing), says which
    labels they add and how the control checks went (``judgments``), and the assignment becomes
    submitted. Work saved from a crowd's page (it carries the crowd's assignment id) keeps only
    its answers: it counts for nothing (no labels, controls or refresh) until a sync confirms it
    (``assignment_confirm``), and holds no slot (the crowd decides who takes its HITs).

    Idempotent: the assignment row is locked (``FOR UPDATE``, waiting, not skipping) so a
    double click or a retry waits for the first submit and then finds it submitted; it is
    returned unchanged and nothing more is stored. The unique constraints on (assignment, item)
    and (assignment, candidate) back this in the database.

    A claim that is overdue but not yet expired still holds its slot and is accepted. A claim
    already expired gets its slot back only if the HIT still needs it: a conditional UPDATE of
    ``assignments_active`` (row count checked) re-takes the slot; otherwise ``SubmissionRefused``
    says so and nothing is stored. A returned assignment is refused.

    With ``worker``, only that worker's assignment is taken (``Assignment.DoesNotExist``
    otherwise): the ownership check of an entry point rides on the locking read, and only
    ``assignment.pk`` is read from ``assignment``.

    ``telemetry`` (``hits.telemetry``, checked by the caller) is stored with the answers. When the
    benchmark asks for a pledge before the first HIT (``Mitigations.pledge``) and the worker has not made
    one, the answers are refused (``PledgeMissing``) unless ``pledged``, which records it.

    ``savepoint=False`` from a caller whose transaction this joins (the annotator's API and page run
    a request in one transaction, ``crowdlex.transactions``): whatever this raises, that
    transaction is then rolled back as a whole, so nothing of the refused submit is stored.
    """
    submitted, _ = _submit(
        assignment=assignment,
        answers=answers,
        seconds_on_page=seconds_on_page,
        now=now,
        worker=worker,
        telemetry=telemetry,
        pledged=pledged,
        savepoint=savepoint,
        with_part=False,
    )
    return submitted


def assignment_submit_with_part(
    *,
    assignment: Assignment,
    answers: Mapping[Any, Any],
    seconds_on_page: float | None = None,
    now: datetime | None = None,
    worker: Worker | None = None,
    telemetry: Telemetry | None = None,
    pledged: bool = False,
    savepoint: bool = True,
) -> tuple[Assignment, HitPart]:
    """``assignment_submit``, and which part of its target's HITs in the batch the HIT is, with the
    word (``hits.selectors.hit_part``): what the annotator's page says after a submit, read by the
    submit's locking statement instead of a statement of its own (docs/design.md §4). The API's
    submit, which says nothing of it, reads the statement without it."""
    submitted, part = _submit(
        assignment=assignment,
        answers=answers,
        seconds_on_page=seconds_on_page,
        now=now,
        worker=worker,
        telemetry=telemetry,
        pledged=pledged,
        savepoint=savepoint,
        with_part=True,
    )
    assert part is not None
    return submitted, part


def _submit(
    *,
    assignment: Assignment,
    answers: Mapping[Any, Any],
    seconds_on_page: float | None,
    now: datetime | None,
    worker: Worker | None,
    telemetry: Telemetry | None,
    pledged: bool,
    savepoint: bool,
    with_part: bool,
) -> tuple[Assignment, HitPart | None]:
    now = now or timezone.now()
    with transaction.atomic(savepoint=savepoint):
        locked, part = _locked_for_submit(
            assignment_id=assignment.pk, worker_id=worker.pk if worker is not None else None, with_part=with_part
        )
        if locked.status in SUBMITTED_STATUSES:
            return locked, part
        if locked.status == AssignmentStatus.RETURNED:
            raise SubmissionRefused(
                "You returned this HIT, so it can no longer be submitted. Your answers were not saved.",
                code="returned",
            )
        batch = locked.hit.batch
        scheme = get_scheme(batch.benchmark, step=batch.step)
        items = _items(hit_id=locked.hit_id)
        cleaned = scheme.clean_answers(items=items, answers=answers, settings=scheme.settings(batch.benchmark))
        crowd = bool(locked.external_id)
        if not crowd and locked.status == AssignmentStatus.EXPIRED and not slot_retake(hit_id=locked.hit_id):
            raise SubmissionRefused(
                "Your time for this HIT ran out and other annotators have since completed it, "
                "so your answers could not be saved. Please take the next HIT.",
                code="expired_and_full",
            )
        mitigations: Mitigations | None = getattr(batch.benchmark, "mitigations", None)
        required = mitigations is not None and mitigations.pledge
        pledge_check(assignment=locked, benchmark=batch.benchmark, pledged=pledged, required=required)
        telemetry_store(assignment=locked, telemetry=telemetry)
        insert_rows(
            Answer,
            [
                {
                    "assignment_id": locked.pk,
                    "item_id": item.id,
                    "value": cleaned[item.id].value,
                    "data": cleaned[item.id].data,
                }
                for item in items
            ],
        )
        locked.status = AssignmentStatus.SUBMITTED
        locked.submitted_at = now
        # The page's own count already holds every view it knew of; the server's total holds the
        # views of other devices (docs/design.md §4): the larger stands, never a sum of the two.
        kept = draft_seconds(assignment=locked, now=now)
        locked.seconds_on_page = _bounded_seconds(seconds_on_page, claimed_at=locked.claimed_at, now=now)
        if kept is not None:
            if seconds_on_page is None or kept > locked.seconds_on_page:
                locked.seconds_on_page = kept
            drafts_delete(assignment_ids=[locked.pk])
        fields = ["status", "submitted_at", "seconds_on_page"]
        if not crowd:
            _judge(assignment=locked, items=items, answers=cleaned)
            fields += ["controls_total", "controls_correct"]
        update_row(locked, fields)
    return locked, part


# The assignment, its HIT, batch, benchmark, the benchmark's mitigations (a benchmark without them
# has no row) and the assignment's draft (docs/design.md §4; most have none): what a submit reads, in
# one statement.
_SUBMIT_PARTS = (
    (Assignment, "a"),
    (HIT, "h"),
    (Batch, "b"),
    (Benchmark, "bm"),
    (Mitigations, "m"),
    (AssignmentDraft, "dr"),
)


def _locked_for_submit(
    *, assignment_id: int, worker_id: int | None, with_part: bool = False
) -> tuple[Assignment, HitPart | None]:
    """The assignment locked (``FOR UPDATE``, waiting), with its HIT, batch, benchmark and mitigations
    loaded: ``select_related`` written out, as the ORM took over a millisecond to build it on every
    submit. ``Assignment.DoesNotExist`` if there is none (of ``worker_id``, when given).

    ``with_part``: the same row also carries the target's word and how many HITs of the batch the
    target has, for the HIT's ``HitPart`` (else None): another shape of the statement, prepared apart,
    so the submits that do not need them (the API's) read neither."""
    assignment, hit, batch, benchmark, mitigations, draft = (model._meta.db_table for model, _ in _SUBMIT_PARTS)
    mine = " AND a.worker_id = %s" if worker_id is not None else ""
    lock = dialect().row_lock(of="a")
    part_columns, part_join = "", ""
    if with_part:
        part_columns = (
            f", t.word, (SELECT COUNT(*) FROM {hit} p WHERE p.batch_id = h.batch_id AND p.target_id = h.target_id)"
        )
        part_join = f" JOIN {Target._meta.db_table} t ON t.id = h.target_id"
    with kept_cursor() as cursor:
        execute(
            cursor,
            f"SELECT {select_columns(*_SUBMIT_PARTS)}{part_columns} FROM {assignment} a"
            f" JOIN {hit} h ON h.id = a.hit_id JOIN {batch} b ON b.id = h.batch_id"
            f" JOIN {benchmark} bm ON bm.id = b.benchmark_id LEFT JOIN {mitigations} m ON m.benchmark_id = bm.id"
            f" LEFT JOIN {draft} dr ON dr.assignment_id = a.id{part_join}"
            f" WHERE a.id = %s{mine}{lock}",
            [assignment_id] if worker_id is None else [assignment_id, worker_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise Assignment.DoesNotExist("Assignment matching query does not exist.")
    # The part's two columns, when read, come after the models' (which ``instances`` reads alone).
    locked, locked_hit, locked_batch, locked_benchmark, locked_mitigations, locked_draft = instances(
        row, *_SUBMIT_PARTS
    )
    part: HitPart | None = None
    if with_part:
        word, parts = row[-2:]
        # As ``hits.selectors.hit_part`` reads them: the part counted from 1.
        part = HitPart(word=word, part=locked_hit.part + 1, parts=parts or 0)
    Assignment.draft.related.set_cached_value(locked, locked_draft)  # type: ignore[attr-defined]
    Assignment.hit.field.set_cached_value(locked, locked_hit)
    HIT.batch.field.set_cached_value(locked_hit, locked_batch)
    Batch.benchmark.field.set_cached_value(locked_batch, locked_benchmark)
    # None for a benchmark without mitigations: reading them then raises, as after select_related.
    Benchmark.mitigations.related.set_cached_value(locked_benchmark, locked_mitigations)  # type: ignore[attr-defined]
    return locked, part


def _items(*, hit_id: int) -> list[ItemRef]:
    table = HITItem._meta.db_table
    with kept_cursor() as cursor:
        execute(
            cursor,
            f"SELECT id, kind, text, candidate_id, control FROM {table} WHERE hit_id = %s ORDER BY position",
            [hit_id],
        )
        rows = cursor.fetchall()
    return [ItemRef(pk, kind, text, candidate, bool(control)) for pk, kind, text, candidate, control in rows]


def _judge(*, assignment: Assignment, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> None:
    """Answers become judgments: the scheme's labels of one submitted assignment, its control checks
    (set on ``assignment``, for the caller to save) and the pipeline's refresh. The one path for it:
    the local submit calls it at once, a crowd's work at confirmation (``assignment_confirm``).
    Call in a transaction holding the assignment's lock."""
    batch = assignment.hit.batch
    judgments = get_scheme(batch.benchmark, step=batch.step).judgments(items=items, answers=answers)
    insert_rows(
        Label,
        [
            {
                "candidate_id": label.candidate_id,
                "benchmark_id": batch.benchmark_id,
                "value": label.value,
                "step": batch.step,
                "worker_id": assignment.worker_id,
                "assignment_id": assignment.pk,
            }
            for label in judgments.labels
        ],
    )
    tallies_labels_collected(
        assignment_id=assignment.pk,
        worker_id=assignment.worker_id,
        benchmark_id=batch.benchmark_id,
        labels=len(judgments.labels),
    )
    if judgments.candidates:
        candidates_propose(
            target_id=assignment.hit.target_id,
            benchmark_id=batch.benchmark_id,
            proposals=[(proposed.text, proposed.source) for proposed in judgments.candidates],
        )
    assignment.controls_total = judgments.checks_total
    assignment.controls_correct = judgments.checks_correct
    # The refresh of this worker's work, coalesced with the other submits' (one queued at a time).
    refresh_touch(
        benchmark_id=batch.benchmark_id, worker_ids=[assignment.worker_id], target_ids=[assignment.hit.target_id]
    )


def assignment_confirm(*, assignment: Assignment, external_status: str) -> bool:
    """The crowd vouches for work saved from its page: it lists this assignment under the same worker
    and HIT, in ``external_status``. The stored answers become judgments now (labels, control checks,
    the pipeline's refresh) and the work takes one of its HIT's slots; if the HIT has none left (it
    was re-collected meanwhile), the work is kept filtered as surplus. True if newly confirmed.

    Locking: the assignment row (``FOR UPDATE``), then the HIT's counter by a conditional UPDATE.
    """
    with transaction.atomic():
        locked = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("hit__batch__benchmark")
            .get(pk=assignment.pk)
        )
        if locked.external_status or locked.external_unknown or locked.status not in SUBMITTED_STATUSES:
            return False
        locked.external_status = external_status
        if not locked.filtered and locked.status in VALID_STATUSES and not slot_retake(hit_id=locked.hit_id):
            locked.filtered = True
        answers = {
            item_id: CleanAnswer(value, data)
            for item_id, value, data in Answer.objects.filter(assignment=locked).values_list("item_id", "value", "data")
        }
        _judge(assignment=locked, items=_items(hit_id=locked.hit_id), answers=answers)
        locked.save(update_fields=["external_status", "filtered", "controls_total", "controls_correct"])
        tallies_validity_changed(assignment_ids=[locked.pk])
    return True


def assignment_return(*, assignment: Assignment, telemetry: Telemetry | None = None) -> Assignment:
    """The worker gives the HIT back: a live claim becomes returned and its slot goes back to the pool.
    The page's ``telemetry`` is kept with it (how a HIT that was given back had been worked on).

    Locking: the assignment row is locked (``FOR UPDATE``) and the HIT counter is decremented in
    the same transaction, so a return racing a submit or the expiry task happens at most once.
    Returning an assignment that is already returned or expired changes nothing; a submitted
    one cannot be returned (``SubmissionRefused``).
    """
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status == AssignmentStatus.CLAIMED:
            _release_claims(assignment_ids=[locked.pk], status=AssignmentStatus.RETURNED)
            locked.status = AssignmentStatus.RETURNED
            telemetry_store(assignment=locked, telemetry=telemetry)
        elif locked.status in SUBMITTED_STATUSES:
            raise SubmissionRefused("This HIT is already submitted and cannot be returned.", code="submitted")
    return locked


def _release_claims(*, assignment_ids: list[int], status: str) -> int:
    """Move live claims to ``status`` and give their slots back; call inside a transaction.

    Only rows still ``claimed`` change (the UPDATE re-checks the status), and each HIT's counter
    drops by exactly the number of its local rows that changed. HITs are updated in id order so two
    concurrent releases lock HIT rows in the same order.
    """
    changed = list(
        Assignment.objects.filter(pk__in=assignment_ids, status=AssignmentStatus.CLAIMED)
        .select_for_update()
        .values_list("pk", "hit_id", "external_id")
    )
    if not changed:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, _, _ in changed]).update(status=status)
    drafts_delete(assignment_ids=[pk for pk, _, _ in changed])
    # A crowd's claim held no slot (hits.models.HOLDS_SLOT).
    per_hit = Counter(hit_id for _, hit_id, external_id in changed if not external_id)
    slots_release(per_hit)
    # Work in progress shows on the researcher's pages (annotation.changes), the figures of these
    # HITs' targets only; after the HITs' locks.
    hit_ids = sorted({hit_id for _, hit_id, _ in changed})
    targets: dict[int, set[int]] = defaultdict(set)
    for benchmark_id, target_id in HIT.objects.filter(pk__in=hit_ids).values_list("batch__benchmark_id", "target_id"):
        targets[benchmark_id].add(target_id)
    for benchmark_id in sorted(targets):
        benchmark_changed(benchmark_id=benchmark_id, target_ids=targets[benchmark_id])
    return len(changed)


def assignments_expire_overdue(*, now: datetime | None = None) -> int:
    """Expire every claim past its deadline and put its slot back in the pool; returns how many.

    Nothing is deleted: the assignment keeps its row with status ``expired`` (a later submit may
    still be accepted, see ``assignment_submit``). Locking: overdue claims are locked in chunks
    with ``FOR UPDATE SKIP LOCKED``; a claim being submitted at this moment is skipped (its
    submit decides) and picked up by the next run if still claimed. Safe to run concurrently.
    """
    now = now or timezone.now()
    total = 0
    # Bounded: each round either expires a full chunk of distinct rows or is the last one.
    while True:
        with transaction.atomic():
            ids = list(
                Assignment.objects.select_for_update(skip_locked=True)
                .filter(status=AssignmentStatus.CLAIMED, deadline__lte=now)
                .order_by("deadline", "id")
                .values_list("pk", flat=True)[:EXPIRE_CHUNK]
            )
            if ids:
                total += _release_claims(assignment_ids=ids, status=AssignmentStatus.EXPIRED)
        if len(ids) < EXPIRE_CHUNK:
            break
    if total:
        logger.info("expired %d overdue assignments", total)
    return total
