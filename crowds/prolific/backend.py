"""The Prolific crowd backend: one Prolific study per batch (docs/prolific.md).

A study is a number of places; each participant who takes one is sent to the batch's entry page
(``crowds.prolific.views``), which gives them one HIT of the batch that still needs work. So the
study's places are the batch's assignments, and re-collection adds places: Prolific offers a place
again by itself when a submission is returned, times out or is rejected, and this backend adds
places when the work still to come exceeds the places still open (``_ensure_places``, computed
from Prolific's own counts each time, so running it again adds nothing).

Every HIT gets a ``RemoteHIT`` row naming the study (``<study id>:<HIT id>``): the crowd-blind
services read postings from there, and a sync confirms an assignment when its submission (the
``SESSION_ID`` it was opened with) is in the study's list under the same participant.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from crowds.interface.base import (
    ARRIVAL_LINK,
    BONUS,
    EXPIRE,
    EXTEND,
    NOTIFY,
    CrowdActionRefused,
    CrowdPreview,
    NotifyResult,
    PublishResult,
    RemoteAssignment,
    RemoteStatus,
    crowd_worker_viewer,
)
from crowds.interface.costs import CostEstimate, FeeRule, assignments_cost, cost_estimate, hourly_wage
from crowds.prolific.client import (
    API,
    APPROVED,
    AWAITING_REVIEW,
    DEFAULT_REJECTION_CATEGORY,
    MIN_REJECTION_MESSAGE,
    NAME,
    REJECTED,
    REJECTION_CATEGORIES,
    RETURNED,
    TIMED_OUT,
    UNPUBLISHED,
    ProlificClient,
    ProlificError,
    cents,
    entry_url,
    estimated_minutes,
    prolific_client,
    rejection_category,
    study_params,
    study_token,
)

if TYPE_CHECKING:
    from django import forms
    from django.urls import URLPattern

    from annotation.models import Worker
    from crowdlex.progress import Progress
    from crowds.selectors import PublishPlan
    from hits.models import HIT, Assignment, Batch

logger = logging.getLogger(__name__)

STATUSES = {
    AWAITING_REVIEW: RemoteStatus.SUBMITTED,
    APPROVED: RemoteStatus.APPROVED,
    # Paid too: only some workspaces may partially approve.
    "PARTIALLY APPROVED": RemoteStatus.APPROVED,
    REJECTED: RemoteStatus.REJECTED,
    RETURNED: RemoteStatus.RETURNED,
    TIMED_OUT: RemoteStatus.TIMED_OUT,
}
# A study that is live or about to be: STOP ends it.
RUNNING = {"ACTIVE", "PAUSED", "PUBLISHING", "SCHEDULED"}


def _study_options(*, batch: Batch, estimated_minutes: int | None, rejection_category: str | None) -> dict[str, Any]:
    """The study settings to keep on a Prolific batch, checked; refused once they can no longer change."""
    changes: dict[str, Any] = {}
    if estimated_minutes is not None:
        limit = max(1, int(batch.assignment_duration.total_seconds() // 60))
        if not 1 <= estimated_minutes <= limit:
            raise CrowdActionRefused(
                f"the estimated completion time must be 1 to {limit} minutes (the batch's assignment duration)"
            )
        if batch.external.get("study_id") and batch.external.get("estimated_minutes") != estimated_minutes:
            raise CrowdActionRefused(f"{batch}'s study exists already: its estimated time can no longer change")
        changes["estimated_minutes"] = estimated_minutes
    if rejection_category is not None:
        if rejection_category not in REJECTION_CATEGORIES:
            raise CrowdActionRefused(f"rejection category must be one of Prolific's: {', '.join(REJECTION_CATEGORIES)}")
        changes["rejection_category"] = rejection_category
    return changes


class ProlificBackend:
    name = NAME
    label = "Prolific"
    short_label = "Prolific"
    posting_name = "study"
    remote = True
    # Participants take a place in the study on Prolific, which sends them to its entry page.
    arrival = ARRIVAL_LINK
    worker_kind = "prolific"
    worker_label = "Prolific participant"
    # Prolific's API has no block (the platform's own keeps a participant out) and no qualification type.
    capabilities = frozenset({BONUS, NOTIFY, EXTEND, EXPIRE})
    rejection_message_min_length = MIN_REJECTION_MESSAGE
    # Its own study is made anew, with the parent's estimated time and rejection category.
    inherited_settings: tuple[str, ...] = ("estimated_minutes", "rejection_category")
    pause_meaning = (
        "Pausing pauses the study on Prolific: no new participant can start it; those who started may still "
        "complete it. Resuming starts the study again."
    )

    def __init__(self, client: ProlificClient | None = None) -> None:
        self._client = client

    @property
    def fees(self) -> FeeRule:
        # One rate on rewards and bonuses alike (PROLIFIC_SERVICE_FEE_RATE).
        return FeeRule(rate=settings.PROLIFIC_SERVICE_FEE_RATE)

    @property
    def approval_hold(self) -> timedelta:
        return timedelta(seconds=settings.PROLIFIC_APPROVAL_HOLD_SECONDS)

    @property
    def reconcile_grace(self) -> timedelta:
        return timedelta(seconds=settings.PROLIFIC_RECONCILE_GRACE_SECONDS)

    # -- plumbing ---------------------------------------------------------------------------

    def call(self, method: str, path: str, *, operation: str, **options: Any) -> dict[str, Any]:
        return (self._client or prolific_client()).call(method, path, operation=operation, **options)

    def _pages(self, path: str, *, operation: str) -> Iterator[dict[str, Any]]:
        """Every result of a paginated list, following ``_links.next.href`` (or ``next``)."""
        url: str | None = path
        while url:
            page = self.call("GET", url, operation=operation)
            yield from page.get("results", [])
            links = page.get("_links") or {}
            following = (links.get("next") or {}).get("href") if isinstance(links, dict) else None
            url = following or page.get("next") or None

    def _study_id(self, batch: Batch) -> str:
        study_id = str(batch.external.get("study_id", ""))
        if not study_id:
            raise ProlificError(f"{batch} has no Prolific study: publish it first", operation="study")
        return study_id

    def study(self, batch: Batch) -> dict[str, Any]:
        study_id = self._study_id(batch)
        return self.call("GET", f"{API}/studies/{study_id}/", operation="get study")

    def _find_study(self, token: str) -> dict[str, Any] | None:
        for item in self._pages(f"{API}/studies/", operation="list studies"):
            if item.get("internal_name") == token:
                return item
        return None

    # -- publishing -------------------------------------------------------------------------

    def publish_form(self, *, batch: Batch, data: Mapping[str, Any] | None = None) -> forms.Form:
        from crowds.prolific.forms import ProlificPublishForm

        if data is not None:
            return ProlificPublishForm(data)
        return ProlificPublishForm(
            initial={
                "estimated_minutes": estimated_minutes(batch),
                "rejection_category": rejection_category(batch) or DEFAULT_REJECTION_CATEGORY,
            }
        )

    def publish_options(self, *, form: forms.Form) -> dict[str, Any]:
        return {key: form.cleaned_data[key] for key in ("estimated_minutes", "rejection_category")}

    def publish_prepare(self, *, batch: Batch, options: Mapping[str, Any]) -> list[str]:
        """``estimated_minutes`` (the study's estimated completion time) and ``rejection_category``
        (what its rejections say) are kept on the batch (``Batch.external``) and taken by its step-3
        batch; the estimate is fixed once the study exists."""
        known = {"estimated_minutes", "rejection_category"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise CrowdActionRefused(
                f"{', '.join(unknown)}: not a publish option of {self.label}; it takes {', '.join(sorted(known))}"
            )
        changes = _study_options(
            batch=batch,
            estimated_minutes=options.get("estimated_minutes"),
            rejection_category=options.get("rejection_category"),
        )
        if not changes:
            return []
        batch.external = {**batch.external, **changes}
        return ["external"]

    def publish_api_fields(self) -> dict[str, Any]:
        from crowds.prolific.api import publish_api_fields

        return publish_api_fields()

    def publish_api_options(self, data: Mapping[str, Any]) -> dict[str, Any]:
        from crowds.prolific.api import publish_api_options

        return publish_api_options(data)

    def publish_where(self, *, batch: Batch, options: Mapping[str, Any]) -> str:
        return "Prolific"

    def publish_plan(
        self,
        *,
        plan: PublishPlan,
        batch: Batch,
        pending: Sequence[HIT],
        sandbox: bool | None,
        median_seconds: float | None,
    ) -> PublishPlan:
        """What a Prolific publish would create: the study's body, the places, the cost with Prolific's
        service fee, and the pay rate against Prolific's minimum at the estimated time (which Prolific
        checks when publishing) or at ``median_seconds`` when given."""
        plan.endpoint = settings.PROLIFIC_API_URL
        seconds = median_seconds if median_seconds is not None else estimated_minutes(batch) * 60
        plan.cost = self.price(
            assignments_per_hit=plan.assignments_per_hit, reward=batch.reward, seconds_per_assignment=seconds
        )
        code = str(batch.external.get("completion_code") or "(made when publishing)")
        plan.study = study_params(batch, places=plan.assignments, code=code)
        if batch.external.get("study_id"):
            plan.study["total_available_places"] = plan.assignments
            plan.warnings.append(
                f"the study {batch.external['study_id']} exists: publishing adds places for the HITs not yet posted"
            )
        study = plan.study
        plan.details = [
            "Study:",
            f"  Name: {study['name']}",
            f"  Description: {study['description']}",
            f"  Reward: {study['reward']} cents per participant ({batch.reward:.2f})",
            f"  Estimated completion time: {study['estimated_completion_time']} min "
            f"(at most {study['maximum_allowed_time']} min)",
            f"  Places: {study['total_available_places']} (one HIT per participant)",
            f"  Completion code: {study['completion_codes'][0]['code']}",
            f"  Study URL: {study['external_study_url']}",
        ]
        plan.first_url = entry_url(batch)
        if not settings.SITE_URL.startswith("https://"):
            plan.warnings.append(
                f"SITE_URL is {settings.SITE_URL}: Prolific needs the platform's public https:// address"
            )
        at_estimate = cost_estimate(
            assignments_per_hit=[1],
            reward=batch.reward,
            seconds_per_assignment=estimated_minutes(batch) * 60,
            minimum_hourly_wage=settings.PROLIFIC_MIN_HOURLY_PAY,
        )
        if at_estimate.below_minimum:
            plan.warnings.append(
                f"${at_estimate.hourly_wage}/h at the estimated {estimated_minutes(batch)} min is under Prolific's "
                f"minimum of ${settings.PROLIFIC_MIN_HOURLY_PAY}/h: Prolific refuses the study (raise the reward)"
            )
        return plan

    def crowd_page_context(self, *, batch: Batch, environment: str) -> dict[str, Any]:
        return {
            "bonus_fee_note": f"{self.fees.rate * 100:.1f} % service",
            "worker_link": "",
            "requester_link": "https://app.prolific.com/",
            "study_id": batch.external.get("study_id", ""),
            "completion_code": batch.external.get("completion_code", ""),
            "environments": [],
            "recollect_note": " (by adding places to the study)",
        }

    def public_urls(self) -> list[URLPattern]:
        from crowds.prolific.urls import urlpatterns

        return urlpatterns

    def worker_preview(self) -> CrowdPreview:
        """The study page as Prolific's preview opens it (no participant); once published, its token URL."""
        from crowds.prolific.views import prolific_preview_page, prolific_public_preview_url

        return CrowdPreview(
            page=lambda request, hit, extra: prolific_preview_page(request, hit, extra=extra),
            viewer=crowd_worker_viewer(),
            public_url=prolific_public_preview_url,
        )

    def publish(self, *, batch: Batch, progress: Progress | None = None) -> PublishResult:
        """Create the batch's study (a draft), give every HIT its posting, then publish the study;
        ``progress(HITs posted, HITs)`` as the postings are recorded.

        Idempotent: a study already made is found by its ``internal_name`` (``study_token``), HITs
        already posted are skipped, HITs added since (a step-3 batch grows) add places, and a
        published study is not published again. Prolific itself refuses a study whose balance is
        short or whose pay per hour, at the estimated time, is under its minimum.
        """
        from hits.models import HIT, RemoteHIT

        if not settings.SITE_URL.startswith("https://"):
            raise ProlificError(
                f"SITE_URL must be the platform's public https:// address for Prolific to send participants to, "
                f"not {settings.SITE_URL}",
                operation="publish",
            )
        rate = hourly_wage(batch.reward, estimated_minutes(batch) * 60)
        if rate is not None and rate < settings.PROLIFIC_MIN_HOURLY_PAY:
            raise ProlificError(
                f"{batch} pays {rate}/h at the estimated {estimated_minutes(batch)} min, under Prolific's minimum "
                f"of {settings.PROLIFIC_MIN_HOURLY_PAY}/h (PROLIFIC_MIN_HOURLY_PAY): raise the reward or the "
                "estimated time",
                operation="publish",
            )
        result = PublishResult()
        pending = list(HIT.objects.filter(batch=batch).exclude(remote_hits__round=0).order_by("id"))
        result.hits_existing = HIT.objects.filter(batch=batch, remote_hits__round=0).count()
        code = str(batch.external.get("completion_code") or "")
        if not code:
            # Kept before the study is made, so a retry sends the same code.
            code = secrets.token_hex(4).upper()
            self._remember(batch, completion_code=code)
        study_id = str(batch.external.get("study_id", ""))
        if not study_id:
            found = self._find_study(study_token(batch))
            if found is None:
                places = sum(hit.assignments_required for hit in pending)
                found = self.call(
                    "POST",
                    f"{API}/studies/",
                    operation="create study",
                    json=study_params(batch, places=places, code=code),
                    repeatable=False,
                )
            else:
                result.messages.append(f"{batch}'s study was already on Prolific as {found['id']}")
            study_id = str(found["id"])
            self._remember(batch, study_id=study_id)
        result.hit_type_id = study_id
        for done, hit in enumerate(pending, start=1):
            _, created = RemoteHIT.objects.get_or_create(
                hit=hit,
                round=0,
                defaults={"external_id": f"{study_id}:{hit.pk}", "max_assignments": hit.assignments_required},
            )
            if created:
                HIT.objects.filter(pk=hit.pk).update(external_id=study_id)
                result.hits_created += 1
            else:
                result.hits_existing += 1
            if progress is not None:
                progress(done, len(pending))
        study = self.study(batch)
        added = self._ensure_places(batch, study=study)
        if added:
            result.messages.append(f"{added} places added to study {study_id} for the HITs added since")
        if study.get("status") == UNPUBLISHED:
            self.call(
                "POST",
                f"{API}/studies/{study_id}/transition/",
                operation="publish study",
                json={"action": "PUBLISH"},
                # Sent once: a second PUBLISH is refused; the next publish reads the study's status.
                repeatable=False,
            )
        return result

    def _remember(self, batch: Batch, **values: Any) -> None:
        from hits.models import Batch as BatchModel

        current = BatchModel.objects.filter(pk=batch.pk).values_list("external", flat=True).first() or {}
        batch.external = {**current, **values}
        BatchModel.objects.filter(pk=batch.pk).update(external=batch.external)

    def _ensure_places(
        self,
        batch: Batch,
        *,
        study: dict[str, Any] | None = None,
        budget: Decimal | None = None,
        recollection: bool = False,
    ) -> int:
        """Add places when the batch's work still to come exceeds the places still open; returns how many.

        Open places: Prolific's ``total_available_places`` less its ``places_taken`` (Prolific
        frees the places of returned, timed-out and rejected submissions itself). Work to come:
        ``crowds.selectors.study_places_needed``. Both are read afresh, so a second run after
        a crash or a timeout adds nothing more. Posts nothing beyond ``budget`` dollars (fees in).
        """
        from crowds.selectors import study_places_needed

        study = study or self.study(batch)
        total = int(study.get("total_available_places") or 0)
        taken = int(study.get("places_taken") or 0)
        add = study_places_needed(batch=batch) - max(0, total - taken)
        if add <= 0:
            return 0
        cost = assignments_cost(reward=batch.reward, count=add, hit_size=1, fees=self.fees)
        if budget is not None and cost > budget:
            raise ProlificError(
                f"{batch} needs {add} more places (${cost:.2f} with fees), more than the "
                f"${max(budget, Decimal(0)):.2f} left of the benchmark's re-collection budget: raise it to go on",
                operation="recollect",
            )
        self.call(
            "PATCH",
            f"{API}/studies/{study['id']}/",
            operation="increase places",
            json={"total_available_places": total + add},
        )
        if recollection:
            # What re-collection bought, for the crowd page's spending (``batch_spending``).
            self._remember(batch, places_added=int(batch.external.get("places_added", 0) or 0) + add)
        return add

    # -- reading the crowd's state -----------------------------------------------------------

    def hits_added(self, *, batch_id: int) -> None:
        from crowds.tasks import batch_publish_task

        batch_publish_task.delay(batch_id)

    def sync(self, *, batch: Batch) -> list[RemoteAssignment]:
        """The study's submissions that were handed in, returned or timed out, in this platform's terms.

        A submission's HIT is the one this platform gave its session (Prolific knows only the
        study); one with no assignment here carries no HIT.
        """
        from hits.models import Assignment, RemoteHIT

        study_id = self._study_id(batch)
        hit_of = dict(
            Assignment.objects.filter(hit__batch=batch).exclude(external_id="").values_list("external_id", "hit_id")
        )
        postings = dict(RemoteHIT.objects.filter(hit__batch=batch, round=0).values_list("hit_id", "external_id"))
        found: list[RemoteAssignment] = []
        for item in self._pages(f"{API}/studies/{study_id}/submissions/", operation="list submissions"):
            status = STATUSES.get(str(item.get("status", "")))
            if status is None:
                # Reserved or active: a participant is still at work.
                continue
            submission = str(item["id"])
            completed = item.get("completed_at")
            found.append(
                RemoteAssignment(
                    external_id=submission,
                    worker_external_id=str(item.get("participant_id") or item.get("participant") or ""),
                    hit_external_id=postings.get(hit_of.get(submission, 0), ""),
                    status=status,
                    submitted_at=parse_datetime(completed) if isinstance(completed, str) else None,
                )
            )
        return found

    def expire(self, *, batch: Batch) -> int:
        """Stop the study (no more participants; handed-in work may still be reviewed)."""
        return self._stop(batch=batch, hits=None)

    def withdraw(self, *, batch: Batch, hits: Sequence[HIT]) -> int:
        """Finished HITs are no longer given to anyone (the entry page offers only what needs work);
        once no HIT of the batch is offered, the study is stopped."""
        return self._stop(batch=batch, hits=hits)

    def _stop(self, *, batch: Batch, hits: Sequence[HIT] | None) -> int:
        from hits.models import HIT, RemoteHIT
        from hits.selectors import OFFERED_HIT

        postings = RemoteHIT.objects.filter(hit__batch=batch, expired_at__isnull=True)
        if hits is not None:
            postings = postings.filter(hit__in=hits)
        expired = postings.update(expired_at=timezone.now())
        if not batch.external.get("study_id"):
            return expired
        if hits is not None and HIT.objects.filter(OFFERED_HIT, batch=batch).exists():
            return expired
        study = self.study(batch)
        if study.get("status") in RUNNING:
            self.call(
                "POST",
                f"{API}/studies/{study['id']}/transition/",
                operation="stop study",
                json={"action": "STOP"},
                repeatable=False,
            )
        return expired

    def pause(self, *, batch: Batch) -> None:
        """Pause the study on Prolific (its PAUSE transition): no new participant is let in;
        those who started may still complete it."""
        self._transition(batch, "PAUSE", operation="pause study", when={"ACTIVE"})

    def resume(self, *, batch: Batch, paused_at: datetime) -> None:
        """Start the paused study again (its START transition)."""
        self._transition(batch, "START", operation="resume study", when={"PAUSED"})

    def _transition(self, batch: Batch, action: str, *, operation: str, when: set[str]) -> None:
        if not batch.external.get("study_id"):
            return
        study = self.study(batch)
        if study.get("status") in when:
            self.call(
                "POST",
                f"{API}/studies/{study['id']}/transition/",
                operation=operation,
                json={"action": action},
                repeatable=False,
            )

    # -- paying and managing participants -----------------------------------------------------

    def approve(self, *, assignment: Assignment, message: str) -> None:
        # Prolific documents transitions as idempotent: approving twice pays once.
        self.call(
            "POST",
            f"{API}/submissions/{assignment.external_id}/transition/",
            operation="approve submission",
            json={"action": "APPROVE"},
        )

    def reject(self, *, assignment: Assignment, message: str) -> None:
        """Reject with the category Prolific requires (the batch's; NO_DATA for a submission with no
        answers here) and a message of at least 100 characters, which the participant reads."""
        message = message.strip()
        if len(message) < MIN_REJECTION_MESSAGE:
            raise ProlificError(
                f"Prolific requires a rejection message of at least {MIN_REJECTION_MESSAGE} characters; "
                f"this one has {len(message)}",
                operation="reject submission",
            )
        category = "NO_DATA" if assignment.pk is None else rejection_category(assignment.hit.batch)
        self.call(
            "POST",
            f"{API}/submissions/{assignment.external_id}/transition/",
            operation="reject submission",
            json={"action": "REJECT", "message": message, "rejection_category": category},
        )

    def bonus(self, *, worker: Worker, assignment: Assignment, amount: Decimal, reason: str, token: str) -> None:
        """Pay a bonus once: set it up (``bonus-payments``, its id kept on the Bonus row), then pay it.

        Paying is not idempotent on Prolific, so the row records that it was asked before it asks,
        and a retry never asks again: it looks for the payment on the submission
        (``bonus_payments``, in cents) and is done once Prolific shows it. The reason stays here
        (Prolific's bonuses carry none); message the participant to tell them why.
        """
        from hits.models import Bonus, BonusStatus

        bonus = Bonus.objects.get(token=token)
        batch = assignment.hit.batch
        submission = assignment.external_id
        if bonus.pay_requested_at is not None:
            shown = self.call("GET", f"{API}/submissions/{submission}/", operation="get submission")
            paid = [int(value) for value in shown.get("bonus_payments") or []].count(cents(amount))
            recorded = (
                Bonus.objects.filter(assignment=assignment, amount=amount, status=BonusStatus.SENT)
                .exclude(pk=bonus.pk)
                .count()
            )
            if paid > recorded:
                return
            raise ProlificError(
                f"Prolific was asked to pay bonus {bonus.pk} at {bonus.pay_requested_at:%Y-%m-%d %H:%M} UTC and does "
                "not show it on the submission yet (payments take a few minutes). It is never asked twice: if it "
                "never shows, check the study's bonuses on Prolific.",
                operation="pay bonus",
                retryable=True,
            )
        if not bonus.external_id:
            created = self.call(
                "POST",
                f"{API}/submissions/bonus-payments/",
                operation="set up bonus",
                json={"study_id": self._study_id(batch), "csv_bonuses": f"{submission},{amount:.2f}"},
                repeatable=False,
            )
            Bonus.objects.filter(pk=bonus.pk, external_id="").update(external_id=str(created["id"]))
            bonus.refresh_from_db()
        if not Bonus.objects.filter(pk=bonus.pk, pay_requested_at__isnull=True).update(pay_requested_at=timezone.now()):
            raise ProlificError(f"bonus {bonus.pk} is being paid by another run", operation="pay bonus", retryable=True)
        self.call(
            "POST", f"{API}/bulk-bonus-payments/{bonus.external_id}/pay/", operation="pay bonus", repeatable=False
        )

    def block(self, *, worker: Worker, reason: str) -> None:
        # Prolific's API has no block: the platform's own block (Worker.blocked) keeps the
        # participant from being given any HIT by the entry page, whatever study they come from.
        return None

    def notify(self, *, workers: Sequence[Worker], subject: str, text: str) -> NotifyResult:
        """One Prolific message per participant, about the latest study they worked in here."""
        from hits.models import Batch

        result = NotifyResult()
        for worker in workers:
            batch = (
                Batch.objects.filter(hits__assignments__worker=worker, backend=self.name, external__has_key="study_id")
                .order_by("-created_at")
                .first()
            )
            if batch is None or not batch.external.get("study_id"):
                result.failures[worker.external_id] = "no Prolific study of theirs here"
                continue
            try:
                self.call(
                    "POST",
                    f"{API}/messages/",
                    operation="send message",
                    json={
                        "recipient_id": worker.external_id,
                        "study_id": batch.external["study_id"],
                        "body": f"{subject}\n\n{text}",
                    },
                    repeatable=False,
                )
            except ProlificError as error:
                result.failures[worker.external_id] = str(error)
                continue
            result.notified += 1
        return result

    # -- re-collection and money --------------------------------------------------------------

    def recollect(self, *, hit: HIT, missing: int, budget: Decimal | None = None) -> int:
        """Places belong to the study, not to one HIT: the places the whole batch still needs are
        added at once (the first HIT short of work in a sync adds them; the next ones find them open)."""
        return self._ensure_places(hit.batch, budget=budget, recollection=True)

    def price(
        self, *, assignments_per_hit: Sequence[int], reward: Decimal, seconds_per_assignment: float | None = None
    ) -> CostEstimate:
        return cost_estimate(
            assignments_per_hit=assignments_per_hit,
            reward=reward,
            seconds_per_assignment=seconds_per_assignment,
            fees=self.fees,
            minimum_hourly_wage=settings.PROLIFIC_MIN_HOURLY_PAY,
        )

    def cost_estimate(self, *, batch: Batch, median_seconds: float | None = None) -> CostEstimate:
        counts = list(batch.hits.values_list("assignments_required", flat=True))
        seconds = median_seconds if median_seconds is not None else estimated_minutes(batch) * 60
        return self.price(assignments_per_hit=counts, reward=batch.reward, seconds_per_assignment=seconds)
