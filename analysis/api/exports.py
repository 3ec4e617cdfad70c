"""REST API of exports (researchers only): export jobs, their files, and direct streamed downloads."""

from __future__ import annotations

import mimetypes
from typing import Any

from django.conf import settings
from django.http import FileResponse, HttpResponse, HttpResponseBase, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis import exports, services
from analysis.models import ExportJob, ExportStatus
from analysis.selectors import benchmark_valid_label_count
from analysis.services import LICENSES_HINT
from analysis.services.exports import stats_document
from annotation.access import Role, benchmark_for, object_for
from annotation.changes import benchmark_cached
from annotation.models import Benchmark
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher


class ExportInputSerializer(serializers.Serializer[Any]):
    format = serializers.ChoiceField(choices=exports.export_format_names())
    compress = serializers.BooleanField(default=True, help_text="gzip the file")
    raw_workers = serializers.BooleanField(
        default=False, help_text="worker ids instead of pseudonyms, for internal use (marked in the file name, logged)"
    )
    license = serializers.CharField(
        required=False, default="unknown", max_length=50, help_text=f"the dataset format's license: {LICENSES_HINT}"
    )


class ExportJobSerializer(serializers.ModelSerializer[ExportJob]):
    benchmark: serializers.SlugRelatedField[Benchmark] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = ["id", "benchmark", "format", "raw_workers", "license", "status", "progress", "error", "created_at"]
        fields += ["finished_at"]
        fields += ["download_url"]

    def get_download_url(self, job: ExportJob) -> str | None:
        if job.status != ExportStatus.DONE:
            return None
        request = self.context.get("request")
        url = f"/api/exports/{job.pk}/download"
        return request.build_absolute_uri(url) if request is not None else url


class ExportJobListCreateView(PaginatedList, APIView):
    """A benchmark's export jobs, newest first; POST queues a new one (written by a Celery task)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=ExportJobSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        jobs = ExportJob.objects.filter(benchmark=benchmark).select_related("benchmark")
        return self.paginated(request, jobs, ExportJobSerializer, context={"request": request})

    @extend_schema(request=ExportInputSerializer, responses={201: ExportJobSerializer})
    def post(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        given = ExportInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            job = services.export_job_create(
                benchmark=benchmark,
                format=given.validated_data["format"],
                compress=given.validated_data["compress"],
                raw_workers=given.validated_data["raw_workers"],
                license=given.validated_data["license"],
                created_by=request.user,  # type: ignore[arg-type]
            )
        except ValueError as exc:
            raise serializers.ValidationError({"format": str(exc)}) from exc
        return Response(ExportJobSerializer(job, context={"request": request}).data, status=status.HTTP_201_CREATED)


class ExportJobDetailView(APIView):
    """An export job's status and progress (0 to 1)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=ExportJobSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        job = object_for(request.user, ExportJob.objects.select_related("benchmark"), Role.VIEWER, pk=job_id)
        return Response(ExportJobSerializer(job, context={"request": request}).data)


class ExportJobRestartView(APIView):
    """Queue a failed export job again (409 unless it failed)."""

    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses={200: ExportJobSerializer, 409: OpenApiTypes.OBJECT})
    def post(self, request: Request, job_id: int) -> Response:
        job = object_for(request.user, ExportJob.objects.select_related("benchmark"), Role.VIEWER, pk=job_id)
        if not services.export_job_restart(job=job):
            return Response({"detail": f"Export {job.pk} is {job.status}: only a failed one restarts."}, status=409)
        return Response(ExportJobSerializer(job, context={"request": request}).data)


JOB_MEDIA_TYPES = ("text/csv", "application/json", "application/gzip", "application/zip")


def _file_schema(media_type: str) -> OpenApiTypes:
    # A JSON export is one JSON document; the others are files a client saves as they come.
    return OpenApiTypes.OBJECT if media_type == "application/json" else OpenApiTypes.BINARY


