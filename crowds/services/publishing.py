"""Crowd operations: publish, sync, expire, approve, reject, bonus, block, notify (docs/design.md §4, §5).

One function per operation, called by the researcher pages, the API, admin actions, the Celery
beat task and the management commands alike. Each dispatches to the batch's crowd backend
(``crowds.interface``) for the remote part and keeps the domain rules here, the same for every
crowd:

- Work counts and is paid only once the crowd itself has confirmed it: every stored assignment
  is reconciled with the crowd's list; a confirmed one's answers become judgments then
  (``hits.services.assignment_confirm``), and one the crowd does not know is flagged
  (``external_unknown``), filtered, and never approved or given a bonus (a check constraint
  backs the first).
- Filtered work is approved or rejected by the batch's ``filtered_policy``.
- Re-collection: a HIT whose valid assignments fall short is offered again on the crowd
  (``CrowdBackend.recollect``); on the local queue the slot reopens by itself.

No row lock is held across a call to a crowd: remote calls come first and the local state
changes after them are conditional UPDATEs (row counts checked), so a retry or a concurrent
run changes nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.activity import activity_record
from annotation.models import ActivityKind, Worker
from crowdlex.dialect import dialect
from crowdlex.progress import Progress
from crowds.interface import ARRIVAL_LINK, BackendError, CrowdActionRefused, PublishResult, RemoteStatus, get_backend
from hits.budget import BudgetExceeded, budget_release, budget_reserve, hits_cost
from hits.models import (
    HIT,
    Assignment,
    AssignmentStatus,
    Batch,
    BatchStatus,
    BudgetReservation,
    RemoteHIT,
)
from hits.notifications import benchmark_watch
from hits.selectors import OFFERED_HIT
from hits.services.batches import batch_close
from hits.slots import slots_release

logger = logging.getLogger(__name__)

# Where the database has no session locks (SQLite, the embedded default): how long one run may hold
# a batch before another may take it over (a crashed run's lease lapses).
LEASE = timedelta(minutes=15)
# The first key of the PostgreSQL advisory locks that hold batches (the second is the batch id).
BATCH_LOCK_SPACE = 7301
# MTurk gives the assignment's own duration; a claim on this platform lasts a little longer so that a
# worker who submits in the last seconds on MTurk's clock is not turned away by ours.
CLAIM_GRACE = timedelta(minutes=2)


@contextmanager
def _batch_lease(batch: Batch) -> Iterator[bool]:
    """Hold the batch for one publish/sync/expire; yields False if another run holds it.

    The beat task and a researcher's command never talk to the crowd about one batch at the same
    time, and no transaction is held open across network calls. On PostgreSQL the hold is a
    session advisory lock: it ends with the run, or with the connection of a process that dies,
    so a publish killed midway holds nothing and the next run recovers at once. Elsewhere a
    conditional UPDATE takes a lease (``sync_lease_until``, row count checked) that a crashed run
    leaves until it lapses.
    """
    if not _hold(batch):
        yield False
        return
    try:
        yield True
    finally:
        _let_go(batch)


def _hold(batch: Batch) -> bool:
    return dialect().session_hold(BATCH_LOCK_SPACE, batch.pk, lease=partial(_lease_take, batch))


def _lease_take(batch: Batch) -> bool:
    now = timezone.now()
    return bool(
        Batch.objects.filter(pk=batch.pk)
        .filter(Q(sync_lease_until__isnull=True) | Q(sync_lease_until__lte=now))
        .update(sync_lease_until=now + LEASE)
    )


def _let_go(batch: Batch) -> None:
    dialect().session_let_go(BATCH_LOCK_SPACE, batch.pk, lease_end=partial(_lease_end, batch))


def _lease_end(batch: Batch) -> None:
    Batch.objects.filter(pk=batch.pk).update(sync_lease_until=None)


def _busy(batch: Batch) -> str:
    """Why a publish or expire cannot run now, and when to try again."""
    until = Batch.objects.filter(pk=batch.pk).values_list("sync_lease_until", flat=True).first()
    if dialect().holds_end_with_connection or until is None:
        when = "as soon as that run ends (a run that died holds nothing)"
    else:
        when = f"after {timezone.localtime(until):%H:%M:%S}, when a run that died lets go of it"
    return f"{batch} is being published or synced by another run right now; try again {when}"


@contextmanager
def _recorded(batch: Batch, operation: str) -> Iterator[None]:
    """Keep the crowd's last error about this batch on it (``external["last_error"]``), for the
    researcher's page: publishes and syncs often run in the background where no one sees them fail."""
    try:
        yield
    except BackendError as error:
        record = {"operation": operation, "message": str(error), "at": timezone.now().isoformat()}
        Batch.objects.filter(pk=batch.pk).update(external=_merged_external(batch, {"last_error": record}))
        raise
    current = Batch.objects.filter(pk=batch.pk).values_list("external", flat=True).first() or {}
    if current.get("last_error", {}).get("operation") == operation:
        Batch.objects.filter(pk=batch.pk).update(external={k: v for k, v in current.items() if k != "last_error"})


