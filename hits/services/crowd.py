"""Crowd operations: publish, sync, expire, approve, reject, bonus, block, notify (DESIGN §4, §5).

One function per operation, called by the researcher pages, the API, admin actions, the Celery
beat task and the management commands alike. Each dispatches to the batch's crowd backend
(``hits.backends``) for the remote part and keeps the domain rules here, the same for every
crowd:

- Work is paid only once the crowd itself has confirmed it: every stored assignment is
  reconciled with the crowd's list before approval, and one the crowd does not know is flagged
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
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from annotation.models import Worker, WorkerKind
from hits.backends import BackendError, NotifyResult, PublishResult, RemoteAssignment, RemoteStatus, get_backend
from hits.models import (
    HIT,
    Assignment,
    AssignmentStatus,
    Backend,
    Batch,
    BatchStatus,
    Bonus,
    BonusStatus,
    FilteredPolicy,
    RemoteHIT,
)

logger = logging.getLogger(__name__)

# Statuses whose work is stored here and which the crowd must therefore know.
DONE_STATUSES = frozenset({AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED, AssignmentStatus.REJECTED})
# How long one sync may hold a batch before another run may take it over (a crashed run's lease lapses).
LEASE = timedelta(minutes=15)
NO_WORK_MESSAGE = "No answers reached us for this assignment: the task page was not submitted."
# MTurk gives the assignment's own duration; a claim on this platform lasts a little longer so that a
# worker who submits in the last seconds on MTurk's clock is not turned away by ours.
CLAIM_GRACE = timedelta(minutes=2)


class CrowdActionRefused(Exception):
    """The operation is not allowed in the current state; the message says why, for the researcher or worker."""


@dataclass
class SyncReport:
    """What one sync of one batch did."""

    batch_id: int
    skipped: str = ""
    remote_assignments: int = 0
    updated: int = 0
    flagged_unknown: list[int] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    approved: int = 0
    rejected: int = 0
    bonuses_sent: int = 0
    workers_blocked: int = 0
    recollected: int = 0
    expired_claims: int = 0
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.skipped:
            return f"batch {self.batch_id}: skipped ({self.skipped})"
        parts = [
            f"{self.remote_assignments} remote assignments",
            f"{self.updated} updated",
            f"{len(self.flagged_unknown)} flagged as unknown to the crowd",
            f"{len(self.orphans)} submitted on the crowd without answers here",
            f"{self.approved} approved",
            f"{self.rejected} rejected",
            f"{self.bonuses_sent} bonuses sent",
            f"{self.workers_blocked} workers blocked",
            f"{self.recollected} assignments re-collected",
        ]
        if self.expired_claims:
            parts.append(f"{self.expired_claims} overdue claims expired")
        text = f"batch {self.batch_id}: " + ", ".join(parts)
        if self.errors:
            text += "; errors: " + " | ".join(self.errors)
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch_id,
            "skipped": self.skipped,
            "remote_assignments": self.remote_assignments,
            "updated": self.updated,
            "flagged_unknown": self.flagged_unknown,
            "orphans": self.orphans,
            "approved": self.approved,
            "rejected": self.rejected,
            "bonuses_sent": self.bonuses_sent,
            "workers_blocked": self.workers_blocked,
            "recollected": self.recollected,
            "expired_claims": self.expired_claims,
            "errors": self.errors,
        }


@contextmanager
def _batch_lease(batch: Batch) -> Iterator[bool]:
    """Hold the batch for one publish/sync/expire; yields False if another run holds it.

    A conditional UPDATE takes the lease (row count checked), so the beat task and a researcher's
    command never talk to the crowd about one batch at the same time, without a transaction held
    open across network calls.
    """
    now = timezone.now()
    taken = (
        Batch.objects.filter(pk=batch.pk)
        .filter(Q(sync_lease_until__isnull=True) | Q(sync_lease_until__lte=now))
        .update(sync_lease_until=now + LEASE)
    )
    if not taken:
        yield False
        return
    try:
        yield True
    finally:
        Batch.objects.filter(pk=batch.pk).update(sync_lease_until=None)


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


def _queue_benchmark_refresh(benchmark_id: int) -> None:
    """Let the pipeline recompute spam filtering and advancement once our changes are committed."""
    try:
        from analysis.tasks import benchmark_refresh  # type: ignore[attr-defined]
    except ImportError:
        return
    transaction.on_commit(lambda: benchmark_refresh.delay(benchmark_id))


# -- publishing ---------------------------------------------------------------------------------


def batch_publish(
    *,
    batch: Batch,
    sandbox: bool | None = None,
    qualifications: Mapping[str, Any] | None = None,
) -> PublishResult:
    """Offer the batch's HITs on its crowd and open it. Safe to repeat: a retry never duplicates HITs.

    On MTurk, ``sandbox`` picks the endpoint (default: the MTURK_SANDBOX setting) the first time;
    a batch stays on the endpoint it was first published to. ``qualifications`` replaces the
    batch's qualification settings before publishing.
    """
    from hits.backends.mturk import Qualifications, environment_for

    batch = Batch.objects.get(pk=batch.pk)
    if batch.status == BatchStatus.CLOSED:
        raise CrowdActionRefused(f"{batch} is closed; generate a new batch to collect more")
    if not batch.hits.exists():
        raise CrowdActionRefused(f"{batch} has no HITs to publish")
    fields: list[str] = []
    if qualifications is not None:
        try:
            Qualifications.from_json(qualifications)
        except ValueError as error:
            raise CrowdActionRefused(str(error)) from None
        batch.qualifications = dict(qualifications)
        fields.append("qualifications")
    if batch.backend == Backend.MTURK:
        try:
            Qualifications.from_json(batch.qualifications)
        except ValueError as error:
            raise CrowdActionRefused(f"{batch}: {error}") from None
        wanted = environment_for(sandbox=settings.MTURK_SANDBOX if sandbox is None else sandbox)
        current = batch.external.get("environment")
        published = RemoteHIT.objects.filter(hit__batch=batch).exists()
        if published and current and current != wanted:
            raise CrowdActionRefused(
                f"{batch} was published to the MTurk {current}; it cannot also go to the {wanted}. "
                "Generate a new batch for that."
            )
        if current != wanted:
            batch.external = {**batch.external, "environment": wanted}
            fields.append("external")
    if fields:
        batch.save(update_fields=fields)
    with _batch_lease(batch) as held:
        if not held:
            raise CrowdActionRefused(f"{batch} is being published or synced right now; try again in a minute")
        with _recorded(batch, "publish"):
            result = get_backend(batch.backend).publish(batch=batch)
    batch.refresh_from_db()
    updates: dict[str, Any] = {}
    if batch.status == BatchStatus.DRAFT:
        updates["status"] = BatchStatus.OPEN
    if batch.backend != Backend.LOCAL and "published_at" not in batch.external:
        updates["external"] = {**batch.external, "published_at": timezone.now().isoformat()}
    if updates:
        Batch.objects.filter(pk=batch.pk).update(**updates)
    logger.info("%s published: %d HITs created, %d already there", batch, result.hits_created, result.hits_existing)
    return result


def batch_expire(*, batch: Batch) -> int:
    """Stop offering the batch's HITs now (MTurk: expire every posting) and close the batch.

    Work already accepted may still be submitted and is synced as usual. Returns the number of
    postings expired (on the local queue: the HITs closed).
    """
    batch = Batch.objects.get(pk=batch.pk)
    with _batch_lease(batch) as held:
        if not held:
            raise CrowdActionRefused(f"{batch} is being published or synced right now; try again in a minute")
        expired = get_backend(batch.backend).expire(batch=batch)
    from hits.services.batches import batch_close

    batch_close(batch=batch)
    return expired


# -- the ExternalQuestion page ------------------------------------------------------------------


def assignment_accept_remote(
    *,
    hit: HIT,
    worker_external_id: str,
    assignment_external_id: str,
    hit_external_id: str = "",
    now: datetime | None = None,
) -> Assignment:
    """The assignment a crowd worker accepted on the crowd's site, created on their first visit.

    Identifies the worker (a Worker of kind mturk, created on first sight) and binds the crowd's
    assignment id to one Assignment of this HIT, respecting one worker per HIT (DESIGN §3). A
    reload returns the same assignment. A worker who returned the HIT on the crowd and accepted it
    again gets their row back with the new id. The ids are not trusted: the sync later checks
    each against the crowd's own list and flags any it does not know.

    Locking: as in the queue, worker row first, then the (hit, worker) assignment, then the HIT
    row (``FOR UPDATE``), under which the free-slot check and the ``assignments_active``
    increment happen; the unique constraints on (hit, worker) and on the external id back it.
    """
    now = now or timezone.now()
    batch = hit.batch
    if batch.backend == Backend.LOCAL:
        raise CrowdActionRefused("This HIT is not offered on a crowd site.")
    if batch.status != BatchStatus.OPEN:
        raise CrowdActionRefused("This HIT is no longer available. Please return it.")
    if hit_external_id and not RemoteHIT.objects.filter(hit=hit, external_id=hit_external_id).exists():
        raise CrowdActionRefused("This page does not belong to the HIT you accepted. Please return it.")
    worker, _ = Worker.objects.get_or_create(kind=WorkerKind.MTURK, external_id=worker_external_id)
    deadline = now + batch.assignment_duration + CLAIM_GRACE
    try:
        with transaction.atomic():
            locked_worker = Worker.objects.select_for_update(no_key=True).get(pk=worker.pk)
            if locked_worker.blocked:
                raise CrowdActionRefused("You cannot take this HIT. Please return it.")
            other = (
                Assignment.objects.filter(external_id=assignment_external_id)
                .exclude(hit=hit, worker=locked_worker)
                .exists()
            )
            if other:
                raise CrowdActionRefused("This assignment id belongs to another HIT. Please return it.")
            existing = Assignment.objects.select_for_update().filter(hit=hit, worker=locked_worker).first()
            if existing is not None and existing.external_id == assignment_external_id:
                return existing
            if existing is not None and existing.status in DONE_STATUSES:
                raise CrowdActionRefused(
                    "You have already done this HIT (it may be posted more than once). Please return it."
                )
            locked_hit = HIT.objects.select_for_update().get(pk=hit.pk)
            if existing is not None and existing.status == AssignmentStatus.CLAIMED:
                # Returned on the crowd and accepted again: same slot, new assignment id and clock.
                Assignment.objects.filter(pk=existing.pk).update(
                    external_id=assignment_external_id, claimed_at=now, deadline=deadline
                )
                existing.refresh_from_db()
                return existing
            if locked_hit.assignments_active >= locked_hit.assignments_required:
                freed = _expire_overdue_claims_of(hit=locked_hit, now=now)
                if not freed:
                    raise CrowdActionRefused("This HIT already has all the answers it needs. Please return it.")
            HIT.objects.filter(pk=locked_hit.pk).update(assignments_active=F("assignments_active") + 1)
            if existing is not None:
                # An expired or returned claim of this worker: it takes a slot again.
                Assignment.objects.filter(pk=existing.pk).update(
                    status=AssignmentStatus.CLAIMED,
                    external_id=assignment_external_id,
                    claimed_at=now,
                    deadline=deadline,
                )
                existing.refresh_from_db()
                return existing
            return Assignment.objects.create(
                hit=locked_hit,
                worker=locked_worker,
                status=AssignmentStatus.CLAIMED,
                external_id=assignment_external_id,
                claimed_at=now,
                deadline=deadline,
            )
    except IntegrityError:
        # Two first visits of the same worker at once: the other one created the row.
        existing = Assignment.objects.filter(hit=hit, worker=worker, external_id=assignment_external_id).first()
        if existing is None:
            raise CrowdActionRefused("This HIT could not be opened. Please reload the page.") from None
        return existing


def _expire_overdue_claims_of(*, hit: HIT, now: datetime) -> int:
    """Expire this HIT's overdue claims now (the crowd reopened those slots already); call under the HIT lock."""
    overdue = list(
        Assignment.objects.select_for_update(skip_locked=True)
        .filter(hit=hit, status=AssignmentStatus.CLAIMED, deadline__lte=now)
        .values_list("pk", flat=True)
    )
    if not overdue:
        return 0
    changed = Assignment.objects.filter(pk__in=overdue, status=AssignmentStatus.CLAIMED).update(
        status=AssignmentStatus.EXPIRED
    )
    HIT.objects.filter(pk=hit.pk).update(assignments_active=F("assignments_active") - changed)
    return changed


