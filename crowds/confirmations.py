"""What the confirmation pages of a crowd's destructive actions say, in figures (``crowdlex.confirm``):
deciding submitted work now, notifying a batch's workers and expiring batches from the admin."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.db.models import Count
from django.http import HttpRequest, HttpResponse

from crowdlex.confirm import confirmation_page
from crowds.interface import RemoteStatus
from crowds.interface.costs import assignments_cost
from crowds.selectors import batch_fees
from crowds.services.approval import batch_notify_recipients
from hits.models import Assignment, AssignmentStatus, Batch, FilteredPolicy, RemoteHIT


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