def _merged_external(batch: Batch, values: Mapping[str, Any]) -> dict[str, Any]:
    current = Batch.objects.filter(pk=batch.pk).values_list("external", flat=True).first() or {}
    return {**current, **values}


def _release_slot(*, hit_id: int) -> None:
    """A counted assignment stops counting: its slot reopens (call in a transaction, assignment locked)."""
    slots_release({hit_id: 1})


def _confirmed_by_crowd(assignment: Assignment) -> None:
    if assignment.external_unknown:
        raise CrowdActionRefused(
            f"assignment {assignment.pk} is unknown to the crowd ({assignment.external_id}): it is never paid"
        )
    backend = get_backend(assignment.hit.batch.backend)
    if backend.remote and assignment.external_status != RemoteStatus.SUBMITTED:
        raise CrowdActionRefused(
            f"the crowd has not confirmed assignment {assignment.pk} as submitted yet: sync the batch first"
        )


# -- publishing ---------------------------------------------------------------------------------


def batch_publish(
    *,
    batch: Batch,
    options: Mapping[str, Any] | None = None,
    by: Any = None,
    progress: Progress | None = None,
) -> PublishResult:
    """Offer the batch's HITs on its crowd and open it. Safe to repeat: a retry never duplicates HITs.

    ``options``: the crowd's own publish options (its backend's ``publish_prepare`` checks them and
    keeps them on the batch, where a step-3 batch takes them from: MTurk's ``sandbox`` and
    ``qualifications``, Prolific's ``estimated_minutes`` and ``rejection_category``; docs/mturk.md,
    docs/prolific.md).
    """
    batch = Batch.objects.get(pk=batch.pk)
    if batch.status == BatchStatus.CLOSED:
        raise CrowdActionRefused(f"{batch} is closed; generate a new batch to collect more")
    if not batch.hits.exists():
        raise CrowdActionRefused(f"{batch} has no HITs to publish")
    if batch.paused_at is not None:
        # Posting would hand its work out on the crowd: a paused batch waits (docs/design.md §16).
        raise CrowdActionRefused(f"{batch} is paused: resume it to publish")
    backend = get_backend(batch.backend)
    fields = backend.publish_prepare(batch=batch, options=options or {})
    if fields:
        batch.save(update_fields=sorted(set(fields)))
    reservation = _within_cap(batch)
    try:
        with _batch_lease(batch) as held:
            if not held:
                raise CrowdActionRefused(_busy(batch))
            with _recorded(batch, "publish"):
                result = backend.publish(batch=batch, progress=progress)
        batch.refresh_from_db()
        updates: dict[str, Any] = {}
        if batch.status == BatchStatus.DRAFT:
            updates["status"] = BatchStatus.OPEN
        if backend.remote and "published_at" not in batch.external:
            updates["external"] = {**batch.external, "published_at": timezone.now().isoformat()}
        if updates:
            Batch.objects.filter(pk=batch.pk).update(**updates)
    finally:
        # What was posted now counts as committed by itself; a failed call posted nothing more.
        budget_release(reservation=reservation)
    activity_record(
        benchmark=batch.benchmark_id,
        kind=ActivityKind.PUBLISHED,
        summary=f"batch {batch.pk} published on {batch.get_backend_display()}"
        + (f" ({batch.external['environment']})" if batch.external.get("environment") else "")
        + f": {result.hits_created} HITs created, {result.hits_existing} already there",
        by=by,
        result={
            "batch": batch.pk,
            "backend": batch.backend,
            "hits_created": result.hits_created,
            "hits_existing": result.hits_existing,
        },
    )
    logger.info("%s published: %d HITs created, %d already there", batch, result.hits_created, result.hits_existing)
    benchmark_watch(benchmark=batch.benchmark)
    return result


def _within_cap(batch: Batch) -> BudgetReservation | None:
    """Refuse to publish what would take the benchmark past its budget cap (docs/design.md §16): on a
    crowd the HITs not posted yet, on the local queue a draft's HITs. What passes is reserved under the
    benchmark's lock until the crowd's call is over (``hits.budget.budget_reserve``), so two publishes
    at once cannot both pass. The refusal is kept on the batch (``external["last_error"]``) like a
    crowd's, so a publish the pipeline queued shows why it stopped."""

    if get_backend(batch.backend).remote:
        sizes = list(
            HIT.objects.filter(batch=batch).exclude(remote_hits__round=0).values_list("assignments_required", flat=True)
        )
    elif batch.status == BatchStatus.DRAFT:
        sizes = list(HIT.objects.filter(batch=batch).values_list("assignments_required", flat=True))
    else:
        return None
    try:
        return budget_reserve(
            benchmark=batch.benchmark_id,
            cost=hits_cost(batch=batch, hit_sizes=sizes),
            what=f"publishing {len(sizes)} HITs of batch {batch.pk}",
            batch=batch,
        )
    except BudgetExceeded as error:
        record = {"operation": "publish", "message": str(error), "at": timezone.now().isoformat()}
        Batch.objects.filter(pk=batch.pk).update(external=_merged_external(batch, {"last_error": record}))
        raise CrowdActionRefused(str(error)) from None


