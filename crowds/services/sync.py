"""Sync a crowd batch: reconcile with the crowd's list, review by policy, pay, block, re-collect.

See ``crowds.services.publishing`` for the rules every crowd operation follows.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.changes import benchmark_changed
from annotation.models import TargetStage, Worker
from annotation.tallies import tallies_validity_changed
from crowdlex.followup import benchmark_refresh_queue
from crowdlex.progress import Progress
from crowds.interface import (
    BLOCK,
    WITHDRAWN_STATUSES,
    BackendError,
    RemoteAssignment,
    RemoteStatus,
    get_backend,
    remote_backend_names,
)
from crowds.interface.costs import assignments_cost
from crowds.selectors import batch_fees, benchmark_recollection_left, hits_short_of_valid_work
from crowds.services.approval import assignment_approve, assignment_reject, bonus_send
from crowds.services.publishing import (
    CrowdActionRefused,
    _batch_lease,
    _merged_external,
    _recorded,
    _release_slot,
)
from hits.budget import budget_status
from hits.models import (
    HIT,
    HOLDS_SLOT,
    SUBMITTED_STATUSES,
    Assignment,
    AssignmentStatus,
    Batch,
    BatchStatus,
    Bonus,
    BonusStatus,
    FilteredPolicy,
    RemoteHIT,
)
from hits.services import assignment_confirm, assignments_expire_overdue

logger = logging.getLogger(__name__)

# At least 100 characters: Prolific refuses shorter rejection messages.
NO_WORK_MESSAGE = (
    "No answers reached us for this assignment: the task page was not submitted, so there is no work "
    "of yours that we could review or pay."
)


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
    # What the re-collected assignments cost if all are approved, fees included.
    recollection_cost: Decimal = Decimal("0.00")
    withdrawn: int = 0
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
            f"{self.recollected} assignments re-collected (${self.recollection_cost:.2f} with fees)",
            f"{self.withdrawn} postings of finished targets expired",
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
            "recollection_cost": str(self.recollection_cost),
            "withdrawn": self.withdrawn,
            "expired_claims": self.expired_claims,
            "errors": self.errors,
        }


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
       filtered; orphans follow the same policy. Pending bonuses are sent again (same token) and
       HITs short of valid work are re-collected. Without review, a sync spends nothing.
    3. Workers blocked here are blocked on the crowd, and postings still live for targets that
       are done are expired: nothing more of them is collected (``OFFERED_HIT``).

    On the local queue there is nothing remote: overdue claims are expired and that is all.
    A lease on the batch keeps two syncs apart; a second one returns at once, ``skipped``.
    """
    now = now or timezone.now()
    batch = Batch.objects.get(pk=batch.pk)
    report = SyncReport(batch_id=batch.pk)
    backend = get_backend(batch.backend)
    hold = backend.approval_hold if hold is None else hold
    if not backend.remote:
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
        _record_orphans(batch=batch, remote=remote, report=report)
        if review:
            _review(batch=batch, remote=remote, now=now, hold=hold, report=report)
            _spend(batch=batch, report=report)
        report.workers_blocked = _push_blocks(batch=batch, report=report)
        finished = HIT.objects.filter(
            batch=batch, target__stage=TargetStage.DONE, remote_hits__expired_at__isnull=True
        ).distinct()
        try:
            report.withdrawn = backend.withdraw(batch=batch, hits=list(finished))
        except BackendError as error:
            report.errors.append(f"expiring the postings of finished targets: {error}")
        Batch.objects.filter(pk=batch.pk).update(external=_merged_external(batch, {"synced_at": now.isoformat()}))
    logger.info("%s", report.summary())
    return report


def _spend(*, batch: Batch, report: SyncReport) -> None:
    """What a sync pays for besides its review: pending bonuses (sent again with their token) and
    re-collection of the HITs short of valid work, while the batch is open."""
    for bonus in Bonus.objects.filter(assignment__hit__batch=batch, status=BonusStatus.PENDING).order_by("id"):
        sent = bonus_send(bonus=bonus)
        if sent.status == BonusStatus.SENT:
            report.bonuses_sent += 1
        elif sent.error:
            report.errors.append(f"bonus {bonus.pk}: {sent.error}")
    batch.refresh_from_db(fields=["status", "external", "paused_at"])
    # A paused batch posts nothing new on its crowd until it is resumed (docs/design.md §16).
    if batch.status == BatchStatus.OPEN and batch.paused_at is None:
        budget = benchmark_recollection_left(benchmark=batch.benchmark)
        # Past the budget cap, re-collection posts nothing (docs/design.md §16): the free slots it
        # would fill are already counted as committed, so it may go on only while that is within the cap.
        remaining = budget_status(benchmark=batch.benchmark).remaining
        if remaining is not None and remaining < 0:
            budget = Decimal(0)
        for hit in hits_short_of_valid_work(batch=batch):
            try:
                posted = hit_recollect(hit=hit, budget=budget)
            except BackendError as error:
                report.errors.append(f"re-collecting HIT {hit.pk}: {error}")
                continue
            cost = assignments_cost(
                reward=batch.reward, count=posted, hit_size=hit.assignments_required, fees=batch_fees(batch=batch)
            )
            report.recollected += posted
            report.recollection_cost += cost
            if budget is not None:
                budget -= cost


