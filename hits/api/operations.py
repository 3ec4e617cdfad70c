"""REST API for running a collection (docs/api.md, docs/notifications.md): pause and resume a batch,
a benchmark's budget with its burn-down, and its notifications with their webhook deliveries.

Refusals (a closed batch, the crowd's own error) answer 409 with ``detail``, as the crowd API does.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.access import Role, benchmark_for, object_for
from crowdlex.pagination import PaginatedList
from crowds import services as crowd
from crowds.api import REFUSED, CrowdView, _user
from crowds.interface import get_backend
from hits.budget import budget_status
from hits.models import Batch, Notification, NotificationKind

TAGS = ["operations"]


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
        tags=TAGS,
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
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
        changed = crowd.batch_resume(batch=batch, by=_user(request))
        return Response(PauseOut(_pause_out(batch, changed)).data)


class BurnDayOut(serializers.Serializer):
    day = serializers.DateField()
    spent = serializers.DecimalField(max_digits=12, decimal_places=2)
    remaining = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)


class BudgetOut(serializers.Serializer):
    cap = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True, help_text="null: no cap")
    spent = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="paid work and bonuses, fees included")
    committed = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="published and not paid yet: work to decide, free slots, bonuses"
    )
    remaining = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    burn = BurnDayOut(many=True, help_text="the last days: spent that day, and the cap less spent after it")


class BenchmarkBudgetApi(CrowdView):
    @extend_schema(operation_id="benchmark_budget", responses={200: BudgetOut}, tags=TAGS)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        status = budget_status(benchmark=benchmark)
        values = {
            "cap": status.cap,
            "spent": status.spent,
            "committed": status.committed,
            "remaining": status.remaining,
            "burn": [{"day": day.day, "spent": day.spent, "remaining": day.remaining} for day in status.burn],
        }
        return Response(BudgetOut(values).data)


class DeliveryOut(serializers.Serializer):
    attempt = serializers.IntegerField()
    status_code = serializers.IntegerField(allow_null=True, help_text="the webhook's answer; null when none came")
    error = serializers.CharField()
    created_at = serializers.DateTimeField()


class NotificationOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=NotificationKind.choices)
    summary = serializers.CharField()
    payload = serializers.DictField(help_text="the event's data, as the webhook's body carries it")
    created_at = serializers.DateTimeField()
    emailed_at = serializers.DateTimeField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True, help_text="posted (2xx), or given up on")
    webhook_error = serializers.CharField()
    deliveries = DeliveryOut(many=True)


class BenchmarkNotificationsApi(PaginatedList, CrowdView):
    @extend_schema(operation_id="benchmark_notifications", responses={200: NotificationOut(many=True)}, tags=TAGS)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        events = (
            Notification.objects.filter(benchmark=benchmark)
            .prefetch_related("deliveries")
            .order_by("-created_at", "-id")
        )
        return self.paginated(request, events, NotificationOut)
