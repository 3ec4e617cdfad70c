"""REST API for crowd operations (researchers only): publish plan, publish, sync, expire, review, pay.

One view per operation, explicit input and output serializers, one service call each.
Refusals and the crowd's own errors come back as 409 with ``detail`` set to the message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, object_for
from crowdlex.permissions import IsResearcher
from crowds import selectors as crowd_selectors
from crowds import services as crowd
from crowds.interface import BackendError, backends, get_backend
from crowds.interface.costs import bonus_fee
from hits.access import worker_for
from hits.models import Assignment, Batch, Bonus, FilteredPolicy

# ---------------------------------------------------------------- serializers


class ErrorOut(serializers.Serializer):
    detail = serializers.CharField()


class CostOut(serializers.Serializer):
    hits = serializers.IntegerField()
    assignments = serializers.IntegerField()
    reward = serializers.DecimalField(max_digits=8, decimal_places=2)
    rewards_total = serializers.DecimalField(max_digits=12, decimal_places=2)
    fees_total = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="MTurk's fee: 20 %, 40 % on 10+")
    total = serializers.DecimalField(max_digits=12, decimal_places=2)
    large_hits = serializers.IntegerField(help_text="HITs with 10 or more assignments")
    median_seconds = serializers.FloatField(allow_null=True)
    # A reward of up to $9,999.99 for work of a second: eight digits of dollars an hour.
    hourly_wage = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    target_hourly_wage = serializers.DecimalField(max_digits=8, decimal_places=2)
    reward_for_target_wage = serializers.DecimalField(max_digits=8, decimal_places=2, allow_null=True)
    minimum_hourly_wage = serializers.DecimalField(
        max_digits=8, decimal_places=2, allow_null=True, help_text="the least the crowd lets a study pay per hour"
    )


class PlanOut(serializers.Serializer):
    batch = serializers.IntegerField(source="batch.pk")
    backend = serializers.CharField()
    environment = serializers.CharField()
    endpoint = serializers.CharField()
    hit_type = serializers.DictField(help_text="the create_hit_type parameters")
    qualifications = serializers.ListField(child=serializers.CharField())
    hits_to_publish = serializers.IntegerField()
    hits_published = serializers.IntegerField()
    assignments = serializers.IntegerField()
    first_url = serializers.CharField(
        help_text="the ExternalQuestion URL of the first HIT to publish (Prolific: the study URL)"
    )
    study = serializers.DictField(help_text="Prolific: the body of the study to create")
    cost = CostOut()
    warnings = serializers.ListField(child=serializers.CharField())


# Seconds per assignment a wage is worked out for: a day at most, which is longer than any HIT.
MAX_MEDIAN_SECONDS = 24 * 3600


class PlanQueryIn(serializers.Serializer):
    environment = serializers.ChoiceField(
        choices=["sandbox", "production"], required=False, help_text="the endpoint to plan for, on a crowd with one"
    )
    median_seconds = serializers.FloatField(
        required=False, min_value=1, max_value=MAX_MEDIAN_SECONDS, help_text="time per assignment for the wage"
    )


def _publish_fields() -> dict[str, serializers.Field]:
    """Every crowd's publish options as fields of the request's body (its backend's ``publish_api_fields``);
    a batch takes its own crowd's, the others are left aside."""
    fields: dict[str, serializers.Field] = {}
    for backend in backends():
        fields.update(backend.publish_api_fields())
    fields["options"] = serializers.DictField(
        required=False, help_text="a crowd's publish options by name, as its backend takes them"
    )
    return fields


PublishIn = type("PublishIn", (serializers.Serializer,), _publish_fields())


class PublishOut(serializers.Serializer):
    hits_created = serializers.IntegerField()
    hits_existing = serializers.IntegerField()
    hit_type_id = serializers.CharField()
    messages = serializers.ListField(child=serializers.CharField())


class SyncIn(serializers.Serializer):
    review = serializers.BooleanField(
        default=True, help_text="approve, reject, pay bonuses and re-collect; false reconciles only and spends nothing"
    )
    hold_seconds = serializers.IntegerField(
        required=False,
        min_value=0,
        # MTurk approves work by itself after 30 days at most: no work waits longer.
        max_value=30 * 24 * 3600,
        help_text="decide on work at least this old (default: the setting)",
    )


class SyncOut(serializers.Serializer):
    batch = serializers.IntegerField()
    skipped = serializers.CharField()
    remote_assignments = serializers.IntegerField()
    updated = serializers.IntegerField()
    flagged_unknown = serializers.ListField(child=serializers.IntegerField())
    orphans = serializers.ListField(child=serializers.CharField())
    approved = serializers.IntegerField()
    rejected = serializers.IntegerField()
    bonuses_sent = serializers.IntegerField()
    workers_blocked = serializers.IntegerField()
    recollected = serializers.IntegerField()
    recollection_cost = serializers.CharField(help_text="what the re-collected assignments cost, fees included")
    expired_claims = serializers.IntegerField()
    # Named "failures" because Serializer.errors is taken; one line per operation the crowd refused.
    failures = serializers.ListField(child=serializers.CharField(), source="errors")


class ExpireOut(serializers.Serializer):
    expired = serializers.IntegerField()


SPENDING_FIELDS = ("rewards_paid", "bonuses_paid", "fees_paid", "paid", "projected", "recollection")


class CrowdStatusOut(serializers.Serializer):
    postings = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())
    awaiting_crowd = serializers.IntegerField()
    awaiting_review = serializers.IntegerField()
    flagged_unknown = serializers.IntegerField()
    filtered = serializers.IntegerField()
    bonuses_pending = serializers.IntegerField()
    bonuses_sent = serializers.IntegerField()
    synced_at = serializers.CharField()
    environment = serializers.CharField(help_text="MTurk: sandbox or production")
    study_id = serializers.CharField(help_text="Prolific: the batch's study")
    spending = serializers.DictField(
        child=serializers.CharField(),
        help_text="dollars, fees included: rewards_paid, bonuses_paid, fees_paid, paid, projected, recollection",
    )
    orphans = serializers.ListField(
        child=serializers.DictField(),
        help_text="assignments submitted on MTurk with no answers here: assignment, worker, hit, status",
    )


