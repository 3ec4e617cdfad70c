"""The MTurk crowd backend: publish, sync, approve, reject, pay, block and notify through boto3's
``mturk`` client (docs/design.md §4).

Credentials come from the standard AWS chain (environment variables, shared profile, instance
role): nothing secret is stored in the database or the settings. The endpoint, sandbox or
production, is chosen when a batch is published and remembered in ``Batch.external``, so that a
sandbox batch is always synced against the sandbox.

Every create carries a ``UniqueRequestToken`` derived from the rows it creates, so a publish that
is retried after a timeout or a crash finds the HITs it made instead of making them twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ParamValidationError
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

import crowds.mturk.client as client_module
from crowds.interface.base import (
    ARRIVAL_LINK,
    BLOCK,
    BONUS,
    EXPIRE,
    EXTEND,
    NOTIFY,
    QUALIFICATION,
    CrowdActionRefused,
    CrowdPreview,
    NotifyResult,
    PublishResult,
    RemoteAssignment,
    RemoteStatus,
    crowd_worker_viewer,
)
from crowds.interface.costs import PricedByFees, assignments_cost, cost_estimate
from crowds.mturk.client import (
    EXPIRE_NOW,
    LARGE_HIT_ASSIGNMENTS,
    NAME,
    NOTIFY_BATCH_SIZE,
    PRODUCTION,
    REQUESTER_SITES,
    RETRYABLE_CODES,
    SANDBOX,
    WORKER_SITES,
    MTurkError,
    Qualifications,
    batch_environment,
    endpoint_url,
    environment_for,
    external_question_xml,
    external_url,
    hit_token,
    request_token,
)
from crowds.mturk.fees import MTURK_FEES

if TYPE_CHECKING:
    from django import forms
    from django.urls import URLPattern
    from mypy_boto3_mturk import MTurkClient

    from annotation.models import Worker
    from crowdlex.progress import Progress
    from crowds.selectors import PublishPlan
    from hits.models import HIT, Assignment, Batch, RemoteHIT

logger = logging.getLogger(__name__)


def _is_repeated_token(error: MTurkError) -> bool:
    """MTurk's answer to a UniqueRequestToken it has seen in the last 24 hours."""
    text = str(error).lower()
    return "idempotency token" in text or "already been processed" in text or "already exists" in text


def _known_options(backend: MTurkBackend, options: Mapping[str, Any], known: set[str]) -> None:
    unknown = sorted(set(options) - known)
    if unknown:
        raise CrowdActionRefused(
            f"{', '.join(unknown)}: not a publish option of {backend.label}; it takes {', '.join(sorted(known))}"
        )


