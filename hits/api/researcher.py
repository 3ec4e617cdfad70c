"""REST API for researchers: batches (list, create, detail, close), their HITs, HITs, assignments.

Views are thin: they validate with an input serializer, call one service or selector, and render
with an output serializer. Every view requires `IsResearcher`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import django_filters
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django_filters.fields import IsoDateTimeField
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, benchmark_for, benchmarks_visible_to, object_for, require, visible
from annotation.models import Benchmark, Worker
from annotation.services import workers_by_username
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher
from crowds.interface import backend_choices, default_backend_name
from hits import selectors, services
from hits.design import design_options
from hits.design.api import DesignSerializer, design_given
from hits.models import (
    HIT,
    MAX_ASSIGNMENT_MINUTES,
    MAX_BATCH_SEED,
    Answer,
    Assignment,
    AssignmentStatus,
    Batch,
    BatchStatus,
    HITItem,
)
from hits.selectors import BatchProgress, Throughput
from schemes.design import DesignInvalid

# ---------------------------------------------------------------- serializers


class BatchProgressSerializer(serializers.Serializer):
    hits_total = serializers.IntegerField()
    hits_complete = serializers.IntegerField()
    assignments_required = serializers.IntegerField()
    assignments_valid = serializers.IntegerField(help_text="submitted or approved, not filtered")
    assignments_filtered = serializers.IntegerField()
    assignments_in_flight = serializers.IntegerField(help_text="claimed and not past their deadline")
    median_seconds = serializers.FloatField(allow_null=True, help_text="median time per valid assignment")
    cost_so_far = serializers.DecimalField(
        max_digits=12,
        decimal_places=2,
        help_text="valid assignments' rewards with the crowd's fee, and bonuses sent with theirs (dollars)",
    )
    cost_projected = serializers.DecimalField(
        max_digits=12,
        decimal_places=2,
        help_text="required assignments' rewards with the crowd's fee, and bonuses sent with theirs (dollars)",
    )


class ThroughputSerializer(serializers.Serializer):
    last_hour = serializers.IntegerField(help_text="assignments handed in over the last hour")
    per_hour = serializers.ListField(
        child=serializers.IntegerField(), help_text="handed in per hour, the last hour first (THROUGHPUT_WINDOW_HOURS)"
    )
    remaining = serializers.IntegerField(help_text="required assignments not yet valid")
    eta_seconds = serializers.IntegerField(allow_null=True, help_text="at the last hour's rate; null: no work in it")
    finish_at = serializers.DateTimeField(allow_null=True)
    basis = serializers.CharField(help_text="what the ETA rests on, in words")


class BatchSerializer(serializers.ModelSerializer):
    benchmark: serializers.SlugRelatedField[Benchmark] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="the researcher's account; null for a batch made by a command or the pipeline",
    )
    progress = serializers.SerializerMethodField()
    throughput = serializers.SerializerMethodField()

    class Meta:
        model = Batch
        fields = [
            "id",
            "benchmark",
            "step",
            "parent",
            "backend",
            "status",
            "seed",
            "assignments_per_hit",
            "reward",
            "assignment_duration",
            "lifetime",
            "title",
            "gold_feedback",
            "created_at",
            "created_by",
            "progress",
            "paused_at",
            "throughput",
        ]
        read_only_fields = fields

    @extend_schema_field(BatchProgressSerializer)
    def get_progress(self, batch: Batch) -> dict[str, Any]:
        progress: BatchProgress = self.context["progress"][batch.pk]
        return dict(BatchProgressSerializer(progress).data)

    @extend_schema_field(ThroughputSerializer)
    def get_throughput(self, batch: Batch) -> dict[str, Any]:
        throughput: Throughput = self.context["throughput"][batch.pk]
        return dict(ThroughputSerializer(throughput.as_dict()).data)


class VisibleBenchmarkField(serializers.SlugRelatedField):
    """A benchmark by name among those the requesting user sees: another's reads as unknown."""

    def get_queryset(self) -> QuerySet[Benchmark]:
        return benchmarks_visible_to(self.context["request"].user)