# -- sync -----------------------------------------------------------------------------------------


def batch_sync(
    *,
    batch: Batch,
    now: datetime | None = None,
    review: bool = True,
    hold: timedelta | None = None,
) -> SyncReport:
    """Bring a batch and its crowd into agreement, then pay, block and re-collect.

    1. Reconcile: every assignment stored here with a crowd id is checked against the crowd's
       list (``CrowdBackend.sync``): states are copied, and one the crowd does not know (after
       ``MTURK_RECONCILE_GRACE_SECONDS``) or knows under another worker is flagged, filtered and
       never paid. Work submitted on the crowd with no answers here is reported as an orphan.
    2. Review (``review=True``): submitted work older than ``hold`` (default
       ``MTURK_APPROVAL_HOLD_SECONDS``, so filtering has seen the worker's later work) is
       approved when it counts, and approved or rejected by the batch's ``filtered_policy`` when
       filtered; orphans follow the same policy.
    3. Pending bonuses are sent again (same token), workers blocked here are blocked on the
       crowd, and HITs short of valid work are re-collected.

    On the local queue there is nothing remote: overdue claims are expired and that is all.
    A lease on the batch keeps two syncs apart; a second one returns at once, ``skipped``.
    """
    now = now or timezone.now()
    hold = timedelta(seconds=settings.MTURK_APPROVAL_HOLD_SECONDS) if hold is None else hold
    batch = Batch.objects.get(pk=batch.pk)
    report = SyncReport(batch_id=batch.pk)
    backend = get_backend(batch.backend)
    if not backend.remote:
        from hits.services.queue import assignments_expire_overdue

        report.expired_claims = assignments_expire_overdue(now=now)
        return report
    if not RemoteHIT.objects.filter(hit__batch=batch).exists():
        report.skipped = "not published"
        return report
    with _batch_lease(batch) as held:
        if not held:
            report.skipped = "another sync or publish holds the batch"
            return report
        with _recorded(batch, "sync"):
            remote = backend.sync(batch=batch) or []
        report.remote_assignments = len(remote)
        _reconcile(batch=batch, remote=remote, now=now, report=report)
        if review:
            _review(batch=batch, remote=remote, now=now, hold=hold, report=report)
        for bonus in Bonus.objects.filter(assignment__hit__batch=batch, status=BonusStatus.PENDING).order_by("id"):
            sent = bonus_send(bonus=bonus)
            if sent.status == BonusStatus.SENT:
                report.bonuses_sent += 1
            elif sent.error:
                report.errors.append(f"bonus {bonus.pk}: {sent.error}")
        report.workers_blocked = _push_blocks(batch=batch, report=report)
        if Batch.objects.filter(pk=batch.pk, status=BatchStatus.OPEN).exists():
            for hit in _hits_short_of_valid_work(batch):
                try:
                    report.recollected += hit_recollect(hit=hit)
                except BackendError as error:
                    report.errors.append(f"re-collecting HIT {hit.pk}: {error}")
        Batch.objects.filter(pk=batch.pk).update(external=_merged_external(batch, {"synced_at": now.isoformat()}))
    logger.info("%s", report.summary())
    return report