class MTurkBackend(PricedByFees):
    """The MTurk crowd. ``client_factory`` builds a client per endpoint (tests pass a stubbed one)."""

    name = NAME
    label = "Amazon Mechanical Turk"
    short_label = "MTurk"
    posting_name = "HIT type"
    remote = True
    # Workers accept a HIT on MTurk, which frames its ExternalQuestion page with their ids.
    arrival = ARRIVAL_LINK
    worker_kind = "mturk"
    worker_label = "Mechanical Turk worker"
    capabilities = frozenset({BLOCK, BONUS, NOTIFY, EXTEND, EXPIRE, QUALIFICATION})
    fees = MTURK_FEES
    rejection_message_min_length = 1
    inherited_settings: tuple[str, ...] = ("environment",)
    # MTurk has no pause: a HIT's expiry is moved (UpdateExpirationForHIT), to now and back again.
    pause_meaning = (
        "MTurk has no pause: pausing expires the batch's live HITs on MTurk, so no worker can accept them; "
        "workers who accepted one may still submit it. Resuming moves their expiry on again, by the time "
        "they were paused."
    )
    # boto3 clients are thread-safe and slow to build: one per factory, endpoint and retry settings
    # serves every backend instance of the process (a sync approves hundreds of assignments).
    _shared_clients: dict[tuple[Any, ...], MTurkClient] = {}

    def __init__(self, client_factory: Callable[[str], MTurkClient] | None = None) -> None:
        self._client_factory = client_factory

    @property
    def approval_hold(self) -> timedelta:
        return timedelta(seconds=settings.MTURK_APPROVAL_HOLD_SECONDS)

    @property
    def reconcile_grace(self) -> timedelta:
        return timedelta(seconds=settings.MTURK_RECONCILE_GRACE_SECONDS)

    # -- plumbing ---------------------------------------------------------------------------

    def client(self, environment: str) -> MTurkClient:
        # Read from the module at each call, so a test's stubbed client is the one used.
        factory = self._client_factory or client_module.mturk_client
        key = (
            factory,
            environment,
            settings.MTURK_ENDPOINT_URL,
            settings.MTURK_REGION,
            settings.MTURK_RETRY_MODE,
            settings.MTURK_MAX_ATTEMPTS,
        )
        found = self._shared_clients.get(key)
        if found is None:
            found = self._shared_clients[key] = factory(environment)
        return found

    def call(self, environment: str, operation: str, **params: Any) -> dict[str, Any]:
        """One API call, with every failure turned into an MTurkError that carries MTurk's message."""
        method = getattr(self.client(environment), operation)
        try:
            return dict(method(**params))
        except ClientError as error:
            details = error.response.get("Error", {})
            code = str(details.get("Code", ""))
            message = str(details.get("Message") or error)
            turk_code = str(error.response.get("TurkErrorCode", "") or "")  # type: ignore[misc]
            if turk_code:
                message = f"{message} [{turk_code}]"
            raise MTurkError(
                f"MTurk refused {operation}: {message}",
                operation=operation,
                code=code,
                retryable=code in RETRYABLE_CODES,
            ) from error
        except NoCredentialsError as error:
            raise MTurkError(
                "No AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, "
                "for the account of your MTurk requester.",
                operation=operation,
                code="NoCredentials",
            ) from error
        except ParamValidationError as error:
            # botocore checks every call against MTurk's service model before sending it.
            raise MTurkError(
                f"Invalid parameters for MTurk's {operation}: {error}", operation=operation, code="ParamValidation"
            ) from error
        except BotoCoreError as error:
            raise MTurkError(
                f"Could not reach MTurk ({environment}) for {operation}: {error}",
                operation=operation,
                code=type(error).__name__,
                retryable=True,
            ) from error

    def _pages(self, environment: str, operation: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list call, following NextToken."""
        token: str | None = None
        while True:
            page = self.call(environment, operation, **params, **({"NextToken": token} if token else {}))
            yield from page.get(key, [])
            token = page.get("NextToken")
            if not token:
                return

    def _environments_of(self, worker: Worker) -> list[str]:
        """The endpoints of the batches a worker has worked in (a sandbox worker id means nothing live)."""
        from hits.models import Batch

        batches = Batch.objects.filter(hits__assignments__worker=worker, backend=self.name).distinct()
        found = sorted({batch_environment(batch) for batch in batches})
        return found or [environment_for(sandbox=settings.MTURK_SANDBOX)]

    # -- publishing -------------------------------------------------------------------------

    def publish_form(self, *, batch: Batch, data: Mapping[str, Any] | None = None) -> forms.Form:
        from crowds.mturk.forms import PublishForm

        if data is not None:
            return PublishForm(data)
        try:
            qualifications = Qualifications.from_json(batch.qualifications)
        except ValueError:
            qualifications = Qualifications()
        return PublishForm(initial=PublishForm.initial_for(qualifications, batch_environment(batch)))

    def publish_options(self, *, form: forms.Form) -> dict[str, Any]:
        from crowds.mturk.forms import PublishForm

        assert isinstance(form, PublishForm)
        return {"sandbox": form.cleaned_data["environment"] == SANDBOX, "qualifications": form.qualifications()}

    def publish_prepare(self, *, batch: Batch, options: Mapping[str, Any]) -> list[str]:
        """``sandbox`` picks the endpoint the first time (default: the batch's own, which a step-3
        batch takes from its parent, else the MTURK_SANDBOX setting); a batch stays on the endpoint it
        was first published to. ``qualifications`` replaces the batch's qualification settings."""
        from hits.models import RemoteHIT

        _known_options(self, options, {"sandbox", "qualifications"})
        fields: list[str] = []
        qualifications = options.get("qualifications")
        if qualifications is not None:
            try:
                Qualifications.from_json(qualifications)
            except ValueError as error:
                raise CrowdActionRefused(str(error)) from None
            batch.qualifications = dict(qualifications)
            fields.append("qualifications")
        try:
            Qualifications.from_json(batch.qualifications)
        except ValueError as error:
            raise CrowdActionRefused(f"{batch}: {error}") from None
        sandbox = options.get("sandbox")
        wanted = batch_environment(batch) if sandbox is None else environment_for(sandbox=bool(sandbox))
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
        return fields

    def publish_api_fields(self) -> dict[str, Any]:
        from crowds.mturk.api import publish_api_fields

        return publish_api_fields()

    def publish_api_options(self, data: Mapping[str, Any]) -> dict[str, Any]:
        from crowds.mturk.api import publish_api_options

        return publish_api_options(data)

    def publish_where(self, *, batch: Batch, options: Mapping[str, Any]) -> str:
        return "MTurk's sandbox" if options.get("sandbox") else "MTurk"

    def publish_plan(
        self,
        *,
        plan: PublishPlan,
        batch: Batch,
        pending: Sequence[HIT],
        sandbox: bool | None,
        median_seconds: float | None,
    ) -> PublishPlan:
        """The endpoint, the HIT type with its qualifications (the benchmark's test among them), the
        first ExternalQuestion, and what MTurk would refuse or charge more for."""
        from crowds.mturk.qualification import hit_type_params, mark_percent
        from crowds.selectors import duration_text
        from hits.models import QualificationTest

        plan.environment = batch_environment(batch) if sandbox is None else environment_for(sandbox=sandbox)
        plan.endpoint = endpoint_url(plan.environment)
        try:
            plan.hit_type = hit_type_params(batch)
            plan.qualifications = Qualifications.from_json(batch.qualifications).describe()
            test = QualificationTest.objects.filter(benchmark_id=batch.benchmark_id, active=True).first()
            if test is not None:
                made = test.crowd_types.get(plan.environment)
                plan.qualifications = [line for line in plan.qualifications if line != "none"]
                plan.qualifications.append(
                    f"qualification test of {batch.benchmark.name} >= {mark_percent(test)} %"
                    + (f" (type {made})" if made else " (its type is made when the batch is published)")
                )
        except ValueError as error:
            plan.warnings.append(str(error))
        if plan.hit_type:
            hit_type = plan.hit_type
            plan.details = [
                "HIT type:",
                f"  Title: {hit_type['Title']}",
                f"  Description: {hit_type['Description']}",
                f"  Keywords: {hit_type['Keywords']}",
                f"  Reward: ${hit_type['Reward']} per assignment",
                f"  Assignment duration: {duration_text(hit_type['AssignmentDurationInSeconds'])}",
                f"  Auto-approval delay: {duration_text(hit_type['AutoApprovalDelayInSeconds'])}",
                f"  Lifetime of each HIT: {duration_text(int(batch.lifetime.total_seconds()))}",
                f"  Qualifications: {'; '.join(plan.qualifications)}",
            ]
        if pending:
            plan.first_url = external_url(pending[0])
            plan.first_question = external_question_xml(plan.first_url)
        if not settings.SITE_URL.startswith("https://"):
            plan.warnings.append(f"SITE_URL is {settings.SITE_URL}: MTurk needs the platform's public https:// address")
        current = batch.external.get("environment")
        if plan.hits_published and current and current != plan.environment:
            plan.warnings.append(
                f"the batch was published to the {current}; it cannot also go to the {plan.environment}"
            )
        if any(size >= 10 for size in plan.assignments_per_hit):
            plan.warnings.append("HITs with 10 or more assignments pay MTurk's 40 % fee")
        return plan

    def crowd_page_context(self, *, batch: Batch, environment: str) -> dict[str, Any]:
        environment = environment or batch_environment(batch)
        group = batch.external.get("hit_group_id")
        return {
            "worker_link": f"{WORKER_SITES[environment]}/projects/{group}/tasks" if group else "",
            "requester_link": f"{REQUESTER_SITES[environment]}/manage",
            "bonus_fee_note": "20 % (at least $0.01)",
            # The publish plan may be previewed for either endpoint (``?environment=``).
            "environments": [SANDBOX, PRODUCTION],
            "recollect_note": "",
        }

    def public_urls(self) -> list[URLPattern]:
        from crowds.mturk.urls import urlpatterns

        return urlpatterns

    def worker_preview(self) -> CrowdPreview:
        """The ExternalQuestion page in MTurk's preview mode; once published, MTurk's own preview."""
        from crowds.mturk.views import mturk_preview_page, mturk_public_preview_url

        return CrowdPreview(
            page=lambda request, hit, extra: mturk_preview_page(request, hit, extra=extra),
            viewer=crowd_worker_viewer(),
            public_url=mturk_public_preview_url,
        )

    def publish(self, *, batch: Batch, progress: Progress | None = None) -> PublishResult:
        """Create the batch's HIT type, then one MTurk HIT per HIT not yet published.

        Idempotent: HITs with a first posting are skipped, and a HIT whose create timed out is
        found again through its token (kept as RequesterAnnotation) instead of being made twice.
        Nothing is created when the account's balance (``get_account_balance``) is below what the
        HITs to publish may cost, fees included.
        """
        from crowds.mturk.qualification import hit_type_params, mturk_qualification_type
        from hits.models import HIT, QualificationTest

        environment = batch_environment(batch)
        if not settings.SITE_URL.startswith("https://"):
            raise MTurkError(
                "SITE_URL must be the platform's public https:// address for MTurk to frame it, "
                f"not {settings.SITE_URL}",
                operation="publish",
            )
        result = PublishResult()
        pending = list(HIT.objects.filter(batch=batch).exclude(remote_hits__round=0).order_by("id"))
        result.hits_existing = HIT.objects.filter(batch=batch, remote_hits__round=0).count()
        result.hit_type_id = str(batch.external.get("hit_type_id", ""))
        if not pending:
            return result
        cost = cost_estimate(
            assignments_per_hit=[hit.assignments_required for hit in pending], reward=batch.reward, fees=self.fees
        )
        balance = Decimal(str(self.call(environment, "get_account_balance").get("AvailableBalance", "0")))
        if balance < cost.total:
            raise MTurkError(
                f"The MTurk {environment} account has ${balance:.2f}, less than the ${cost.total:.2f} that "
                f"{len(pending)} HITs may cost (rewards and fees): add funds, then publish again.",
                operation="get_account_balance",
            )
        # The benchmark's qualification test: its type exists before the HIT type requires it.
        test = QualificationTest.objects.filter(benchmark_id=batch.benchmark_id, active=True).first()
        if test is not None:
            mturk_qualification_type(test=test, environment=environment, backend=self)
        # create_hit_type returns the same id for the same parameters, so calling it again is harmless.
        response = self.call(environment, "create_hit_type", **hit_type_params(batch))
        result.hit_type_id = str(response["HITTypeId"])
        if batch.external.get("hit_type_id") != result.hit_type_id or batch.external.get("environment") != environment:
            batch.external = {**batch.external, "hit_type_id": result.hit_type_id, "environment": environment}
            batch.save(update_fields=["external"])
        for posted, hit in enumerate(pending, start=1):
            _, created = self._post(
                environment, batch=batch, hit=hit, round=0, assignments=hit.assignments_required, result=result
            )
            if created:
                result.hits_created += 1
            else:
                result.hits_existing += 1
            if progress is not None:
                progress(posted, len(pending))
        return result

    def _post(
        self, environment: str, *, batch: Batch, hit: HIT, round: int, assignments: int, result: PublishResult
    ) -> tuple[RemoteHIT, bool]:
        """Post one HIT (a first posting or a re-collection round) and record it; True if MTurk made it now."""
        from hits.models import HIT, RemoteHIT

        token = hit_token(batch=batch, hit=hit, round=round)
        created = True
        try:
            response = self.call(
                environment,
                "create_hit_with_hit_type",
                HITTypeId=result.hit_type_id or batch.external["hit_type_id"],
                MaxAssignments=assignments,
                LifetimeInSeconds=int(batch.lifetime.total_seconds()),
                Question=external_question_xml(external_url(hit)),
                RequesterAnnotation=token,
                UniqueRequestToken=token,
            )
            hit_id = str(response["HIT"]["HITId"])
            group = response["HIT"].get("HITGroupId")
            if group and batch.external.get("hit_group_id") != group:
                # Workers find the batch's HITs under this group id (the link in the docs and pages).
                batch.external = {**batch.external, "hit_group_id": str(group)}
                type(batch).objects.filter(pk=batch.pk).update(external=batch.external)
        except MTurkError as error:
            if not _is_repeated_token(error):
                raise
            found = self._find_by_annotation(environment, token)
            if found is None:
                raise MTurkError(
                    f"MTurk says HIT {hit.pk} (round {round}) was already created, but no HIT carries its token "
                    f"{token}: {error}",
                    operation="create_hit_with_hit_type",
                ) from error
            hit_id, created = found, False
            result.messages.append(f"HIT {hit.pk} round {round} was already on MTurk as {hit_id}")
        try:
            with transaction.atomic():
                remote, _ = RemoteHIT.objects.get_or_create(
                    hit=hit, round=round, defaults={"external_id": hit_id, "max_assignments": assignments}
                )
                if round == 0:
                    HIT.objects.filter(pk=hit.pk).update(external_id=hit_id)
        except IntegrityError:
            # A concurrent publish recorded it first: the token made both calls return the same HIT.
            remote = RemoteHIT.objects.get(hit=hit, round=round)
        return remote, created

    def _find_by_annotation(self, environment: str, token: str) -> str | None:
        for item in self._pages(environment, "list_hits", "HITs", MaxResults=100):
            if item.get("RequesterAnnotation") == token:
                return str(item["HITId"])
        return None

    # -- reading the crowd's state -----------------------------------------------------------

    def hits_added(self, *, batch_id: int) -> None:
        from crowds.tasks import batch_publish_task

        batch_publish_task.delay(batch_id)

    def sync(self, *, batch: Batch) -> list[RemoteAssignment]:
        """Every submitted, approved or rejected assignment of every posting of the batch's HITs."""
        from hits.models import RemoteHIT

        environment = batch_environment(batch)
        found: list[RemoteAssignment] = []
        for remote in RemoteHIT.objects.filter(hit__batch=batch).order_by("id"):
            for item in self._pages(
                environment,
                "list_assignments_for_hit",
                "Assignments",
                HITId=remote.external_id,
                MaxResults=100,
                AssignmentStatuses=[RemoteStatus.SUBMITTED, RemoteStatus.APPROVED, RemoteStatus.REJECTED],
            ):
                found.append(
                    RemoteAssignment(
                        external_id=str(item["AssignmentId"]),
                        worker_external_id=str(item["WorkerId"]),
                        hit_external_id=str(item.get("HITId") or remote.external_id),
                        status=str(item["AssignmentStatus"]),
                        submitted_at=item.get("SubmitTime"),
                    )
                )
        return found

    def expire(self, *, batch: Batch) -> int:
        return self._expire_postings(batch=batch, hits=None)

    def withdraw(self, *, batch: Batch, hits: Sequence[HIT]) -> int:
        return self._expire_postings(batch=batch, hits=hits)

    def _expire_postings(self, *, batch: Batch, hits: Sequence[HIT] | None) -> int:
        """Expire the batch's live postings (of ``hits`` only, when given) and record when."""
        from hits.models import RemoteHIT

        environment = batch_environment(batch)
        postings = RemoteHIT.objects.filter(hit__batch=batch, expired_at__isnull=True)
        if hits is not None:
            postings = postings.filter(hit__in=hits)
        expired = 0
        for remote in postings.order_by("id"):
            self.call(environment, "update_expiration_for_hit", HITId=remote.external_id, ExpireAt=EXPIRE_NOW)
            RemoteHIT.objects.filter(pk=remote.pk).update(expired_at=timezone.now())
            expired += 1
        return expired

    def pause(self, *, batch: Batch) -> None:
        """Expire the batch's live postings now, without recording them as expired: ``resume`` moves
        their expiry on again. Accepted assignments of an expired HIT may still be submitted."""
        from hits.models import RemoteHIT

        environment = batch_environment(batch)
        for remote in RemoteHIT.objects.filter(hit__batch=batch, expired_at__isnull=True).order_by("id"):
            self.call(environment, "update_expiration_for_hit", HITId=remote.external_id, ExpireAt=EXPIRE_NOW)

    def resume(self, *, batch: Batch, paused_at: datetime) -> None:
        """Give each live posting back its lifetime as it stood when paused (its expiry moves on by the
        pause's length); a posting whose lifetime had run out before the pause stays expired."""
        from hits.models import RemoteHIT

        environment = batch_environment(batch)
        now = timezone.now()
        for remote in RemoteHIT.objects.filter(hit__batch=batch, expired_at__isnull=True).order_by("id"):
            left = remote.created_at + batch.lifetime - paused_at
            if left.total_seconds() <= 0:
                continue
            self.call(environment, "update_expiration_for_hit", HITId=remote.external_id, ExpireAt=now + left)

    # -- paying and managing workers ---------------------------------------------------------

    def approve(self, *, assignment: Assignment, message: str) -> None:
        """Approve on MTurk. Work MTurk approved already (a crash after its approval and before ours
        was recorded, then a retry) is approved: MTurk refuses a second approval, so its own
        status is read and the refusal stands only if the work is not approved there."""
        environment = batch_environment(assignment.hit.batch)
        params: dict[str, Any] = {"AssignmentId": assignment.external_id, "OverrideRejection": False}
        if message:
            params["RequesterFeedback"] = message[:1024]
        try:
            self.call(environment, "approve_assignment", **params)
        except MTurkError as error:
            if error.retryable or self._remote_status(environment, assignment) != "Approved":
                raise

    def _remote_status(self, environment: str, assignment: Assignment) -> str | None:
        """MTurk's AssignmentStatus of the assignment, or None when it cannot be read."""
        try:
            answer = self.call(environment, "get_assignment", AssignmentId=assignment.external_id)
        except MTurkError:
            return None
        return answer.get("Assignment", {}).get("AssignmentStatus")

    def reject(self, *, assignment: Assignment, message: str) -> None:
        if not message.strip():
            raise MTurkError("MTurk requires a message to reject an assignment", operation="reject_assignment")
        environment = batch_environment(assignment.hit.batch)
        try:
            self.call(
                environment, "reject_assignment", AssignmentId=assignment.external_id, RequesterFeedback=message[:1024]
            )
        except MTurkError as error:
            # As for approve: work MTurk rejected already is rejected.
            if error.retryable or self._remote_status(environment, assignment) != "Rejected":
                raise

    def bonus(self, *, worker: Worker, assignment: Assignment, amount: Decimal, reason: str, token: str) -> None:
        """Pay a bonus once. The token guards retries within MTurk's 24 hours; the payment list guards later ones."""
        from hits.models import Bonus, BonusStatus

        environment = batch_environment(assignment.hit.batch)
        paid = [
            item
            for item in self._pages(
                environment, "list_bonus_payments", "BonusPayments", AssignmentId=assignment.external_id, MaxResults=100
            )
            if Decimal(str(item.get("BonusAmount", "0"))) == amount and item.get("Reason") == reason
        ]
        recorded = Bonus.objects.filter(
            assignment=assignment, amount=amount, reason=reason, status=BonusStatus.SENT
        ).count()
        if len(paid) > recorded:
            logger.info("bonus %s was already paid on MTurk; not paying it again", token)
            return
        try:
            self.call(
                environment,
                "send_bonus",
                WorkerId=worker.external_id,
                BonusAmount=f"{amount:.2f}",
                AssignmentId=assignment.external_id,
                Reason=reason,
                UniqueRequestToken=token,
            )
        except MTurkError as error:
            if not _is_repeated_token(error):
                raise

    def block(self, *, worker: Worker, reason: str) -> None:
        for environment in self._environments_of(worker):
            self.call(environment, "create_worker_block", WorkerId=worker.external_id, Reason=reason[:1024])

    def notify(self, *, workers: Sequence[Worker], subject: str, text: str) -> NotifyResult:
        result = NotifyResult()
        by_environment: dict[str, list[str]] = {}
        for worker in workers:
            for environment in self._environments_of(worker):
                by_environment.setdefault(environment, []).append(worker.external_id)
        for environment, worker_ids in sorted(by_environment.items()):
            for start in range(0, len(worker_ids), NOTIFY_BATCH_SIZE):
                chunk = worker_ids[start : start + NOTIFY_BATCH_SIZE]
                response = self.call(
                    environment,
                    "notify_workers",
                    Subject=subject[:200],
                    MessageText=text[:4096],
                    WorkerIds=chunk,
                )
                failures = {
                    str(item.get("WorkerId")): str(item.get("NotifyWorkersFailureMessage", ""))
                    for item in response.get("NotifyWorkersFailureStatuses", [])
                }
                result.failures.update(failures)
                result.notified += len(chunk) - len(failures)
        return result

    # -- re-collection ------------------------------------------------------------------------

    def recollect(self, *, hit: HIT, missing: int, budget: Decimal | None = None) -> int:
        """Offer ``missing`` more assignments of a HIT, net of what MTurk still offers or has in progress.

        A posting that stays under 10 assignments grows with create_additional_assignments_for_hit:
        it keeps one HITId, so MTurk itself keeps a worker from taking it twice. Anything that
        would reach 10 (MTurk forbids growing across 10, and 10+ pays the 40 % fee) or a posting
        that has expired becomes a new HIT of a new round with just the missing assignments.
        """
        from hits.models import RemoteHIT

        batch = hit.batch
        environment = batch_environment(batch)
        now = timezone.now()
        postings = list(RemoteHIT.objects.filter(hit=hit).order_by("round"))
        if not postings:
            return 0
        available = 0
        latest_live = False
        for posting in postings:
            if posting.expired_at is not None:
                continue
            state = self.call(environment, "get_hit", HITId=posting.external_id)["HIT"]
            expiration = state.get("Expiration")
            live = state.get("HITStatus") in {"Assignable", "Unassignable"} and (expiration is None or expiration > now)
            if live:
                # Pending: accepted by a worker and not yet submitted, so still to come.
                available += int(state.get("NumberOfAssignmentsAvailable", 0))
                available += int(state.get("NumberOfAssignmentsPending", 0))
            if posting is postings[-1]:
                latest_live = live
        need = missing - available
        if need <= 0:
            return 0
        cost = assignments_cost(reward=batch.reward, count=need, hit_size=hit.assignments_required, fees=self.fees)
        if budget is not None and cost > budget:
            raise MTurkError(
                f"HIT {hit.pk} needs {need} more assignments (${cost:.2f} with fees), more than the "
                f"${max(budget, Decimal(0)):.2f} left of the benchmark's re-collection budget: raise it to go on",
                operation="recollect",
            )
        latest = postings[-1]
        if latest_live and latest.max_assignments + need < LARGE_HIT_ASSIGNMENTS:
            token = request_token("extend", latest.external_id, latest.extensions + 1)
            try:
                self.call(
                    environment,
                    "create_additional_assignments_for_hit",
                    HITId=latest.external_id,
                    NumberOfAdditionalAssignments=need,
                    UniqueRequestToken=token,
                )
            except MTurkError as error:
                if not _is_repeated_token(error):
                    raise
            RemoteHIT.objects.filter(pk=latest.pk, extensions=latest.extensions).update(
                max_assignments=latest.max_assignments + need, extensions=latest.extensions + 1
            )
            return need
        hit_type_id = str(batch.external.get("hit_type_id", ""))
        if not hit_type_id:
            raise MTurkError(f"{batch} has no HIT type: publish it first", operation="recollect")
        self._post(
            environment,
            batch=batch,
            hit=hit,
            round=latest.round + 1,
            assignments=need,
            result=PublishResult(hit_type_id=hit_type_id),
        )
        return need

    # -- money ----------------------------------------------------------------------------------
