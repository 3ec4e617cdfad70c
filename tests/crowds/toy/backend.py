"""The toy panel as a crowd backend: everything a crowd declares and does, against the fake panel."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django import forms
from django.db import transaction
from django.urls import URLPattern, path
from django.utils import timezone
from rest_framework import serializers

from crowds.interface import (
    ARRIVAL_LINK,
    BLOCK,
    BONUS,
    EXPIRE,
    EXTEND,
    NOTIFY,
    BackendError,
    CrowdActionRefused,
    CrowdPreview,
    NotifyResult,
    PublishResult,
    RemoteAssignment,
)
from crowds.interface.base import crowd_worker_viewer
from crowds.interface.costs import FeeRule, PricedByFees
from tests.crowds.toy.panel import PANEL

if TYPE_CHECKING:
    from annotation.models import Worker
    from crowdlex.progress import Progress
    from crowds.selectors import PublishPlan
    from hits.models import HIT, Assignment, Batch

AUDIENCES = ("students", "public")


class ToyPublishForm(forms.Form):
    audience = forms.ChoiceField(choices=[(audience, audience) for audience in AUDIENCES])
    confirm_money = forms.BooleanField(required=True, label="I understand that the panel pays its members.")


class ToyBackend(PricedByFees):
    name = "toypanel"
    label = "Toy panel"
    short_label = "Toy panel"
    posting_name = "posting"
    remote = True
    arrival = ARRIVAL_LINK
    worker_kind = "toypanel"
    worker_label = "toy panelist"
    capabilities = frozenset({BLOCK, BONUS, NOTIFY, EXTEND, EXPIRE})
    rejection_message_min_length = 1
    inherited_settings: tuple[str, ...] = ("audience",)
    pause_meaning = "Pausing closes the panel's postings to new members; those at work may still hand it in."
    fees = FeeRule(rate=Decimal("0.10"))
    approval_hold = timedelta(0)
    reconcile_grace = timedelta(minutes=5)

    # -- what the pages show ------------------------------------------------------------------

    def worker_preview(self) -> CrowdPreview:
        from tests.crowds.toy.views import toy_preview_page

        return CrowdPreview(page=toy_preview_page, viewer=crowd_worker_viewer(), public_url=lambda batch, hit: "")

    def public_urls(self) -> list[URLPattern]:
        from tests.crowds.toy.views import toy_hit

        return [path("toypanel/hit/<str:token>/", toy_hit, name="toypanel-hit")]

    def crowd_page_context(self, *, batch: Batch, environment: str) -> dict[str, Any]:
        return {
            "worker_link": "",
            "requester_link": "https://panel.invalid/",
            "bonus_fee_note": "10 %",
            "environments": [],
            "recollect_note": " (by adding places to its postings)",
        }

    # -- publish options ----------------------------------------------------------------------

    def publish_form(self, *, batch: Batch, data: Mapping[str, Any] | None = None) -> forms.Form:
        if data is not None:
            return ToyPublishForm(data)
        return ToyPublishForm(initial={"audience": batch.external.get("audience", AUDIENCES[0])})

    def publish_options(self, *, form: forms.Form) -> dict[str, Any]:
        return {"audience": form.cleaned_data["audience"]}

    def publish_api_fields(self) -> dict[str, Any]:
        return {"toy_audience": serializers.ChoiceField(choices=list(AUDIENCES), required=False)}

    def publish_api_options(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {"audience": data["toy_audience"]} if data.get("toy_audience") else {}

    def publish_prepare(self, *, batch: Batch, options: Mapping[str, Any]) -> list[str]:
        unknown = sorted(set(options) - {"audience"})
        if unknown:
            raise CrowdActionRefused(f"{', '.join(unknown)}: not a publish option of the toy panel")
        audience = options.get("audience")
        if audience is None:
            return []
        if audience not in AUDIENCES:
            raise CrowdActionRefused(f"the toy panel's audience is one of {', '.join(AUDIENCES)}, not {audience!r}")
        batch.external = {**batch.external, "audience": audience}
        return ["external"]

    def publish_where(self, *, batch: Batch, options: Mapping[str, Any]) -> str:
        return "the toy panel"

    def publish_plan(
        self,
        *,
        plan: PublishPlan,
        batch: Batch,
        pending: Sequence[HIT],
        sandbox: bool | None,
        median_seconds: float | None,
    ) -> PublishPlan:
        plan.details = ["Toy panel posting:", f"  Audience: {batch.external.get('audience', AUDIENCES[0])}"]
        return plan

    # -- the crowd's record ---------------------------------------------------------------------

    def publish(self, *, batch: Batch, progress: Progress | None = None) -> PublishResult:
        from hits.models import HIT, RemoteHIT

        result = PublishResult()
        pending = list(HIT.objects.filter(batch=batch).exclude(remote_hits__round=0).order_by("id"))
        result.hits_existing = HIT.objects.filter(batch=batch, remote_hits__round=0).count()
        for done, hit in enumerate(pending, start=1):
            posting = PANEL.post(hit_id=hit.pk, batch_id=batch.pk, places=hit.assignments_required)
            with transaction.atomic():
                RemoteHIT.objects.create(
                    hit=hit, round=0, external_id=posting, max_assignments=hit.assignments_required
                )
                HIT.objects.filter(pk=hit.pk).update(external_id=posting)
            result.hits_created += 1
            if progress is not None:
                progress(done, len(pending))
        result.hit_type_id = f"batch-{batch.pk}"
        return result

    def hits_added(self, *, batch_id: int) -> None:
        from crowds.tasks import batch_publish_task

        batch_publish_task.delay(batch_id)

    def sync(self, *, batch: Batch) -> list[RemoteAssignment]:
        mine = {posting for posting, found in PANEL.postings.items() if found.batch_id == batch.pk}
        return [
            RemoteAssignment(
                external_id=item.id,
                worker_external_id=item.worker,
                hit_external_id=item.posting,
                status=item.status,
                submitted_at=item.submitted_at,
            )
            for item in PANEL.submissions.values()
            if item.posting in mine
        ]

    def _postings(self, batch: Batch, hits: Sequence[HIT] | None = None) -> list[str]:
        wanted = None if hits is None else {hit.pk for hit in hits}
        return [
            posting
            for posting, found in PANEL.postings.items()
            if found.batch_id == batch.pk and found.open and (wanted is None or found.hit_id in wanted)
        ]

    def expire(self, *, batch: Batch) -> int:
        return self.withdraw(batch=batch, hits=None)  # type: ignore[arg-type]

    def withdraw(self, *, batch: Batch, hits: Sequence[HIT] | None) -> int:
        from hits.models import RemoteHIT

        postings = self._postings(batch, hits)
        for posting in postings:
            PANEL.postings[posting].open = False
        RemoteHIT.objects.filter(external_id__in=postings).update(expired_at=timezone.now())
        return len(postings)

    def pause(self, *, batch: Batch) -> None:
        for posting in self._postings(batch):
            PANEL.postings[posting].paused = True

    def resume(self, *, batch: Batch, paused_at: datetime) -> None:
        for posting in self._postings(batch):
            PANEL.postings[posting].paused = False

    def _submission(self, assignment: Assignment) -> Any:
        found = PANEL.submissions.get(assignment.external_id)
        if found is None:
            raise BackendError(f"the toy panel has no submission {assignment.external_id}", operation="review")
        return found

    def approve(self, *, assignment: Assignment, message: str) -> None:
        self._submission(assignment).status = "Approved"

    def reject(self, *, assignment: Assignment, message: str) -> None:
        self._submission(assignment).status = "Rejected"

    def bonus(self, *, worker: Worker, assignment: Assignment, amount: Decimal, reason: str, token: str) -> None:
        # Paid once per token, however often it is asked.
        PANEL.bonuses.setdefault(token, (worker.external_id, amount))

    def block(self, *, worker: Worker, reason: str) -> None:
        PANEL.blocked.add(worker.external_id)

    def notify(self, *, workers: Sequence[Worker], subject: str, text: str) -> NotifyResult:
        for worker in workers:
            PANEL.messages.append((worker.external_id, subject))
        return NotifyResult(notified=len(workers))

    def recollect(self, *, hit: HIT, missing: int, budget: Decimal | None = None) -> int:
        found = [posting for posting in self._postings(hit.batch, [hit])]
        if not found:
            return 0
        PANEL.postings[found[-1]].places += missing
        return missing

    # -- money ----------------------------------------------------------------------------------