class PolicyIn(serializers.Serializer):
    filtered_policy = serializers.ChoiceField(choices=FilteredPolicy.choices)
    rejection_message = serializers.CharField(allow_blank=True, max_length=1024)


class PolicyOut(serializers.Serializer):
    filtered_policy = serializers.CharField()
    rejection_message = serializers.CharField()


class MessageIn(serializers.Serializer):
    message = serializers.CharField(required=False, allow_blank=True, max_length=1024, default="")


class AssignmentOut(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    status = serializers.CharField()
    external_status = serializers.CharField()
    filtered = serializers.BooleanField()
    external_unknown = serializers.BooleanField()


class BonusIn(serializers.Serializer):
    amount = serializers.DecimalField(max_digits=6, decimal_places=2, min_value=Decimal("0.01"))
    reason = serializers.CharField(max_length=1024)
    above_limit_confirmed = serializers.BooleanField(
        default=False, help_text="send it even above the benchmark's bonus limit (10 rewards unless set)"
    )


class BonusOut(serializers.Serializer):
    id = serializers.IntegerField()
    assignment = serializers.IntegerField(source="assignment_id")
    worker = serializers.CharField(source="worker.external_id")
    amount = serializers.DecimalField(max_digits=6, decimal_places=2)
    reason = serializers.CharField()
    fee = serializers.SerializerMethodField(
        help_text="the crowd's fee on it, in dollars (MTurk: 20 %, at least $0.01; Prolific: its service fee)"
    )
    status = serializers.CharField(help_text="sent, pending (the next sync retries) or failed")
    error = serializers.CharField()

    def get_fee(self, bonus: Bonus) -> str:
        return f"{bonus_fee(bonus.amount, crowd_selectors.batch_fees(batch=bonus.assignment.hit.batch)):.2f}"


class BlockIn(serializers.Serializer):
    reason = serializers.CharField(max_length=1024)


class WorkerOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    external_id = serializers.CharField()
    blocked = serializers.BooleanField()


class NotifyIn(serializers.Serializer):
    subject = serializers.CharField(max_length=200)
    text = serializers.CharField(max_length=4096)


class NotifyOut(serializers.Serializer):
    notified = serializers.IntegerField()
    failures = serializers.DictField(child=serializers.CharField())


# ---------------------------------------------------------------- views


class CrowdView(APIView):
    """A researcher's crowd operation: a refusal, or the crowd's own error, answers 409 with its message."""

    permission_classes = [IsResearcher]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, BackendError | crowd.CrowdActionRefused):
            return Response(ErrorOut({"detail": str(exc)}).data, status=status.HTTP_409_CONFLICT)
        return super().handle_exception(exc)


