"""What the confirmation pages of the collection's destructive actions say, in figures
(``crowdlex.confirm``): closing a batch, excluding a candidate, blocking a worker, deciding submitted
work now, notifying a batch's workers and expiring batches from the admin."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.db.models import Count, Sum
from django.http import HttpRequest, HttpResponse

from annotation.models import Candidate, Label, Worker
from crowdlex.confirm import confirmation_page
from crowds.interface import RemoteStatus
from crowds.interface.costs import assignments_cost
from crowds.selectors import batch_fees
from crowds.services.approval import batch_notify_recipients
from hits.models import Assignment, AssignmentStatus, Batch, BatchStatus, FilteredPolicy, HITItem, RemoteHIT
from hits.services.workers import worker_benchmark_ids

UNDO_FROM_LOG = "You can undo it from the benchmark's activity log."


def batch_close_confirmation(request: HttpRequest, *, batch: Batch, cancel_url: str) -> HttpResponse:
    assignments = Assignment.objects.filter(hit__batch=batch)
    submitted = assignments.filter(status=AssignmentStatus.SUBMITTED).count()
    in_progress = assignments.filter(status=AssignmentStatus.CLAIMED).count()
    wanted = batch.hits.aggregate(total=Sum("assignments_required"))["total"] or 0
    workers = assignments.values("worker_id").distinct().count()
    return confirmation_page(
        request,
        title=f"Close batch {batch.pk}",
        effects=[
            f"stop offering its {batch.hits.count()} HITs: {max(wanted - submitted, 0)} of its {wanted} "
            "assignments are still to collect",
            f"leave the {in_progress} claims in progress running until they are submitted or expire",
            f"keep the work of its {workers} workers ({submitted} submitted assignments)",
        ],
        button="Close the batch",
        cancel_url=cancel_url,
        undo=f"{UNDO_FROM_LOG} Reopening it needs no other open batch of step {batch.step} to hold its candidates.",
    )


def candidate_exclude_confirmation(request: HttpRequest, *, candidate: Candidate, cancel_url: str) -> HttpResponse:
    labels = Label.objects.filter(candidate=candidate)
    open_hits = (
        HITItem.objects.filter(candidate=candidate, hit__batch__status=BatchStatus.OPEN)
        .values("hit_id")
        .distinct()
        .count()
    )
    return confirmation_page(
        request,
        title=f"Exclude “{candidate.text}”",
        effects=[
            f"leave “{candidate.text}” of target {candidate.target_id} out of statistics, scores and exports, "
            f"with its {labels.count()} labels from {labels.values('worker_id').distinct().count()} workers",
            f"stop collecting it: {open_hits} HITs of open batches hold it, and no new HIT will",
        ],
        button="Exclude the candidate",
        cancel_url=cancel_url,
        undo=f"Nothing is deleted. {UNDO_FROM_LOG}",
    )


def worker_block_confirmation(request: HttpRequest, *, worker: Worker, cancel_url: str) -> HttpResponse:
    assignments = Assignment.objects.filter(worker=worker)
    return confirmation_page(
        request,
        title=f"Block {worker.external_id}",
        effects=[
            f"offer {worker.external_id} no more HITs, in each of the {len(worker_benchmark_ids(worker))} "
            "benchmarks they worked in and every other one",
            f"stop counting their {Label.objects.filter(worker=worker).count()} labels "
            f"({assignments.filter(status=AssignmentStatus.SUBMITTED).count()} submitted assignments)",
            f"filter the {assignments.filter(status=AssignmentStatus.CLAIMED).count()} HITs they hold "
            "when they submit them",
        ],
        button=f"Block {worker.external_id}",
        cancel_url=cancel_url,
        undo=UNDO_FROM_LOG,
    )


def sync_decide_confirmation(request: HttpRequest, *, batch: Batch, crowd_name: str, cancel_url: str) -> HttpResponse:
    """Deciding now reviews every submitted assignment the crowd holds as submitted, without the hold:
    counted work is approved and filtered work follows the batch's policy (``batch_sync``'s review)."""
    ready = Assignment.objects.filter(
        hit__batch=batch,
        status=AssignmentStatus.SUBMITTED,
        external_status=RemoteStatus.SUBMITTED,
        external_unknown=False,
    )
    approving = ready if batch.filtered_policy == FilteredPolicy.APPROVE else ready.filter(filtered=False)
    rejected = ready.count() - approving.count()
    fees = batch_fees(batch=batch)
    sizes = approving.values("hit__assignments_required").annotate(count=Count("id"))
    cost = sum(
        (
            assignments_cost(
                reward=batch.reward, count=row["count"], hit_size=row["hit__assignments_required"], fees=fees
            )
            for row in sizes
        ),
        Decimal("0"),
    )
    approved = approving.count()
    return confirmation_page(
        request,
        title=f"Sync batch {batch.pk} and decide its submitted work now",
        effects=[
            f"approve {approved} submitted assignments and pay their workers ${batch.reward * approved} "
            f"in rewards (${cost} with {crowd_name}'s fees)",
            f"reject {rejected} filtered assignments: their workers are not paid and the rejection counts against them",
            f"reject the work {crowd_name} took in with no answers here, and re-collect the HITs short of "
            "valid work, as every sync does",
        ],
        button=f"Sync and pay ${cost}",
        cancel_url=cancel_url,
    )


def batch_notify_confirmation(
    request: HttpRequest, *, batch: Batch, subject: str, crowd_name: str, cancel_url: str
) -> HttpResponse:
    workers = batch_notify_recipients(batch=batch)
    return confirmation_page(
        request,
        title=f"Message the workers of batch {batch.pk}",
        effects=[
            f"send “{subject}” through {crowd_name} to the {len(workers)} workers whose submitted work "
            f"{crowd_name} confirmed",
        ],
        button=f"Message {len(workers)} workers",
        cancel_url=cancel_url,
    )


def batches_expire_confirmation(request: HttpRequest, *, batches: Sequence[Batch], cancel_url: str) -> HttpResponse:
    ids = [batch.pk for batch in batches]
    live = RemoteHIT.objects.filter(hit__batch_id__in=ids, expired_at__isnull=True)
    in_progress = Assignment.objects.filter(hit__batch_id__in=ids, status=AssignmentStatus.CLAIMED).count()
    return confirmation_page(
        request,
        title=f"Expire every HIT of {len(ids)} batches",
        effects=[
            f"expire the {live.count()} live postings of {live.values('hit_id').distinct().count()} HITs "
            f"on their crowd (batches {', '.join(str(pk) for pk in ids)}): no worker can accept them any more",
            f"close the {len(ids)} batches",
            f"let the {in_progress} assignments in progress arrive, to be reviewed and paid as usual",
        ],
        button=f"Expire the HITs of {len(ids)} batches",
        cancel_url=cancel_url,
    )