class BatchCreateSerializer(serializers.Serializer):
    benchmark = VisibleBenchmarkField(slug_field="name", queryset=Benchmark.objects.all())
    step = serializers.IntegerField(
        min_value=1,
        max_value=32767,
        help_text="one of the steps of the benchmark's scheme that collects work",
    )
    seed = serializers.IntegerField(
        min_value=0, max_value=MAX_BATCH_SEED, help_text="the same seed gives the same HITs"
    )
    targets = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        allow_empty=False,
        help_text="target ids; left out, every target waiting for the step outside open batches",
    )
    backend = serializers.ChoiceField(choices=backend_choices(), default=default_backend_name)
    assignments_per_hit = serializers.IntegerField(min_value=1, max_value=100, required=False, allow_null=True)
    reward = serializers.DecimalField(max_digits=6, decimal_places=2, min_value=0, required=False, allow_null=True)
    assignment_minutes = serializers.IntegerField(
        min_value=1, max_value=MAX_ASSIGNMENT_MINUTES, required=False, help_text="time to submit a claim"
    )
    force = serializers.BooleanField(
        default=False, help_text="generate even for candidates already in an open batch of the step"
    )
    gold_feedback = serializers.BooleanField(
        default=False, help_text="show each worker their own accuracy on the batch's check items"
    )
    annotators = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        allow_empty=False,
        help_text="usernames to assign the work to (each target to one of them, on the local queue); "
        "a scheme whose work goes to named annotators needs them",
    )
    overlap = serializers.IntegerField(
        min_value=0, default=0, help_text="targets that two of the named annotators both judge (for agreement)"
    )
    design = DesignSerializer(
        required=False,
        help_text="the batch's task design (docs/batches.md, \"Task design\"); left out, the benchmark's template",
    )

    def validate_annotators(self, usernames: list[str]) -> list[Worker]:
        try:
            return workers_by_username(usernames=usernames)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from error


class TargetBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    word = serializers.CharField()
    pos = serializers.CharField()


class HITSerializer(serializers.ModelSerializer):
    target = TargetBriefSerializer(read_only=True)
    assignments_valid = serializers.IntegerField(read_only=True)
    assignments_in_flight = serializers.IntegerField(read_only=True)

    class Meta:
        model = HIT
        fields = [
            "id",
            "batch",
            "target",
            "part",
            "assignments_required",
            "assignments_active",
            "assignments_valid",
            "assignments_in_flight",
            "external_id",
        ]
        read_only_fields = fields


class HITItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = HITItem
        fields = ["id", "position", "kind", "text", "candidate"]
        read_only_fields = fields


class AnswerSerializer(serializers.ModelSerializer):
    class Meta:
        model = Answer
        fields = ["item", "value"]
        read_only_fields = fields


class WorkerBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Worker
        fields = ["id", "kind", "external_id", "blocked"]
        read_only_fields = fields


class AssignmentSerializer(serializers.ModelSerializer):
    worker = WorkerBriefSerializer(read_only=True)
    batch = serializers.IntegerField(source="hit.batch_id", read_only=True)

    class Meta:
        model = Assignment
        fields = [
            "id",
            "hit",
            "batch",
            "worker",
            "status",
            "filtered",
            "claimed_at",
            "deadline",
            "submitted_at",
            "seconds_on_page",
            "controls_correct",
            "controls_total",
            "external_id",
        ]
        read_only_fields = fields


class AssignmentWithAnswersSerializer(AssignmentSerializer):
    answers = AnswerSerializer(many=True, read_only=True)

    class Meta(AssignmentSerializer.Meta):
        fields = [*AssignmentSerializer.Meta.fields, "answers"]
        read_only_fields = fields


class TargetInContextSerializer(TargetBriefSerializer):
    lemma = serializers.CharField()
    offset = serializers.IntegerField()
    context_text = serializers.CharField(source="context.text")


