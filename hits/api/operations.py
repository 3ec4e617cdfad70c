"""REST API for running a collection (docs/api.md, docs/notifications.md): a benchmark's budget with
its burn-down, and its notifications with their webhook deliveries. Pausing and resuming a batch is
its crowd's (``crowds.api``)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, benchmark_for
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher
from hits.budget import budget_status
from hits.models import Notification, NotificationKind

TAGS = ["operations"]


class OperationsView(APIView):
    """A researcher's view of running a collection."""

    permission_classes = [IsResearcher]


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


class BenchmarkBudgetApi(OperationsView):
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


class BenchmarkNotificationsApi(PaginatedList, OperationsView):
    @extend_schema(operation_id="benchmark_notifications", responses={200: NotificationOut(many=True)}, tags=TAGS)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        events = (
            Notification.objects.filter(benchmark=benchmark)
            .prefetch_related("deliveries")
            .order_by("-created_at", "-id")
        )
        return self.paginated(request, events, NotificationOut)