def batches_sync_open(*, now: datetime | None = None) -> list[SyncReport]:
    """Sync every published crowd batch that is open or still has work waiting for a decision."""
    waiting = Assignment.objects.filter(hit__batch=OuterRef("pk"), status=AssignmentStatus.SUBMITTED)
    batches = (
        Batch.objects.exclude(backend=Backend.LOCAL)
        .filter(Exists(RemoteHIT.objects.filter(hit__batch=OuterRef("pk"))))
        .filter(Q(status=BatchStatus.OPEN) | Exists(waiting))
        .order_by("id")
    )
    reports = []
    for batch in batches:
        try:
            reports.append(batch_sync(batch=batch, now=now))
        except BackendError as error:
            # One batch's trouble (e.g. credentials for one endpoint) must not stop the others.
            logger.warning("sync of %s failed: %s", batch, error)
            reports.append(SyncReport(batch_id=batch.pk, errors=[str(error)]))
    return reports


def _merged_external(batch: Batch, values: Mapping[str, Any]) -> dict[str, Any]:
    current = Batch.objects.filter(pk=batch.pk).values_list("external", flat=True).first() or {}
    return {**current, **values}


def _reconcile(*, batch: Batch, remote: Sequence[RemoteAssignment], now: datetime, report: SyncReport) -> None:
    # The crowd's list is read before ours: work is saved here before the page sends it to the
    # crowd, so anything the crowd lists as submitted is already visible in this query.
    by_id = {item.external_id: item for item in remote}
    postings = dict(RemoteHIT.objects.filter(hit__batch=batch).values_list("external_id", "hit_id"))
    grace = timedelta(seconds=settings.MTURK_RECONCILE_GRACE_SECONDS)
    matched: set[str] = set()
    changed_filtering = False
    local = Assignment.objects.filter(hit__batch=batch).exclude(external_id="").select_related("worker").order_by("id")
    for assignment in local:
        item = by_id.get(assignment.external_id)
        genuine = (
            item is not None
            and item.worker_external_id == assignment.worker.external_id
            and postings.get(item.hit_external_id) == assignment.hit_id
        )
        if item is not None and genuine:
            matched.add(item.external_id)
            if assignment.status not in DONE_STATUSES:
                # Submitted on the crowd but no answers here (the claim expired first): nothing to pay for.
                report.orphans.append(item.external_id)
                continue
            if _apply_remote_state(assignment=assignment, item=item):
                report.updated += 1
                changed_filtering = True
            continue
        if assignment.external_unknown:
            continue
        forged = item is not None
        overdue = assignment.submitted_at is not None and assignment.submitted_at <= now - grace
        suspect = forged or (assignment.status in DONE_STATUSES and overdue)
        if suspect and assignment_flag_unknown(assignment=assignment):
            report.flagged_unknown.append(assignment.pk)
            changed_filtering = True
    report.orphans.extend(
        item.external_id
        for item in remote
        if item.external_id not in matched
        and item.status == RemoteStatus.SUBMITTED
        and item.external_id not in report.orphans
        and not Assignment.objects.filter(external_id=item.external_id).exists()
    )
    if changed_filtering:
        _queue_benchmark_refresh(batch.benchmark_id)


