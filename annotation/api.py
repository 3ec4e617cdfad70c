"""REST API for benchmarks: list, detail with counts, and import (researchers only)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors
from annotation.importers import FORMATS, validate_upload_size
from annotation.models import Benchmark
from annotation.services import ImportFailed, benchmark_import
from crowdlex.permissions import IsResearcher


class BenchmarkListItemSerializer(serializers.ModelSerializer[Benchmark]):
    target_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Benchmark
        fields = ["name", "title", "scheme", "created_at", "target_count"]


class BenchmarkCountsSerializer(serializers.Serializer[dict[str, int]]):
    contexts = serializers.IntegerField()
    targets = serializers.IntegerField()
    candidates = serializers.IntegerField()
    labels = serializers.IntegerField()


class BenchmarkDetailSerializer(serializers.ModelSerializer[Benchmark]):
    counts = serializers.SerializerMethodField()

    class Meta:
        model = Benchmark
        fields = [
            "name",
            "title",
            "description",
            "scheme",
            "candidates_per_hit",
            "step2_labels",
            "step3_labels",
            "pass_min_accepts",
            "min_control_accuracy",
            "reward",
            "seed",
            "distinct_workers_per_candidate",
            "created_at",
            "counts",
        ]

    @extend_schema(responses=BenchmarkCountsSerializer)  # type: ignore[misc]
    def get_counts(self, benchmark: Benchmark) -> dict[str, int]:
        return self.context["counts"]  # type: ignore[no-any-return]


class ImportInputSerializer(serializers.Serializer[dict[str, Any]]):
    file = serializers.FileField(
        help_text="JSONL, CSV or SWORDS JSON, gzipped or not (docs/formats.md)", validators=[validate_upload_size]
    )
    format = serializers.ChoiceField(choices=["auto", *FORMATS], default="auto")
    origin = serializers.CharField(
        required=False, max_length=200, help_text="name the labels are kept under; default: the file name"
    )


class EntityCountsSerializer(serializers.Serializer[Any]):
    created = serializers.IntegerField()
    merged = serializers.IntegerField()
    skipped = serializers.IntegerField()


class IdMismatchSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    file_id = serializers.CharField()
    expected_id = serializers.CharField()


class ImportReportSerializer(serializers.Serializer[Any]):
    benchmark = serializers.CharField()
    origin = serializers.CharField()
    format = serializers.CharField()
    benchmark_created = serializers.BooleanField()
    contexts = EntityCountsSerializer()
    targets = EntityCountsSerializer()
    candidates = EntityCountsSerializer()
    labels = EntityCountsSerializer()
    updated = serializers.IntegerField(help_text="existing rows changed: candidates with new sources, file facts")
    id_mismatch_count = serializers.IntegerField()
    id_mismatches = IdMismatchSerializer(many=True, help_text="the first 50")
    warnings = serializers.ListField(child=serializers.CharField())
    seconds = serializers.FloatField()


class ImportErrorSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField(help_text="file, line or id, field, and what is wrong")
    file = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    item = serializers.CharField(allow_null=True, help_text="SWORDS id, where the format has no lines")
    field = serializers.CharField(allow_null=True)


class BenchmarkListView(generics.ListAPIView[Benchmark]):
    permission_classes = [IsResearcher]
    serializer_class = BenchmarkListItemSerializer

    def get_queryset(self) -> Any:
        return selectors.benchmark_list()


class BenchmarkDetailView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=BenchmarkDetailSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        counts = selectors.benchmark_counts(benchmark=benchmark)
        return Response(BenchmarkDetailSerializer(benchmark, context={"counts": counts}).data)


class BenchmarkImportView(APIView):
    """Import a file into the benchmark (created if needed): all or nothing, and repeatable."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportInputSerializer},
        responses={200: ImportReportSerializer, 400: ImportErrorSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        given = ImportInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        upload = given.validated_data["file"]
        try:
            # Django keeps uploads above FILE_UPLOAD_MAX_MEMORY_SIZE in a temporary file; the
            # import streams from it.
            report = benchmark_import(
                path_or_file=upload,
                benchmark_name=name,
                fmt=given.validated_data["format"],
                created_by=request.user,  # type: ignore[arg-type]
                origin=given.validated_data.get("origin"),
            )
        except ImportFailed as exc:
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        return Response(ImportReportSerializer(report).data)


urlpatterns = [
    path("benchmarks/", BenchmarkListView.as_view(), name="api-benchmark-list"),
    path("benchmarks/<slug:name>/", BenchmarkDetailView.as_view(), name="api-benchmark-detail"),
    path("benchmarks/<slug:name>/import", BenchmarkImportView.as_view(), name="api-benchmark-import"),
]