def _user(request: Request) -> User | None:
    return request.user if isinstance(request.user, User) else None


def _body(serializer: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """The request's body as ``serializer`` checks it; a 400 naming the fields otherwise."""
    params = serializer(data=request.data)
    params.is_valid(raise_exception=True)
    return dict(params.validated_data)


def _assignment_decided(request: Request, pk: int, *, need: Role, decide: Callable[..., Assignment]) -> Response:
    """Approve or reject one assignment on its crowd (``decide``), with the request's message."""
    assignment = object_for(request.user, Assignment.objects.all(), need, pk=pk)
    message = _body(MessageIn, request)["message"]
    return Response(AssignmentOut(decide(assignment=assignment, message=message, by=_user(request))).data)


REFUSED = OpenApiResponse(ErrorOut, description="refused, or the crowd's own error message")
TAGS = ["crowd"]


class PublishPlanView(CrowdView):
    @extend_schema(
        operation_id="batch_publish_plan",
        summary="What publishing would send and cost (dry run: no AWS call)",
        parameters=[PlanQueryIn],
        responses={200: PlanOut},
        tags=TAGS,
    )
    def get(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.VIEWER, pk=pk)
        query = PlanQueryIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        environment = query.validated_data.get("environment")
        plan = crowd_selectors.batch_publish_plan(
            batch=batch,
            sandbox=None if environment is None else environment == "sandbox",
            median_seconds=query.validated_data.get("median_seconds"),
        )
        data: dict[str, Any] = {**plan.__dict__, "assignments": plan.assignments, "cost": plan.cost}
        return Response(PlanOut(data).data)


class PublishView(CrowdView):
    @extend_schema(
        operation_id="batch_publish",
        summary="Publish the batch's HITs (safe to repeat: never duplicates)",
        request=PublishIn,
        responses={200: PublishOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.OWNER, pk=pk)
        # The crowd's own publish options, from its fields of the body (its backend checks them).
        data = {key: value for key, value in _body(PublishIn, request).items() if value is not None}
        options = {**data.pop("options", {}), **get_backend(batch.backend).publish_api_options(data)}
        result = crowd.batch_publish(batch=batch, options=options, by=_user(request))
        return Response(PublishOut(result).data)


class SyncView(CrowdView):
    @extend_schema(
        operation_id="batch_sync",
        summary="Reconcile with the crowd, review by policy, pay bonuses, block, re-collect",
        request=SyncIn,
        responses={200: SyncOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.OWNER, pk=pk)
        params = _body(SyncIn, request)
        hold = params.get("hold_seconds")
        report = crowd.batch_sync(
            batch=batch,
            review=params["review"],
            hold=None if hold is None else timedelta(seconds=hold),
        )
        return Response(SyncOut(report.as_dict()).data)


class ExpireView(CrowdView):
    @extend_schema(
        operation_id="batch_expire",
        summary="Expire the batch's HITs on the crowd now and close the batch",
        request=None,
        responses={200: ExpireOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
        expired = crowd.batch_expire(batch=batch, by=_user(request))
        return Response(ExpireOut({"expired": expired}).data)


class CrowdStatusView(CrowdView):
    @extend_schema(operation_id="batch_crowd_status", responses={200: CrowdStatusOut}, tags=TAGS)
    def get(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.VIEWER, pk=pk)
        spending = crowd_selectors.batch_spending(batch=batch)
        values = {name: f"{getattr(spending, name):.2f}" for name in SPENDING_FIELDS}
        return Response(
            CrowdStatusOut({**crowd_selectors.batch_crowd_status(batch=batch).__dict__, "spending": values}).data
        )


class PolicyView(CrowdView):
    @extend_schema(
        operation_id="batch_review_policy",
        summary="Approve or reject filtered work on the crowd, and the rejection message",
        request=PolicyIn,
        responses={200: PolicyOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.OWNER, pk=pk)
        batch = crowd.batch_review_policy_update(batch=batch, **_body(PolicyIn, request))
        return Response(PolicyOut(batch).data)


class NotifyView(CrowdView):
    @extend_schema(
        operation_id="batch_notify",
        summary="Message every worker who submitted work in the batch",
        request=NotifyIn,
        responses={200: NotifyOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
        result = crowd.batch_notify(batch=batch, **_body(NotifyIn, request))
        return Response(NotifyOut(result.__dict__).data)


class ApproveView(CrowdView):
    @extend_schema(
        operation_id="assignment_approve",
        summary="Approve submitted work (MTurk pays it); idempotent",
        request=MessageIn,
        responses={200: AssignmentOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        return _assignment_decided(request, pk, need=Role.OWNER, decide=crowd.assignment_approve)


class RejectView(CrowdView):
    @extend_schema(
        operation_id="assignment_reject",
        summary="Reject submitted work with a message (default: the batch's); it is re-collected",
        request=MessageIn,
        responses={200: AssignmentOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        return _assignment_decided(request, pk, need=Role.EDITOR, decide=crowd.assignment_reject)


class BonusView(CrowdView):
    @extend_schema(
        operation_id="assignment_bonus",
        summary="Pay the worker of an assignment a bonus, once",
        request=BonusIn,
        responses={201: BonusOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = object_for(request.user, Assignment.objects.all(), Role.OWNER, pk=pk)
        bonus = crowd.worker_bonus(assignment=assignment, created_by=_user(request), **_body(BonusIn, request))
        return Response(BonusOut(bonus).data, status=status.HTTP_201_CREATED)


class BlockView(CrowdView):
    @extend_schema(
        operation_id="worker_block_remote",
        summary="Block a worker here and on their crowd (MTurk create_worker_block)",
        request=BlockIn,
        responses={200: WorkerOut, 409: REFUSED},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        worker = worker_for(request.user, pk, Role.EDITOR)
        reason = _body(BlockIn, request)["reason"]
        worker = crowd.worker_block_remote(worker=worker, reason=reason, by=_user(request))
        return Response(WorkerOut(worker).data)


# Pausing and resuming a batch (docs/batches.md, "Operations"): what it means is its crowd's.


class PauseOut(serializers.Serializer):
    batch = serializers.IntegerField()
    paused = serializers.BooleanField(help_text="whether the batch is paused now")
    changed = serializers.BooleanField(help_text="false when it already was in that state (the call is idempotent)")
    paused_at = serializers.DateTimeField(allow_null=True)
    meaning = serializers.CharField(help_text="what pausing means on the batch's crowd")


def _pause_out(batch: Batch, changed: bool) -> dict[str, Any]:
    batch.refresh_from_db(fields=["paused_at"])
    return {
        "batch": batch.pk,
        "paused": batch.paused_at is not None,
        "changed": changed,
        "paused_at": batch.paused_at,
        "meaning": get_backend(batch.backend).pause_meaning,
    }


class BatchPauseApi(CrowdView):
    @extend_schema(
        operation_id="batch_pause",
        summary="Pause a batch: it hands out no new HITs; work taken may still be submitted",
        request=None,
        responses={200: PauseOut, 409: REFUSED},
        tags=["operations"],
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
        changed = crowd.batch_pause(batch=batch, by=_user(request))
        return Response(PauseOut(_pause_out(batch, changed)).data)


class BatchResumeApi(CrowdView):
    @extend_schema(
        operation_id="batch_resume",
        summary="Resume a paused batch: it hands out its HITs again",
        request=None,
        responses={200: PauseOut, 409: REFUSED},
        tags=["operations"],
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
        changed = crowd.batch_resume(batch=batch, by=_user(request))
        return Response(PauseOut(_pause_out(batch, changed)).data)