def _apply_remote_state(*, assignment: Assignment, item: RemoteAssignment) -> bool:
    """Copy the crowd's state of one assignment; True if anything changed. Decisions made on the crowd's
    site count: an approval there approves here, a rejection there rejects and filters here."""
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        updates: dict[str, Any] = {}
        if locked.external_status != item.status:
            updates["external_status"] = item.status
        if item.status == RemoteStatus.APPROVED and locked.status == AssignmentStatus.SUBMITTED:
            updates["status"] = AssignmentStatus.APPROVED
        if item.status == RemoteStatus.REJECTED and locked.status != AssignmentStatus.REJECTED:
            updates["status"] = AssignmentStatus.REJECTED
            if not locked.filtered:
                updates["filtered"] = True
                _release_slot(hit_id=locked.hit_id)
        if not updates:
            return False
        Assignment.objects.filter(pk=locked.pk).update(**updates)
    return True


def _release_slot(*, hit_id: int) -> None:
    """A counted assignment stops counting: its slot reopens (call in a transaction, assignment locked)."""
    HIT.objects.select_for_update().filter(pk=hit_id).update(assignments_active=F("assignments_active") - 1)


def assignment_flag_unknown(*, assignment: Assignment) -> bool:
    """Flag an assignment the crowd does not know: rejected here, filtered, never paid. True if newly flagged.

    Nothing is sent to the crowd (it has no such assignment). The status becomes rejected so that
    every rule that recomputes filtering (the pipeline's refresh filters rejected work) keeps its
    labels out; if it held a slot, the slot reopens. Locking: the assignment row (``FOR UPDATE``)
    then its HIT's counter, in one transaction.
    """
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.external_unknown:
            return False
        counted = not locked.filtered and locked.status in {
            AssignmentStatus.CLAIMED,
            AssignmentStatus.SUBMITTED,
            AssignmentStatus.APPROVED,
        }
        Assignment.objects.filter(pk=locked.pk).update(
            external_unknown=True, filtered=True, status=AssignmentStatus.REJECTED
        )
        if counted:
            _release_slot(hit_id=locked.hit_id)
    logger.warning("assignment %s (%s) is unknown to the crowd: flagged", assignment.pk, assignment.external_id)
    return True