class HITDetailSerializer(serializers.ModelSerializer):
    target = TargetInContextSerializer(read_only=True)
    step = serializers.IntegerField(source="batch.step", read_only=True)
    items = HITItemSerializer(many=True, read_only=True)
    assignments = serializers.SerializerMethodField()

    class Meta:
        model = HIT
        fields = [
            "id",
            "batch",
            "step",
            "target",
            "part",
            "assignments_required",
            "assignments_active",
            "external_id",
            "items",
            "assignments",
        ]
        read_only_fields = fields

    @extend_schema_field(AssignmentWithAnswersSerializer(many=True))
    def get_assignments(self, hit: HIT) -> list[dict[str, Any]]:
        return list(AssignmentWithAnswersSerializer(selectors.hit_assignments(hit=hit), many=True).data)


# ---------------------------------------------------------------- filters


class BatchFilter(django_filters.FilterSet):
    benchmark = django_filters.CharFilter(field_name="benchmark__name", help_text="benchmark name")
    step = django_filters.NumberFilter()
    status = django_filters.ChoiceFilter(choices=BatchStatus.choices)
    # Listed in the schema (the choices named, not a callable the schema cannot read), so a client
    # or a fuzzer knows which values the filter takes.
    backend = django_filters.ChoiceFilter(choices=backend_choices())

    class Meta:
        model = Batch
        fields = ["benchmark", "step", "status", "backend"]


class UTCDateTimeField(IsoDateTimeField):
    """An ISO 8601 time turned to UTC here: PostgreSQL refuses offsets past 16 hours, which Python
    reads, and a time that UTC puts outside years 1 to 9999 is refused as a bad value."""

    def to_python(self, value: Any) -> datetime | None:
        parsed = super().to_python(value)
        if parsed is None:
            return None
        try:
            return parsed.astimezone(UTC)
        except OverflowError:
            raise DjangoValidationError("This time is out of range.", code="invalid") from None


class UTCDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UTCDateTimeField


class AssignmentFilter(django_filters.FilterSet):
    benchmark = django_filters.CharFilter(field_name="hit__batch__benchmark__name", help_text="benchmark name")
    batch = django_filters.NumberFilter(field_name="hit__batch_id")
    hit = django_filters.NumberFilter(field_name="hit_id")
    worker = django_filters.NumberFilter(field_name="worker_id")
    worker_external_id = django_filters.CharFilter(field_name="worker__external_id")
    status = django_filters.MultipleChoiceFilter(choices=AssignmentStatus.choices)
    filtered = django_filters.BooleanFilter()
    submitted_after = UTCDateTimeFilter(field_name="submitted_at", lookup_expr="gte")
    submitted_before = UTCDateTimeFilter(field_name="submitted_at", lookup_expr="lt")

    class Meta:
        model = Assignment
        fields = ["benchmark", "batch", "hit", "worker", "status", "filtered"]


# ---------------------------------------------------------------- views


def _figures(batches: list[Batch]) -> dict[str, Any]:
    """What the batch serializer reads: each batch's progress and throughput, in grouped statements."""
    progress = selectors.batches_progress(batches=batches)
    return {"progress": progress, "throughput": selectors.batches_throughput(batches=batches, progress=progress)}


def batch_response(batch: Batch, *, status_code: int = status.HTTP_200_OK) -> Response:
    return Response(BatchSerializer(batch, context=_figures([batch])).data, status=status_code)


def _design_options(data: dict[str, Any], *, design: Any) -> dict[str, Any]:
    """The batch options a design given with a new batch makes, checked against its step's page;
    refused field by field under ``design.``."""
    try:
        return design_options(benchmark=data["benchmark"], step=data["step"], data=design_given(design), given=data)
    except DesignInvalid as invalid:
        raise ValidationError({f"design.{field}": errors for field, errors in invalid.message_dict.items()}) from None


