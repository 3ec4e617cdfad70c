"""What the confirmation pages of the collection's destructive actions say, in figures
(``crowdlex.confirm``): closing a batch, excluding a candidate, blocking a worker. The crowd's own
(deciding submitted work now, notifying a batch's workers, expiring batches) are ``crowds.confirmations``."""

from __future__ import annotations

from django.db.models import Sum
from django.http import HttpRequest, HttpResponse

from annotation.models import Candidate, Label, Worker
from crowdlex.confirm import confirmation_page
from hits.models import Assignment, AssignmentStatus, Batch, BatchStatus, HITItem
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