def _review(
    *, batch: Batch, remote: Sequence[RemoteAssignment], now: datetime, hold: timedelta, report: SyncReport
) -> None:
    ready = Assignment.objects.filter(
        hit__batch=batch,
        status=AssignmentStatus.SUBMITTED,
        external_status=RemoteStatus.SUBMITTED,
        external_unknown=False,
        submitted_at__lte=now - hold,
    ).order_by("id")
    for assignment in ready:
        try:
            if not assignment.filtered or batch.filtered_policy == FilteredPolicy.APPROVE:
                assignment_approve(assignment=assignment)
                report.approved += 1
            else:
                assignment_reject(assignment=assignment, message=batch.rejection_message)
                report.rejected += 1
        except (BackendError, CrowdActionRefused) as error:
            report.errors.append(f"assignment {assignment.pk}: {error}")
    if batch.filtered_policy != FilteredPolicy.REJECT:
        # Orphans are left to the crowd's auto-approval, as filtered work would be approved.
        return
    postings = {posting.external_id: posting for posting in RemoteHIT.objects.filter(hit__batch=batch)}
    backend = get_backend(batch.backend)
    for item in remote:
        if item.external_id not in report.orphans or item.status != RemoteStatus.SUBMITTED:
            continue
        if item.submitted_at is not None and item.submitted_at > now - hold:
            continue
        posting = postings.get(item.hit_external_id)
        if posting is None:
            continue
        # The crowd only needs the ids: an unsaved row carries them without inventing local work.
        stand_in = Assignment(hit=posting.hit, external_id=item.external_id)
        try:
            backend.reject(assignment=stand_in, message=NO_WORK_MESSAGE)
            report.rejected += 1
        except BackendError as error:
            report.errors.append(f"orphan {item.external_id}: {error}")


