"""The local queue as a crowd backend: the platform itself is the record of every assignment.

Most operations are state changes the services make anyway, so here they are no-ops with a
stated meaning: nothing is paid through the platform, and a filtered assignment's slot reopens in
the queue by itself (``HIT.assignments_active``), so re-collection needs no new HITs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from crowds.interface.base import (
    ARRIVAL_QUEUE,
    BONUS,
    EXPIRE,
    CrowdActionRefused,
    CrowdPreview,
    NotifyResult,
    PublishResult,
    RemoteAssignment,
)
from crowds.interface.costs import NO_FEES, CostEstimate, PricedByFees, cost_estimate

if TYPE_CHECKING:
    from django import forms
    from django.urls import URLPattern

    from annotation.models import Worker
    from crowdlex.progress import Progress
    from crowds.selectors import PublishPlan
    from hits.models import HIT, Assignment, Batch


class LocalBackend(PricedByFees):
    name = "local"
    label = "local queue"
    short_label = "local queue"
    posting_name = "batch"
    remote = False
    # Annotators sign in here and claim HITs from the queue; their submission is the record.
    arrival = ARRIVAL_QUEUE
    worker_kind = ""
    worker_label = "local account"
    # The lab pays local annotators itself; a bonus is recorded here only (``bonus``), and closing the
    # batch stops the queue from offering it (``expire``).
    capabilities = frozenset({BONUS, EXPIRE})
    fees = NO_FEES
    rejection_message_min_length = 1
    inherited_settings: tuple[str, ...] = ()
    pause_meaning = (
        "The queue hands out none of its HITs while it is paused; annotators holding one may still submit it."
    )

    # Nothing to wait for: the queue's own record is the only one.
    approval_hold = timedelta(0)
    reconcile_grace = timedelta(0)

    def publish_form(self, *, batch: Batch, data: Mapping[str, Any] | None = None) -> forms.Form:
        from django import forms

        # Opening a batch in the queue takes no options.
        return forms.Form(data)

    def publish_options(self, *, form: forms.Form) -> dict[str, Any]:
        return {}

    def publish_prepare(self, *, batch: Batch, options: Mapping[str, Any]) -> list[str]:
        if options:
            raise CrowdActionRefused(f"the local queue takes no publish options ({', '.join(sorted(options))})")
        return []

    def publish_api_fields(self) -> dict[str, Any]:
        return {}

    def publish_api_options(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def publish_where(self, *, batch: Batch, options: Mapping[str, Any]) -> str:
        return "the local queue"

    def publish_plan(
        self,
        *,
        plan: PublishPlan,
        batch: Batch,
        pending: Sequence[HIT],
        sandbox: bool | None,
        median_seconds: float | None,
    ) -> PublishPlan:
        # Opening the batch sends nothing anywhere.
        return plan

    def crowd_page_context(self, *, batch: Batch, environment: str) -> dict[str, Any]:
        return {}

    def public_urls(self) -> list[URLPattern]:
        # Annotators sign in and work from the queue's own pages (hits.urls).
        return []

    def worker_preview(self) -> CrowdPreview:
        """The annotator's HIT page of the queue; the queue has no public page of its own."""
        from hits.views.annotator import local_preview_page

        return CrowdPreview(
            page=lambda request, hit, extra: local_preview_page(request, hit, extra=extra),
            viewer={"is_researcher": False, "is_annotator": True},
            public_url=lambda batch, hit: "",
        )

    def publish(self, *, batch: Batch, progress: Progress | None = None) -> PublishResult:
        """Open the batch in the queue; its HITs are offered to local annotators from now on."""
        from hits.models import BatchStatus

        if batch.status == BatchStatus.DRAFT:
            batch.status = BatchStatus.OPEN
            batch.save(update_fields=["status"])
        return PublishResult(hits_existing=batch.hits.count())

    def hits_added(self, *, batch_id: int) -> None:
        # The queue offers every HIT of an open batch.
        return None

    def sync(self, *, batch: Batch) -> list[RemoteAssignment] | None:
        # The database is the record; there is nothing to reconcile with.
        return None

    def expire(self, *, batch: Batch) -> int:
        """Close the batch: the queue offers none of its HITs any more (claims in progress may finish)."""
        from hits.models import BatchStatus

        if batch.status != BatchStatus.CLOSED:
            batch.status = BatchStatus.CLOSED
            batch.save(update_fields=["status"])
        return batch.hits.count()

    def withdraw(self, *, batch: Batch, hits: Sequence[HIT]) -> int:
        # The queue never offers a HIT whose target is done (hits.selectors.OFFERED_HIT).
        return 0

    def pause(self, *, batch: Batch) -> None:
        # The claim itself reads Batch.paused_at (hits.services.queue): nothing to tell anyone.
        return None

    def resume(self, *, batch: Batch, paused_at: datetime) -> None:
        return None

    def approve(self, *, assignment: Assignment, message: str) -> None:
        # Approval is the status the service records; local annotators are not paid through the platform.
        return None

    def reject(self, *, assignment: Assignment, message: str) -> None:
        return None

    def bonus(self, *, worker: Worker, assignment: Assignment, amount: Decimal, reason: str, token: str) -> None:
        # The Bonus row is the record; the lab pays local annotators itself.
        return None

    def block(self, *, worker: Worker, reason: str) -> None:
        # Worker.blocked, set by the service, is what keeps the queue from offering HITs.
        return None

    def notify(self, *, workers: Sequence[Worker], subject: str, text: str) -> NotifyResult:
        return NotifyResult(
            notified=0, failures={worker.external_id: "local annotators are not messaged" for worker in workers}
        )

    def recollect(self, *, hit: HIT, missing: int, budget: Decimal | None = None) -> int:
        return 0

    def price(
        self, *, assignments_per_hit: Sequence[int], reward: Decimal, seconds_per_assignment: float | None = None
    ) -> CostEstimate:
        return cost_estimate(
            assignments_per_hit=assignments_per_hit,
            reward=reward,
            with_fee=False,
            seconds_per_assignment=seconds_per_assignment,
        )