def batch_expire(*, batch: Batch, by: Any = None) -> int:
    """Stop offering the batch's HITs now (MTurk: expire every posting) and close the batch.

    Work already accepted may still be submitted and is synced as usual. Returns the number of
    postings expired (on the local queue: the HITs closed).
    """
    batch = Batch.objects.get(pk=batch.pk)
    with _batch_lease(batch) as held:
        if not held:
            raise CrowdActionRefused(_busy(batch))
        expired = get_backend(batch.backend).expire(batch=batch)
    batch_close(batch=batch, by=by)
    return expired


# -- the ExternalQuestion page ------------------------------------------------------------------


def remote_binding(*, hit: HIT, worker_external_id: str, assignment_external_id: str) -> Assignment | None:
    """The assignment a first visit with these ids made on this HIT, if any (a reload writes nothing)."""
    return Assignment.objects.filter(
        hit=hit,
        worker__kind=get_backend(hit.batch.backend).worker_kind,
        worker__external_id=worker_external_id,
        external_id=assignment_external_id,
    ).first()


def assignment_accept_remote(
    *,
    hit: HIT,
    worker_external_id: str,
    assignment_external_id: str,
    hit_external_id: str = "",
    now: datetime | None = None,
) -> Assignment:
    """The assignment a crowd worker accepted on the crowd's site, bound on their first visit.

    The ids come from a URL anyone can write, so the binding made here is pending: it takes no
    slot (the crowd itself enforces how many workers take its HIT), work saved on it counts only
    once a sync finds the assignment under that worker and HIT in the crowd's list, and it never
    keeps anyone out (docs/design.md §4). Pending bindings of one worker on one HIT, or of one
    assignment id, may coexist: a forged visit naming a real worker or a real assignment id makes
    a row of its own, which the sync flags as unknown, and the real worker still gets in. Only
    what the crowd confirmed refuses a visit: the worker's confirmed work on this HIT ("already
    done", e.g. on a repost), or the assignment id confirmed for someone else. A reload returns the
    same assignment, and a binding is never moved to another assignment id.

    Locking: the worker row (``FOR UPDATE``) while the binding is made; the partial unique
    constraints on (hit, worker) and on the external id hold for confirmed rows.
    """
    now = now or timezone.now()
    batch = hit.batch
    backend = get_backend(batch.backend)
    if backend.arrival != ARRIVAL_LINK:
        raise CrowdActionRefused("This HIT is not offered on a crowd site.")
    known = remote_binding(
        hit=hit, worker_external_id=worker_external_id, assignment_external_id=assignment_external_id
    )
    if known is not None:
        # A reload: work accepted before the batch was expired or closed may still be finished.
        return known
    if not HIT.objects.filter(OFFERED_HIT, pk=hit.pk).exists():
        # Closed, or its target already has every label it needs.
        raise CrowdActionRefused("This HIT is no longer available. Please return it.")
    if batch.paused_at is not None:
        # Paused (docs/design.md §16): MTurk expired the HIT, but a worker may have accepted it just before.
        raise CrowdActionRefused("This HIT is paused by its requester for now. Please return it.")
    # A HITId of another HIT is refused; one not recorded at all may be a posting made just before a
    # publish died (the next publish finds it by its token), so its workers are taken in: their work
    # counts only once a sync finds it on a recorded posting anyway.
    if hit_external_id and RemoteHIT.objects.filter(external_id=hit_external_id).exclude(hit=hit).exists():
        raise CrowdActionRefused("This page does not belong to the HIT you accepted. Please return it.")
    worker, _ = Worker.objects.get_or_create(kind=backend.worker_kind, external_id=worker_external_id)
    with transaction.atomic():
        locked_worker = Worker.objects.select_for_update(no_key=True).get(pk=worker.pk)
        again = remote_binding(
            hit=hit, worker_external_id=worker_external_id, assignment_external_id=assignment_external_id
        )
        if again is not None:
            # Two first visits at once: the other one made the row while this one waited for the lock.
            return again
        if locked_worker.blocked:
            raise CrowdActionRefused("You cannot take this HIT. Please return it.")
        if Assignment.objects.filter(confirmed_by_crowd(), external_id=assignment_external_id).exists():
            raise CrowdActionRefused("This assignment id belongs to another HIT. Please return it.")
        if Assignment.objects.filter(confirmed_by_crowd(), hit=hit, worker=locked_worker).exists():
            raise CrowdActionRefused(
                "You have already done this HIT (it may be posted more than once). Please return it."
            )
        return Assignment.objects.create(
            hit=hit,
            worker=locked_worker,
            status=AssignmentStatus.CLAIMED,
            external_id=assignment_external_id,
            claimed_at=now,
            deadline=now + batch.assignment_duration + CLAIM_GRACE,
        )


def confirmed_by_crowd() -> Q:
    """Crowd assignments a sync found in the crowd's own list under their worker and HIT."""
    return ~Q(external_id="") & ~Q(external_status="")