def _push_blocks(*, batch: Batch, report: SyncReport) -> int:
    """Block on the crowd the workers of this batch who are blocked here; each at most once per batch."""
    done = set(batch.external.get("blocked_workers", []))
    workers = (
        Worker.objects.filter(kind=WorkerKind.MTURK, blocked=True, assignments__hit__batch=batch)
        .exclude(external_id__in=done)
        .distinct()
        .order_by("id")
    )
    backend = get_backend(batch.backend)
    blocked = 0
    for worker in workers:
        try:
            backend.block(worker=worker, reason=worker.blocked_reason or "Work did not follow the instructions.")
        except BackendError as error:
            report.errors.append(f"blocking {worker.external_id}: {error}")
            continue
        done.add(worker.external_id)
        blocked += 1
    if blocked:
        Batch.objects.filter(pk=batch.pk).update(external=_merged_external(batch, {"blocked_workers": sorted(done)}))
    return blocked


def _hits_short_of_valid_work(batch: Batch) -> list[HIT]:
    """HITs that lost counted work to filtering or rejection and have free slots again."""
    lost = Assignment.objects.filter(hit=OuterRef("pk"), filtered=True)
    return list(
        HIT.objects.filter(batch=batch, assignments_active__lt=F("assignments_required"))
        .filter(Exists(lost))
        .select_related("batch")
        .order_by("id")
    )


def hit_recollect(*, hit: HIT) -> int:
    """Offer a HIT's missing valid assignments on its crowd again; returns how many were posted.

    Missing = required minus active (claimed or valid). The backend subtracts what the crowd
    still offers, so calling this again changes nothing until more work is filtered.
    """
    hit = HIT.objects.select_related("batch").get(pk=hit.pk)
    missing = hit.assignments_required - hit.assignments_active
    if missing <= 0:
        return 0
    return get_backend(hit.batch.backend).recollect(hit=hit, missing=missing)


# -- approving, rejecting, paying -----------------------------------------------------------------


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


def assignment_approve(*, assignment: Assignment, message: str = "") -> Assignment:
    """Approve submitted work (on MTurk: pay it). Idempotent: approving it again changes nothing.

    Only work the crowd has confirmed (reconciled by a sync) is approved; filtered work may be
    approved too (the researcher's choice). A conditional UPDATE from submitted to approved
    records it once.
    """
    assignment = Assignment.objects.select_related("hit__batch", "worker").get(pk=assignment.pk)
    if assignment.status == AssignmentStatus.APPROVED:
        return assignment
    if assignment.external_unknown:
        _confirmed_by_crowd(assignment)
    if assignment.status != AssignmentStatus.SUBMITTED:
        raise CrowdActionRefused(
            f"only submitted work can be approved; assignment {assignment.pk} is {assignment.status}"
        )
    _confirmed_by_crowd(assignment)
    backend = get_backend(assignment.hit.batch.backend)
    backend.approve(assignment=assignment, message=message)
    updates: dict[str, Any] = {"status": AssignmentStatus.APPROVED}
    if backend.remote:
        updates["external_status"] = RemoteStatus.APPROVED
    Assignment.objects.filter(pk=assignment.pk, status=AssignmentStatus.SUBMITTED, external_unknown=False).update(
        **updates
    )
    assignment.refresh_from_db()
    return assignment


