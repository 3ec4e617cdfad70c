"""REST API of the pipeline (researchers only): progress, flags and their review, worker blocks."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, benchmark_for, object_for
from annotation.models import Benchmark, Worker
from crowdlex.permissions import IsResearcher
from hits.access import worker_for
from hits.guards import benchmark_mitigations
from review import selectors
from review.models import WorkerFlag
from review.services import review_settings_update, worker_block, worker_flag_clear, worker_unblock
from review.signals import SignalSettings
from review.tasks import benchmark_refresh
from schemes.progress import ProgressTable

# ---- serializers ----


class StepProgressSerializer(serializers.Serializer):
    step = serializers.IntegerField()
    title = serializers.CharField(help_text="the step in its scheme's words")
    unit = serializers.CharField(help_text="what the step counts: 'valid labels', 'judgments', 'marks'")
    item_noun = serializers.CharField(help_text="what it counts them on: 'candidates', 'substitutes', 'sentences'")
    labels_collected = serializers.IntegerField(help_text="work collected, capped per item at what the step needs")
    labels_needed = serializers.IntegerField()
    candidates = serializers.IntegerField(help_text="the items of the step (``item_noun``)")
    hits = serializers.IntegerField()
    open_slots = serializers.IntegerField(help_text="free slots of HITs in open batches whose target is not done")
    waiting = serializers.IntegerField(
        help_text="items of the step lacking work that no open batch holds: what a new batch would take"
    )
    waiting_noun = serializers.CharField(help_text="what ``waiting`` counts, in the scheme's words")


class TargetStepSerializer(serializers.Serializer):
    step = serializers.IntegerField()
    collected = serializers.IntegerField(allow_null=True, help_text="null: a step the target has not reached")
    needed = serializers.IntegerField(allow_null=True)


class TargetProgressSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="target_id")
    word = serializers.CharField()
    pos = serializers.CharField()
    stage = serializers.CharField(help_text="the stored stage")
    stage_name = serializers.CharField(help_text="the stage in the words of the benchmark's scheme")
    candidates = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="the scheme's own figures by name")
    steps = TargetStepSerializer(many=True)
    open_slots = serializers.IntegerField()


class ProgressRowSerializer(serializers.Serializer):
    name = serializers.CharField()
    values = serializers.ListField(child=serializers.IntegerField(), help_text="one per column")


class ProgressTableSerializer(serializers.Serializer):
    title = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.SerializerMethodField()

    @extend_schema_field(ProgressRowSerializer(many=True))
    def get_rows(self, table: ProgressTable) -> list[dict[str, Any]]:
        return [{"name": name, "values": list(values)} for name, values in table.rows]


class PipelineProgressSerializer(serializers.Serializer):
    benchmark = serializers.CharField(source="benchmark.name")
    finished = serializers.BooleanField()
    summary = serializers.CharField(help_text="how the scheme's steps collect, in a sentence")
    targets_by_stage = serializers.DictField(child=serializers.IntegerField())
    candidates_by_stage = serializers.DictField(child=serializers.IntegerField())
    target_stage_names = serializers.DictField(child=serializers.CharField(), help_text="stored stage -> name shown")
    candidate_stage_names = serializers.DictField(child=serializers.CharField())
    assignments = serializers.DictField(child=serializers.IntegerField(), help_text="by status, plus 'filtered'")
    steps = StepProgressSerializer(many=True)
    tables = ProgressTableSerializer(many=True, help_text="the scheme's own tables (per named annotator, per item)")
    targets = TargetProgressSerializer(many=True)


class WorkerSerializer(serializers.ModelSerializer):
    # A plain string in the schema: an enum here would collide with HIT items' "kind" enum.
    kind = serializers.CharField(read_only=True, help_text="local, mturk, simulated or imported")

    class Meta:
        model = Worker
        fields = ["id", "kind", "external_id", "blocked", "blocked_reason"]


class WorkerFlagSerializer(serializers.ModelSerializer):
    worker = WorkerSerializer()
    active = serializers.BooleanField()
    cleared_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="who cleared it; null while it is active"
    )

    class Meta:
        model = WorkerFlag
        fields = ["id", "benchmark", "worker", "reason", "active", "evidence", "created_at", "updated_at"]
        fields += ["cleared_at", "cleared_by"]


class BlockInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


def _signal_overrides_schema() -> dict[str, Any]:
    """The overrides a benchmark may set: each SignalSettings field, a whole number where its default
    is one, none negative (``SignalSettings.with_overrides``), no other name."""
    properties = {}
    for field in dataclasses.fields(SignalSettings):
        default = getattr(SignalSettings, field.name)
        whole = isinstance(default, int) and not isinstance(default, bool)
        # Values are answered as numbers (3.0): a whole one is a number that is a multiple of 1.
        properties[field.name] = {"type": "number", "minimum": 0, "maximum": 1_000_000} | (
            {"multipleOf": 1} if whole else {}
        )
    return {"type": "object", "properties": properties, "additionalProperties": False}


@extend_schema_field(_signal_overrides_schema())
class SignalOverridesField(serializers.DictField):
    pass


class ReviewSettingsSerializer(serializers.Serializer):
    auto_block_spammers = serializers.BooleanField(required=False)
    auto_block_signals = serializers.BooleanField(required=False)
    signal_overrides = SignalOverridesField(
        # Shares, factors and counts: none sensible comes near a million.
        child=serializers.FloatField(min_value=0, max_value=1_000_000),
        required=False,
        help_text="SignalSettings field -> value",
    )
    pledge = serializers.BooleanField(required=False, help_text="ask for a pledge before the first HIT")
    block_copy_paste = serializers.BooleanField(
        required=False, help_text="disable copying the text and pasting into answer fields"
    )
    notice = serializers.BooleanField(required=False, help_text="say in the instructions that AI tools are not allowed")


def _settings_out(benchmark: Benchmark) -> dict[str, Any]:
    current = selectors.review_settings(benchmark=benchmark)
    mitigations = benchmark_mitigations(benchmark=benchmark)
    return ReviewSettingsSerializer(
        {
            "auto_block_spammers": current.auto_block_spammers,
            "auto_block_signals": current.auto_block_signals,
            "signal_overrides": current.signal_overrides,
            "pledge": mitigations.pledge,
            "block_copy_paste": mitigations.block_copy_paste,
            "notice": mitigations.notice,
        }
    ).data


class QueuedSerializer(serializers.Serializer):
    queued = serializers.BooleanField()


# ---- views ----


def _benchmark(request: Request, name: str, need: Role = Role.VIEWER) -> Benchmark:
    return benchmark_for(request.user, name, need)


class PipelineProgressView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=PipelineProgressSerializer, summary="Pipeline progress per step and per target")
    def get(self, request: Request, name: str) -> Response:
        progress = selectors.pipeline_progress(benchmark=_benchmark(request, name))
        return Response(PipelineProgressSerializer(progress).data)


class PipelineRefreshView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        request=None,
        responses={202: QueuedSerializer},
        summary="Recompute spam filtering and advance the pipeline (queued; inline on the embedded default)",
    )
    def post(self, request: Request, name: str) -> Response:
        benchmark_refresh.delay(_benchmark(request, name, Role.EDITOR).pk, full=True)
        return Response(QueuedSerializer({"queued": True}).data, status=status.HTTP_202_ACCEPTED)


class FlagListView(ListAPIView):
    permission_classes = [IsResearcher]
    serializer_class = WorkerFlagSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("active", bool, description="only active (true) or only cleared (false) flags"),
            OpenApiParameter("name", str, OpenApiParameter.PATH, description="benchmark name"),
        ],
        summary="Worker flags of a benchmark, with their evidence",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[WorkerFlag]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no benchmark
            return WorkerFlag.objects.none()
        flags = selectors.benchmark_flags(benchmark=_benchmark(self.request, self.kwargs["name"]))
        active = self.request.query_params.get("active")
        if active in ("true", "1"):
            flags = flags.filter(cleared_at__isnull=True)
        elif active in ("false", "0"):
            flags = flags.filter(cleared_at__isnull=False)
        return flags


class FlagClearView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses=WorkerFlagSerializer, summary="Clear a flag: the worker's work counts again")
    def post(self, request: Request, pk: int) -> Response:
        flag = object_for(request.user, WorkerFlag.objects.all(), Role.EDITOR, pk=pk)
        cleared = worker_flag_clear(flag=flag, by=request.user)  # type: ignore[arg-type]
        return Response(WorkerFlagSerializer(cleared).data)


class WorkerBlockView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        request=BlockInputSerializer,
        responses=WorkerSerializer,
        summary="Block a worker: no more HITs, and their labels stop counting",
    )
    def post(self, request: Request, pk: int) -> Response:
        worker = worker_for(request.user, pk, Role.EDITOR)
        data = BlockInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        blocked = worker_block(worker=worker, reason=data.validated_data["reason"], by=request.user)  # type: ignore[arg-type]
        return Response(WorkerSerializer(blocked).data)


class WorkerUnblockView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses=WorkerSerializer, summary="Unblock a worker")
    def post(self, request: Request, pk: int) -> Response:
        worker = worker_for(request.user, pk, Role.EDITOR)
        return Response(WorkerSerializer(worker_unblock(worker=worker, by=request.user)).data)  # type: ignore[arg-type]


class ReviewSettingsView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=ReviewSettingsSerializer, summary="A benchmark's review settings")
    def get(self, request: Request, name: str) -> Response:
        return Response(_settings_out(_benchmark(request, name)))

    @extend_schema(
        request=ReviewSettingsSerializer,
        responses=ReviewSettingsSerializer,
        summary="Change auto-blocking, bot-signal thresholds and the mitigations against AI tools",
    )
    def patch(self, request: Request, name: str) -> Response:
        benchmark = _benchmark(request, name, Role.EDITOR)
        data = ReviewSettingsSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        try:
            review_settings_update(benchmark=benchmark, by=request.user, **data.validated_data)  # type: ignore[arg-type]
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from None
        return Response(_settings_out(benchmark))


urlpatterns = [
    path("benchmarks/<slug:name>/pipeline/", PipelineProgressView.as_view(), name="api-pipeline-progress"),
    path("benchmarks/<slug:name>/pipeline/refresh/", PipelineRefreshView.as_view(), name="api-pipeline-refresh"),
    path("benchmarks/<slug:name>/flags/", FlagListView.as_view(), name="api-flag-list"),
    path("benchmarks/<slug:name>/review-settings/", ReviewSettingsView.as_view(), name="api-review-settings"),
    path("flags/<int:pk>/clear/", FlagClearView.as_view(), name="api-flag-clear"),
    path("workers/<int:pk>/block/", WorkerBlockView.as_view(), name="api-worker-block"),
    path("workers/<int:pk>/unblock/", WorkerUnblockView.as_view(), name="api-worker-unblock"),
]