def batches_sync_open(
    *,
    now: datetime | None = None,
    backend: str | None = None,
    progress: Progress | None = None,
    review: bool = True,
    hold: timedelta | None = None,
) -> list[SyncReport]:
    """Sync every published crowd batch (of ``backend`` only, when given) that is open or still has
    work waiting for a decision, each as ``batch_sync`` with ``review`` and ``hold`` does;
    ``progress(batches synced, batches)`` after each."""
    waiting = Assignment.objects.filter(hit__batch=OuterRef("pk"), status=AssignmentStatus.SUBMITTED)
    batches = (
        Batch.objects.filter(backend__in=remote_backend_names())
        .filter(Exists(RemoteHIT.objects.filter(hit__batch=OuterRef("pk"))))
        .filter(Q(status=BatchStatus.OPEN) | Exists(waiting))
        .order_by("id")
    )
    if backend is not None:
        batches = batches.filter(backend=backend)
    reports = []
    chosen = list(batches)
    for batch in chosen:
        try:
            reports.append(batch_sync(batch=batch, now=now, review=review, hold=hold))
        except BackendError as error:
            # One batch's trouble (e.g. credentials for one endpoint) must not stop the others.
            logger.warning("sync of %s failed: %s", batch, error)
            reports.append(SyncReport(batch_id=batch.pk, errors=[str(error)]))
        if progress is not None:
            progress(len(reports), len(chosen))
    return reports


def _reconcile(*, batch: Batch, remote: Sequence[RemoteAssignment], now: datetime, report: SyncReport) -> None:
    """Confirm the work the crowd lists under the same worker and HIT, copy the crowd's decisions, flag
    what it does not know, and report every submission on the crowd that has no work here counting
    for it (an orphan). Several pending rows may name one assignment id or one worker on one HIT
    (bindings are made on a page's word, docs/design.md §4): only the one the crowd lists under its
    own worker and HIT can be confirmed; the others are flagged as unknown once overdue."""
    # The crowd's list is read before ours: work is saved here before the page sends it to the
    # crowd, so anything the crowd lists as submitted is already visible in this query.
    by_id = {item.external_id: item for item in remote}
    postings = dict(RemoteHIT.objects.filter(hit__batch=batch).values_list("external_id", "hit_id"))
    grace = get_backend(batch.backend).reconcile_grace
    # Submissions on the crowd backed by work saved here under the same worker and HIT.
    worked: set[str] = set()
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
            if item.status in WITHDRAWN_STATUSES:
                worked.add(item.external_id)
                if _withdrawn_on_crowd(assignment=assignment, item=item):
                    report.updated += 1
                    changed_filtering = True
                continue
            if assignment.status not in SUBMITTED_STATUSES:
                # Submitted on the crowd but no answers here (the claim expired first): nothing to pay for.
                continue
            if _repeat_of_confirmed_work(assignment):
                # The same worker's second submission of one HIT (a repost): the first one counts.
                continue
            if not assignment.external_unknown:
                # Work flagged unknown before the crowd listed it is never paid: its submission is an orphan.
                worked.add(item.external_id)
            confirmed = assignment_confirm(assignment=assignment, external_status=item.status)
            if _apply_remote_state(assignment=assignment, item=item) or confirmed:
                report.updated += 1
                changed_filtering = True
            continue
        if assignment.external_unknown:
            continue
        forged = item is not None
        overdue = assignment.submitted_at is not None and assignment.submitted_at <= now - grace
        suspect = forged or (assignment.status in SUBMITTED_STATUSES and overdue)
        if suspect and assignment_flag_unknown(assignment=assignment):
            report.flagged_unknown.append(assignment.pk)
            changed_filtering = True
    for item in remote:
        unbacked = item.status == RemoteStatus.SUBMITTED and item.external_id not in worked
        if unbacked and item.external_id not in report.orphans:
            report.orphans.append(item.external_id)
    if changed_filtering:
        # What the researcher's pages show moved now, before the refresh (annotation.changes).
        benchmark_changed(benchmark_id=batch.benchmark_id)
        benchmark_refresh_queue([batch.benchmark_id])


def _repeat_of_confirmed_work(assignment: Assignment) -> bool:
    """Whether the crowd already confirmed another assignment of this worker on this HIT."""
    return (
        Assignment.objects.filter(hit_id=assignment.hit_id, worker_id=assignment.worker_id)
        .exclude(pk=assignment.pk)
        .exclude(external_id="")
        .exclude(external_status="")
        .exists()
    )


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
        if "filtered" in updates:
            tallies_validity_changed(assignment_ids=[locked.pk])
    return True