def assignment_reject(*, assignment: Assignment, message: str = "") -> Assignment:
    """Reject submitted work with a message to the worker (default: the batch's rejection message).

    Rejected work stops counting: it is filtered and, if it held a slot, the slot reopens for
    re-collection. Work the crowd does not know is rejected here only. Idempotent.
    """
    assignment = Assignment.objects.select_related("hit__batch", "worker").get(pk=assignment.pk)
    if assignment.status == AssignmentStatus.REJECTED:
        return assignment
    if assignment.status != AssignmentStatus.SUBMITTED:
        raise CrowdActionRefused(
            f"only submitted work can be rejected; assignment {assignment.pk} is {assignment.status}"
        )
    batch = assignment.hit.batch
    message = (message or batch.rejection_message).strip()
    if not message:
        raise CrowdActionRefused("a rejection needs a message to the worker")
    backend = get_backend(batch.backend)
    if not assignment.external_unknown:
        _confirmed_by_crowd(assignment)
        backend.reject(assignment=assignment, message=message)
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status == AssignmentStatus.SUBMITTED:
            updates: dict[str, Any] = {"status": AssignmentStatus.REJECTED, "filtered": True, "feedback": message}
            if backend.remote and not locked.external_unknown:
                updates["external_status"] = RemoteStatus.REJECTED
            Assignment.objects.filter(pk=locked.pk).update(**updates)
            if not locked.filtered:
                _release_slot(hit_id=locked.hit_id)
                _queue_benchmark_refresh(batch.benchmark_id)
    assignment.refresh_from_db()
    return assignment


def _parse_amount(amount: Decimal | str | float) -> Decimal:
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        raise CrowdActionRefused(f"bonus amount {amount!r} is not a number of dollars") from None
    if not value.is_finite() or value <= 0:
        raise CrowdActionRefused(f"bonus amount must be above $0.00, not {amount}")
    if value != value.quantize(Decimal("0.01")):
        raise CrowdActionRefused(f"bonus amount {amount} has more than two decimals")
    if value >= Decimal("10000"):
        raise CrowdActionRefused(f"bonus amount {amount} is too large")
    return value.quantize(Decimal("0.01"))


def worker_bonus(
    *,
    assignment: Assignment,
    amount: Decimal | str | float,
    reason: str,
    created_by: User | None = None,
) -> Bonus:
    """Give the worker of an assignment a bonus, recorded first and then sent with a unique token.

    The Bonus row (with its token) is committed before the crowd is asked, so a send that fails
    or times out is retried by the next sync with the same token and the worker is paid once.
    Work the crowd does not know is never paid. Returns the row: ``status`` sent, pending (will
    be retried; ``error`` says why) or failed (refused by the crowd; ``error`` has its message).
    """
    value = _parse_amount(amount)
    reason = reason.strip()
    if not reason:
        raise CrowdActionRefused("a bonus needs a reason; the worker sees it")
    assignment = Assignment.objects.select_related("hit__batch", "worker").get(pk=assignment.pk)
    if assignment.status not in DONE_STATUSES:
        raise CrowdActionRefused(f"assignment {assignment.pk} has no submitted work to reward")
    if assignment.external_unknown:
        raise CrowdActionRefused(
            f"assignment {assignment.pk} is unknown to the crowd ({assignment.external_id}): it is never paid"
        )
    if get_backend(assignment.hit.batch.backend).remote and not assignment.external_status:
        raise CrowdActionRefused(f"the crowd has not confirmed assignment {assignment.pk} yet: sync the batch first")
    bonus = Bonus.objects.create(
        assignment=assignment,
        worker=assignment.worker,
        amount=value,
        reason=reason,
        token=f"crowdlex-bonus-{uuid.uuid4().hex}",
        created_by=created_by,
    )
    return bonus_send(bonus=bonus)