def export_job_download_response(job: ExportJob) -> HttpResponseBase:
    """The finished file of an export job as an attachment (404 until it is done)."""
    if job.status != ExportStatus.DONE:
        return HttpResponse(status=status.HTTP_404_NOT_FOUND)
    try:
        path = services.export_job_file(job)
        handle = path.open("rb")
    except (OSError, ValueError):
        return HttpResponse(status=status.HTTP_404_NOT_FOUND)
    filename = path.name.split("-", 1)[1] if "-" in path.name else path.name
    return FileResponse(handle, as_attachment=True, filename=filename)


class ExportJobDownloadView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        # The file as the job wrote it: CSV or JSON, gzipped when asked, a zip for the dataset folder.
        responses={(200, media_type): _file_schema(media_type) for media_type in JOB_MEDIA_TYPES},
    )
    def get(self, request: Request, job_id: int) -> HttpResponseBase:
        return export_job_download_response(object_for(request.user, ExportJob.objects.all(), Role.VIEWER, pk=job_id))


CONTENT_TYPES = {
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
}


def content_type(suffix: str) -> str:
    """The media type of an export format's suffix: a suffix not listed above, which a scheme's own
    format may bring, is the type the standard library knows for it, else plain text."""
    return CONTENT_TYPES.get(suffix) or mimetypes.guess_type(f"export{suffix}")[0] or "text/plain"


def direct_export_allowed(*, benchmark: Benchmark, format: str) -> bool:
    """Statistics always stream from a request; the large formats and the candidate table (whose
    posteriors are fitted over every label) up to a number of labels; the dataset folder never (an
    export job zips it)."""
    if format == exports.STATS:
        return True
    if format == exports.DATASET:
        return False
    return direct_export_labels(benchmark=benchmark) <= settings.ANALYSIS_DIRECT_EXPORT_MAX_LABELS


def direct_export_labels(*, benchmark: Benchmark) -> int:
    """The benchmark's valid labels, which decide whether a format downloads directly: once per
    change of the benchmark (annotation.changes), not once per format listed, and after a change
    summed again for the targets it named only (warmed after a change, analysis.warmers)."""
    return benchmark_cached(
        benchmark=benchmark, name="valid-labels", compute=lambda: benchmark_valid_label_count(benchmark=benchmark)
    )


def direct_export_response(*, benchmark: Benchmark, format: str, by: Any = None) -> HttpResponseBase:
    """A streamed download of one export format (memory bounded by a chunk of rows); ``by`` is logged."""
    problem = exports.unknown_format(format, benchmark)
    chosen = exports.export_format(format)
    if problem is not None or chosen is None:
        return HttpResponse(problem, status=404, content_type="text/plain")
    if not direct_export_allowed(benchmark=benchmark, format=format):
        return HttpResponse(
            "The dataset folder is written by an export job."
            if format == exports.DATASET
            else "This benchmark is too large to download directly: create an export job.",
            status=status.HTTP_409_CONFLICT,
            content_type="text/plain",
        )
    pieces = exports.export_pieces(
        benchmark=benchmark,
        format=format,
        statistics=lambda workers: stats_document(benchmark, workers, None),
    )
    response = StreamingHttpResponse(
        (chunk.encode("utf-8") for chunk in exports.batched_text(pieces)),
        content_type=f"{content_type(chosen.suffix)}; charset=utf-8",
    )
    filename = services.export_filename(benchmark=benchmark, format=format, compress=False)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    services.export_download_record(benchmark=benchmark, format=format, by=by)
    return response


class DirectExportView(APIView):
    """Stream an export straight from the request (409 for a large benchmark: create a job)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        # Not called "format": DRF reads a "format" URL argument as the renderer's suffix.
        parameters=[OpenApiParameter("export_format", str, OpenApiParameter.PATH, enum=exports.export_format_names())],
        responses={
            **{(200, media_type): _file_schema(media_type) for media_type in CONTENT_TYPES.values()},
            409: OpenApiResponse(description="too large to stream: create an export job"),
        },
    )
    def get(self, request: Request, name: str, export_format: str) -> HttpResponseBase:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return direct_export_response(benchmark=benchmark, format=export_format, by=request.user)
