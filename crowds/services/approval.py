"""Paying and managing crowd workers: approve, reject, bonus, block, notify, the review policy.

See ``crowds.services.publishing`` for the rules every crowd operation follows.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.activity import activity_record
from annotation.models import ActivityKind, Worker
from annotation.tallies import tallies_validity_changed
from crowdlex.followup import benchmark_refresh_queue
from crowds.interface import (
    BLOCK,
    BONUS,
    NOTIFY,
    BackendError,
    NotifyResult,
    RemoteStatus,
    backend_of_worker_kind,
    get_backend,
    queue_backend_names,
)
from crowds.selectors import crowd_limits
from crowds.services.publishing import (
    CrowdActionRefused,
    _confirmed_by_crowd,
    _merged_external,
    _release_slot,
    confirmed_by_crowd,
)
from hits.budget import BudgetExceeded, budget_check
from hits.models import (
    SUBMITTED_STATUSES,
    Assignment,
    AssignmentStatus,
    Batch,
    Bonus,
    BonusStatus,
    FilteredPolicy,
)
from hits.services.workers import worker_block


def assignment_approve(*, assignment: Assignment, message: str = "", by: Any = None) -> Assignment:
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
    with transaction.atomic():
        approved = Assignment.objects.filter(
            pk=assignment.pk, status=AssignmentStatus.SUBMITTED, external_unknown=False
        ).update(**updates)
        if approved:
            _record(assignment, ActivityKind.APPROVED, by=by, paid=assignment.hit.batch.reward)
    assignment.refresh_from_db()
    return assignment


def assignment_reject(*, assignment: Assignment, message: str = "", by: Any = None) -> Assignment:
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
            _record(assignment, ActivityKind.REJECTED, by=by, message=message)
            if not locked.filtered:
                tallies_validity_changed(assignment_ids=[locked.pk])
                _release_slot(hit_id=locked.hit_id)
                benchmark_refresh_queue([batch.benchmark_id])
    assignment.refresh_from_db()
    return assignment


def _record(assignment: Assignment, kind: str, *, by: Any, paid: Decimal | None = None, message: str = "") -> None:
    """The activity log's entry for a decision on one assignment (the platform's own when ``by`` is None)."""
    worker = assignment.worker
    verb = "approved" if kind == ActivityKind.APPROVED else "rejected"
    activity_record(
        benchmark=assignment.hit.batch.benchmark_id,
        kind=kind,
        summary=f"assignment {assignment.pk} of {worker.external_id} in batch {assignment.hit.batch_id} {verb}"
        + (f", ${paid} paid" if paid is not None else ""),
        by=by,
        result={
            "assignment": assignment.pk,
            "batch": assignment.hit.batch_id,
            "worker": worker.external_id,
            **({"reward": str(paid)} if paid is not None else {}),
            **({"message": message[:200]} if message else {}),
        },
    )


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
    above_limit_confirmed: bool = False,
) -> Bonus:
    """Give the worker of an assignment a bonus, once per reason, recorded first and then sent with a unique token.

    The Bonus row (with its token) is committed before the crowd is asked, so a send that fails
    or times out is retried by the next sync with the same token and the worker is paid once.
    The same reason for the same assignment is the same bonus (a re-run command or a
    double-posted form pays once): it is returned, sent again if still pending; another amount
    under that reason is refused. A bonus above the benchmark's limit (``CrowdLimits``, 10 rewards
    by default) needs ``above_limit_confirmed``. Work the crowd does not know is never paid.
    Returns the row: ``status`` sent, pending (will be retried; ``error`` says why) or failed
    (refused by the crowd; ``error`` has its message).
    """
    value = _parse_amount(amount)
    reason = reason.strip()
    if not reason:
        raise CrowdActionRefused("a bonus needs a reason; the worker sees it")
    assignment = Assignment.objects.select_related("hit__batch", "worker").get(pk=assignment.pk)
    existing = Bonus.objects.filter(assignment=assignment, reason=reason).first()
    if existing is not None:
        if existing.amount != value:
            raise CrowdActionRefused(
                f"assignment {assignment.pk} already has a ${existing.amount} bonus for this reason; "
                "give another reason for another bonus"
            )
        return bonus_send(bonus=existing)
    if assignment.status not in SUBMITTED_STATUSES:
        raise CrowdActionRefused(f"assignment {assignment.pk} has no submitted work to reward")
    if assignment.external_unknown:
        raise CrowdActionRefused(
            f"assignment {assignment.pk} is unknown to the crowd ({assignment.external_id}): it is never paid"
        )
    batch = assignment.hit.batch
    backend = get_backend(batch.backend)
    if BONUS not in backend.capabilities:
        raise CrowdActionRefused(f"the {backend.label} pays no bonuses")
    if backend.remote and not assignment.external_status:
        raise CrowdActionRefused(f"the crowd has not confirmed assignment {assignment.pk} yet: sync the batch first")
    rewards = crowd_limits(benchmark=batch.benchmark).bonus_limit_rewards
    if value > rewards * batch.reward and not above_limit_confirmed:
        raise CrowdActionRefused(
            f"${value} is above this benchmark's bonus limit of ${rewards * batch.reward:.2f} "
            f"({rewards} rewards): confirm it to send it"
        )
    try:
        # A bonus is new money, not the pay of submitted work: the budget cap applies (docs/design.md §16).
        budget_check(
            benchmark=batch.benchmark_id,
            cost=value + get_backend(batch.backend).fees.bonus_fee(value),
            what=f"a ${value} bonus for assignment {assignment.pk}",
        )
    except BudgetExceeded as error:
        raise CrowdActionRefused(str(error)) from None
    try:
        with transaction.atomic():
            bonus = Bonus.objects.create(
                assignment=assignment,
                worker=assignment.worker,
                amount=value,
                reason=reason,
                token=f"crowdlex-bonus-{uuid.uuid4().hex}",
                created_by=created_by,
            )
    except IntegrityError:
        # The same bonus posted twice at once: the other request recorded it.
        return worker_bonus(assignment=assignment, amount=value, reason=reason)
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
    if bonus.status != BonusStatus.PENDING:
        activity_record(
            benchmark=bonus.assignment.hit.batch.benchmark_id,
            kind=ActivityKind.BONUSED,
            summary=f"${bonus.amount} bonus to {bonus.worker.external_id} for assignment {bonus.assignment_id}: "
            + (bonus.status if not bonus.error else f"{bonus.status} ({bonus.error[:200]})"),
            by=bonus.created_by,
            result={
                "bonus": bonus.pk,
                "assignment": bonus.assignment_id,
                "worker": bonus.worker.external_id,
                "amount": str(bonus.amount),
                "status": bonus.status,
            },
        )
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
    worker_block(worker=worker, reason=reason, by=by)
    backend = backend_of_worker_kind(worker.kind)
    if backend is not None and BLOCK in backend.capabilities:
        backend.block(worker=worker, reason=reason)
        for batch in Batch.objects.filter(hits__assignments__worker=worker, backend=backend.name).distinct():
            done = set(batch.external.get("blocked_workers", []))
            if worker.external_id not in done:
                Batch.objects.filter(pk=batch.pk).update(
                    external=_merged_external(batch, {"blocked_workers": sorted(done | {worker.external_id})})
                )
    worker.refresh_from_db()
    return worker


def workers_notify(*, workers: Sequence[Worker], subject: str, text: str) -> NotifyResult:
    """Message workers through their crowd (MTurk: notify_workers, 100 at a time; Prolific: one message each)."""
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
        # A worker no crowd's link brought (a local account...) is the queue's.
        backend = backend_of_worker_kind(kind) or get_backend(queue_backend_names()[0])
        part = backend.notify(workers=group, subject=subject, text=text)
        result.notified += part.notified
        result.failures.update(part.failures)
    return result


def batch_notify_recipients(*, batch: Batch) -> list[Worker]:
    """Every worker who submitted work in a batch that the crowd confirmed (found in its own list
    under that worker): ids named only in a page's URL may be anyone's, so they are never written to
    (docs/design.md §4)."""
    submitted = Assignment.objects.filter(hit__batch=batch, status__in=SUBMITTED_STATUSES)
    if get_backend(batch.backend).remote:
        submitted = submitted.filter(confirmed_by_crowd(), external_unknown=False)
    return list(Worker.objects.filter(pk__in=submitted.values("worker_id")).distinct().order_by("id"))


def batch_notify(*, batch: Batch, subject: str, text: str) -> NotifyResult:
    """Message the batch's ``batch_notify_recipients``, on a crowd that can message its workers."""
    backend = get_backend(batch.backend)
    if NOTIFY not in backend.capabilities:
        raise CrowdActionRefused(f"the {backend.label} cannot message its workers")
    return workers_notify(workers=batch_notify_recipients(batch=batch), subject=subject, text=text)


def batch_review_policy_update(*, batch: Batch, filtered_policy: str, rejection_message: str) -> Batch:
    """Set what the sync does with filtered work on a paid crowd, and the message a rejection carries."""
    if filtered_policy not in FilteredPolicy.values:
        raise CrowdActionRefused(f"policy must be one of {', '.join(FilteredPolicy.values)}, not {filtered_policy!r}")
    rejection_message = rejection_message.strip()
    if filtered_policy == FilteredPolicy.REJECT and not rejection_message:
        raise CrowdActionRefused("rejecting filtered work needs a message to the workers")
    if len(rejection_message) > 1024:
        raise CrowdActionRefused("the rejection message is longer than MTurk's 1024 characters")
    shortest = get_backend(batch.backend).rejection_message_min_length
    if filtered_policy == FilteredPolicy.REJECT and len(rejection_message) < shortest:
        raise CrowdActionRefused(f"this crowd needs a rejection message of at least {shortest} characters")
    Batch.objects.filter(pk=batch.pk).update(filtered_policy=filtered_policy, rejection_message=rejection_message)
    batch.refresh_from_db()
    return batch