def bonus_send(*, bonus: Bonus) -> Bonus:
    """Send a pending bonus (again); a bonus already sent or failed is returned unchanged."""
    bonus = Bonus.objects.select_related("assignment__hit__batch", "worker").get(pk=bonus.pk)
    if bonus.status != BonusStatus.PENDING:
        return bonus
    backend = get_backend(bonus.assignment.hit.batch.backend)
    try:
        backend.bonus(
            worker=bonus.worker,
            assignment=bonus.assignment,
            amount=bonus.amount,
            reason=bonus.reason,
            token=bonus.token,
        )
    except BackendError as error:
        status = BonusStatus.PENDING if error.retryable else BonusStatus.FAILED
        Bonus.objects.filter(pk=bonus.pk, status=BonusStatus.PENDING).update(status=status, error=str(error))
    else:
        Bonus.objects.filter(pk=bonus.pk, status=BonusStatus.PENDING).update(
            status=BonusStatus.SENT, sent_at=timezone.now(), error=""
        )
    bonus.refresh_from_db()
    return bonus


# -- workers ----------------------------------------------------------------------------------------


def worker_block_remote(*, worker: Worker, reason: str, by: User | None = None) -> Worker:
    """Block a worker here (the pipeline's worker_block: no more HITs, work filtered) and on their crowd.

    On MTurk this is create_worker_block; the reason is kept with the block and not shown to the worker.
    """
    reason = reason.strip()
    if not reason:
        raise CrowdActionRefused("a block needs a reason (kept with the block; MTurk does not show it to the worker)")
    # The platform's own block first (no more HITs here, work filtered), then the crowd's.
    from analysis.pipeline_services import worker_block

    worker_block(worker=worker, reason=reason, by=by)
    if worker.kind == WorkerKind.MTURK:
        get_backend(Backend.MTURK).block(worker=worker, reason=reason)
        for batch in Batch.objects.filter(hits__assignments__worker=worker, backend=Backend.MTURK).distinct():
            done = set(batch.external.get("blocked_workers", []))
            if worker.external_id not in done:
                Batch.objects.filter(pk=batch.pk).update(
                    external=_merged_external(batch, {"blocked_workers": sorted(done | {worker.external_id})})
                )
    worker.refresh_from_db()
    return worker


def workers_notify(*, workers: Sequence[Worker], subject: str, text: str) -> NotifyResult:
    """Message workers through their crowd (MTurk: notify_workers, 100 at a time)."""
    subject, text = subject.strip(), text.strip()
    if not subject or not text:
        raise CrowdActionRefused("a message needs a subject and a text")
    if len(subject) > 200:
        raise CrowdActionRefused("the subject is longer than 200 characters")
    if len(text) > 4096:
        raise CrowdActionRefused("the text is longer than 4096 characters")
    result = NotifyResult()
    by_kind: dict[str, list[Worker]] = {}
    for worker in workers:
        by_kind.setdefault(worker.kind, []).append(worker)
    for kind, group in sorted(by_kind.items()):
        backend_name = Backend.MTURK if kind == WorkerKind.MTURK else Backend.LOCAL
        part = get_backend(backend_name).notify(workers=group, subject=subject, text=text)
        result.notified += part.notified
        result.failures.update(part.failures)
    return result


def batch_notify(*, batch: Batch, subject: str, text: str) -> NotifyResult:
    """Message every worker who submitted work in a batch."""
    workers = list(
        Worker.objects.filter(assignments__hit__batch=batch, assignments__status__in=DONE_STATUSES)
        .distinct()
        .order_by("id")
    )
    return workers_notify(workers=workers, subject=subject, text=text)


def batch_review_policy_update(*, batch: Batch, filtered_policy: str, rejection_message: str) -> Batch:
    """Set what the sync does with filtered work on a paid crowd, and the message a rejection carries."""
    if filtered_policy not in FilteredPolicy.values:
        raise CrowdActionRefused(f"policy must be one of {', '.join(FilteredPolicy.values)}, not {filtered_policy!r}")
    rejection_message = rejection_message.strip()
    if filtered_policy == FilteredPolicy.REJECT and not rejection_message:
        raise CrowdActionRefused("rejecting filtered work needs a message to the workers")
    if len(rejection_message) > 1024:
        raise CrowdActionRefused("the rejection message is longer than MTurk's 1024 characters")
    Batch.objects.filter(pk=batch.pk).update(filtered_policy=filtered_policy, rejection_message=rejection_message)
    batch.refresh_from_db()
    return batch