class BatchListCreateView(generics.ListAPIView):
    """GET: batches with their progress, newest first. POST: generate a batch (hits_generate)."""

    permission_classes = [IsResearcher]
    serializer_class = BatchSerializer
    filterset_class = BatchFilter

    def get_queryset(self) -> QuerySet[Batch]:
        return visible(self.request.user, selectors.batch_list())

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        batches = list(page) if page is not None else []
        context = {**self.get_serializer_context(), **_figures(batches)}
        return self.get_paginated_response(BatchSerializer(batches, many=True, context=context).data)

    @extend_schema(request=BatchCreateSerializer, responses={201: BatchSerializer})
    def post(self, request: Request) -> Response:
        given = BatchCreateSerializer(data=request.data, context={"request": request})
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        require(request.user, data["benchmark"], Role.EDITOR)
        minutes = data.pop("assignment_minutes", None)
        if minutes is not None:
            data["assignment_duration"] = timedelta(minutes=minutes)
        if "design" in data:
            data.update(_design_options(data, design=data.pop("design")))
        try:
            batch = services.hits_generate(created_by=request.user if isinstance(request.user, User) else None, **data)
        except services.HitsGenerationError as error:
            raise ValidationError({"non_field_errors": [str(error)]}) from error
        return batch_response(batch, status_code=status.HTTP_201_CREATED)


class BatchDetailView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=BatchSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return batch_response(object_for(request.user, selectors.batch_list(), Role.VIEWER, pk=pk))


class BatchCloseView(APIView):
    """Close a batch (idempotent): it offers no more HITs and frees its candidates for a new batch."""

    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses=BatchSerializer)
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, selectors.batch_list(), Role.EDITOR, pk=pk)
        services.batch_close(batch=batch, by=request.user)
        return batch_response(batch)


class BatchHITListView(generics.ListAPIView):
    """The HITs of a batch with their valid and in-flight assignment counts."""

    permission_classes = [IsResearcher]
    serializer_class = HITSerializer
    filterset_class = None

    def get_queryset(self) -> QuerySet[HIT]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no batch
            return HIT.objects.none()
        batch = object_for(self.request.user, Batch.objects.all(), Role.VIEWER, pk=self.kwargs["pk"])
        return selectors.batch_hits(batch=batch)


class HITDetailView(APIView):
    """A HIT with its items in display order (controls marked by kind) and every assignment's answers."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=HITDetailSerializer)
    def get(self, request: Request, pk: int) -> Response:
        object_for(request.user, HIT.objects.all(), Role.VIEWER, pk=pk)
        try:
            hit = selectors.hit_with_items(hit_id=pk)
        except HIT.DoesNotExist:
            return Response({"detail": "No such HIT."}, status=status.HTTP_404_NOT_FOUND)
        return Response(HITDetailSerializer(hit).data)


class AssignmentListView(generics.ListAPIView):
    """Assignments of every batch, filtered by benchmark, batch, HIT, worker, status, spam filter or time."""

    permission_classes = [IsResearcher]
    serializer_class = AssignmentSerializer
    filterset_class = AssignmentFilter

    def get_queryset(self) -> QuerySet[Assignment]:
        return visible(self.request.user, selectors.assignment_list())


class AnnotatorWorkSerializer(serializers.Serializer):
    worker_id = serializers.IntegerField()
    name = serializers.CharField(help_text="the annotator's account")
    targets = serializers.IntegerField(help_text="HITs reserved for them")
    shared = serializers.IntegerField(help_text="of which another annotator has too (the overlap)")
    submitted = serializers.IntegerField()
    in_progress = serializers.IntegerField()


class BenchmarkAssignmentsView(PaginatedList, APIView):
    """Work assigned to named annotators in a benchmark (ProLex's experts), annotator by annotator."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=AnnotatorWorkSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return self.paginated(request, selectors.benchmark_assignments(benchmark=benchmark), AnnotatorWorkSerializer)