def _withdrawn_on_crowd(*, assignment: Assignment, item: RemoteAssignment) -> bool:
    """The crowd says the worker gave the assignment back or ran out of time (Prolific's RETURNED,
    TIMED-OUT): it is never paid, so nothing saved under it counts. A live claim ends (returned or
    expired), work saved here stops counting (filtered; its slot reopens if it held one) and the
    crowd's state is kept; the crowd offers the place again by itself. True if anything changed.

    Locking: the assignment row (``FOR UPDATE``) then its HIT's counter, in one transaction.
    """
    status = AssignmentStatus.RETURNED if item.status == RemoteStatus.RETURNED else AssignmentStatus.EXPIRED
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.external_status == item.status:
            return False
        counted = Assignment.objects.filter(HOLDS_SLOT, pk=locked.pk).exists()
        updates: dict[str, Any] = {"external_status": item.status, "status": status}
        if locked.status in SUBMITTED_STATUSES:
            updates["filtered"] = True
        Assignment.objects.filter(pk=locked.pk).update(**updates)
        if updates.get("filtered") and not locked.filtered:
            tallies_validity_changed(assignment_ids=[locked.pk])
        if counted:
            _release_slot(hit_id=locked.hit_id)
    return True


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
        counted = Assignment.objects.filter(HOLDS_SLOT, pk=locked.pk).exists()
        Assignment.objects.filter(pk=locked.pk).update(
            external_unknown=True, filtered=True, status=AssignmentStatus.REJECTED
        )
        if not locked.filtered:
            tallies_validity_changed(assignment_ids=[locked.pk])
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
    # Orphans are rejected under either policy: the page saves a worker's answers before it hands the
    # assignment to the crowd, and no forged visit can keep a real worker from saving, so a submission
    # with no work here was made without the work. Left alone, the crowd would pay it by itself
    # (MTurk's auto-approval, Prolific's). Prolific takes the category for missing data (NO_DATA).
    postings = {posting.external_id: posting for posting in RemoteHIT.objects.filter(hit__batch=batch)}
    backend = get_backend(batch.backend)
    for item in remote:
        if item.external_id not in report.orphans or item.status != RemoteStatus.SUBMITTED:
            continue
        if item.submitted_at is not None and item.submitted_at > now - hold:
            continue
        posting = postings.get(item.hit_external_id)
        # The crowd only needs the ids: unsaved rows carry them without inventing local work (a
        # Prolific submission whose participant never opened the page has no HIT here).
        stand_in = Assignment(
            hit=posting.hit if posting is not None else HIT(batch=batch), external_id=item.external_id
        )
        try:
            backend.reject(assignment=stand_in, message=NO_WORK_MESSAGE)
            report.rejected += 1
        except BackendError as error:
            report.errors.append(f"orphan {item.external_id}: {error}")


def _record_orphans(*, batch: Batch, remote: Sequence[RemoteAssignment], report: SyncReport) -> None:
    """Keep this sync's orphans on the batch (``external["orphans"]``) with their crowd state, for the
    crowd page and for re-collection: work the crowd took in (and may pay) but that never reached us."""
    if not report.orphans:
        return
    postings = dict(RemoteHIT.objects.filter(hit__batch=batch).values_list("external_id", "hit_id"))
    current = Batch.objects.filter(pk=batch.pk).values_list("external", flat=True).first() or {}
    known = {orphan["assignment"]: orphan for orphan in current.get("orphans", [])}
    for item in remote:
        if item.external_id in report.orphans and item.hit_external_id in postings:
            known[item.external_id] = {
                "assignment": item.external_id,
                "worker": item.worker_external_id,
                "hit": postings[item.hit_external_id],
                "status": item.status,
            }
    Batch.objects.filter(pk=batch.pk).update(external=_merged_external(batch, {"orphans": list(known.values())}))


def _push_blocks(*, batch: Batch, report: SyncReport) -> int:
    """Block on the crowd the workers of this batch who are blocked here; each at most once per batch."""
    backend = get_backend(batch.backend)
    if BLOCK not in backend.capabilities:
        # The platform's own block keeps them out of this crowd's pages.
        return 0
    done = set(batch.external.get("blocked_workers", []))
    workers = (
        Worker.objects.filter(kind=backend.worker_kind, blocked=True, assignments__hit__batch=batch)
        .exclude(external_id__in=done)
        .distinct()
        .order_by("id")
    )
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


def hit_recollect(*, hit: HIT, budget: Decimal | None = None) -> int:
    """Offer a HIT's missing valid assignments on its crowd again; returns how many were posted.

    Missing = required minus active (``HOLDS_SLOT``). The backend subtracts what the crowd still
    offers or has in progress, so calling this again changes nothing until more work is lost;
    it posts nothing beyond ``budget`` dollars (fees included) and says so.
    """
    hit = HIT.objects.select_related("batch").get(pk=hit.pk)
    missing = hit.assignments_required - hit.assignments_active
    if missing <= 0:
        return 0
    return get_backend(hit.batch.backend).recollect(hit=hit, missing=missing, budget=budget)
