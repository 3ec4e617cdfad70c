"""REST API of the analysis (researchers only): statistics, agreement, the filter audit, the
re-annotation mark, exports (jobs, their files, and direct streamed downloads), and systems
evaluated against a benchmark with its leaderboard."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import FileResponse, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis import exports, services
from analysis.by_scheme import generation, sws
from analysis.evaluation import ResultError
from analysis.figures import StatisticsOptions, benchmark_figures, stats_document
from analysis.models import ExportJob, ExportStatus
from analysis.selectors import benchmark_valid_labels
from analysis.services import LICENSES_HINT
from annotation.importers import validate_upload_size
from annotation.models import Benchmark
from crowdlex.permissions import IsResearcher
from schemes.swords.scores import ScoreThresholds

# --- serializers -----------------------------------------------------------------------------


class PerTargetSerializer(serializers.Serializer[Any]):
    candidates = serializers.FloatField(allow_null=True)
    inconceivable = serializers.FloatField(allow_null=True)
    conceivable = serializers.FloatField(allow_null=True)
    acceptable = serializers.FloatField(allow_null=True)


class PerTargetNonemptySerializer(PerTargetSerializer):
    targets = serializers.DictField(child=serializers.IntegerField(), help_text="targets having each category")


class HistogramSerializer(serializers.Serializer[Any]):
    bins = serializers.ListField(child=serializers.CharField(), help_text='"0", then (i/10, (i+1)/10]')
    counts = serializers.ListField(child=serializers.IntegerField())


class SourceGroupSerializer(serializers.Serializer[Any]):
    candidates = serializers.IntegerField()
    share = serializers.FloatField()
    labels = serializers.IntegerField()
    mean_score = serializers.FloatField(allow_null=True)
    inconceivable = serializers.IntegerField()
    conceivable = serializers.IntegerField()
    acceptable = serializers.IntegerField()
    score_histogram = HistogramSerializer()


class PosGroupSerializer(serializers.Serializer[Any]):
    targets = serializers.IntegerField()
    candidates = serializers.IntegerField()
    labels = serializers.IntegerField()
    per_target = PerTargetSerializer()
    per_target_nonempty = PerTargetNonemptySerializer()


class InteractionSignalSerializer(serializers.Serializer[Any]):
    assignments = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True, help_text="of the assignments with telemetry")


class InteractionSerializer(serializers.Serializer[Any]):
    """Assignments whose telemetry shows each signal by itself (review.interaction, docs/quality.md)."""

    assignments = serializers.IntegerField(help_text="submitted work that counts (crowd work once confirmed)")
    with_telemetry = serializers.IntegerField()
    signals = serializers.DictField(
        child=InteractionSignalSerializer(), help_text="pasted, away, no_input, uniform_timing"
    )


class StatisticsSerializer(serializers.Serializer[Any]):
    scheme = serializers.CharField()
    benchmark = serializers.CharField()
    interaction = InteractionSerializer()
    contexts = serializers.IntegerField()
    targets = serializers.IntegerField()
    candidates = serializers.IntegerField()
    labels = serializers.IntegerField(help_text="valid labels, abstain included")
    unscored_candidates = serializers.IntegerField(help_text="candidates without a valid label")
    per_target = PerTargetSerializer(help_text="means over all targets")
    per_target_nonempty = PerTargetNonemptySerializer(help_text="means over the targets having the category")
    abstain_share = serializers.FloatField(allow_null=True)
    accept_share = serializers.FloatField(allow_null=True)
    thresholds = serializers.DictField(child=serializers.FloatField())
    by_pos = serializers.DictField(child=PosGroupSerializer())
    by_source = serializers.DictField(
        child=SourceGroupSerializer(),
        help_text="coinco-only, both, thesaurus-only (roget counts), crowd-only (proposed here), other",
    )
    reannotation_origin = serializers.CharField(allow_null=True)


class ProlexPerTargetSerializer(serializers.Serializer[Any]):
    acceptable = serializers.FloatField(allow_null=True)
    unacceptable = serializers.FloatField(allow_null=True)
    proficiency_acceptable = serializers.FloatField(allow_null=True)


class ProlexAgreementSerializer(serializers.Serializer[Any]):
    available = serializers.BooleanField(help_text="false when no substitute has a 1 or -1 from two annotators")
    note = serializers.CharField(help_text='"not available: ..." when not available')
    kappa = serializers.FloatField(allow_null=True, help_text="Cohen's kappa on the doubly judged substitutes")
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()
    items = serializers.IntegerField(help_text="substitutes with a 1 or -1 from two annotators")


class ProlexStatisticsSerializer(serializers.Serializer[Any]):
    scheme = serializers.CharField()
    benchmark = serializers.CharField()
    interaction = InteractionSerializer()
    targets = serializers.IntegerField(help_text="(target, sentence) rows")
    contexts = serializers.IntegerField(help_text="distinct sentences, ** marks removed")
    target_words = serializers.IntegerField(help_text="distinct target words as written")
    acceptable = serializers.IntegerField(help_text="entries as listed, duplicates counted")
    unacceptable = serializers.IntegerField()
    proficiency_acceptable = serializers.IntegerField()
    per_target = ProlexPerTargetSerializer(help_text="means per row")
    share_targets_without_acceptable = serializers.FloatField(allow_null=True)
    share_targets_without_proficiency_acceptable = serializers.FloatField(allow_null=True)
    agreement = ProlexAgreementSerializer()


class SwsTypesSerializer(serializers.Serializer[Any]):
    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # Named as the types are: "refine-usage" and "diversify-expression".
        return {name: serializers.IntegerField() for name in ("refine-usage", "diversify-expression")}


class SwsPerTargetSerializer(serializers.Serializer[Any]):
    suggestions = serializers.FloatField(allow_null=True)
    votes = serializers.FloatField(allow_null=True)


class SwsPerSuggestionSerializer(serializers.Serializer[Any]):
    votes = serializers.FloatField(allow_null=True)


class SwsCollectedSerializer(serializers.Serializer[Any]):
    sentences_marked = serializers.IntegerField()
    discarded = serializers.IntegerField(help_text="answers that set the sentence aside")
    merged_targets = serializers.IntegerField()
    voting_index = serializers.FloatField(allow_null=True, help_text="mean share of a sentence's annotators per target")


class SwsAgreementSerializer(serializers.Serializer[Any]):
    available = serializers.BooleanField()
    note = serializers.CharField(help_text='"not available: ..." when not available')
    pa_det = serializers.FloatField(allow_null=True, help_text="mean pairwise Jaccard of target sets")
    pa_sug = serializers.FloatField(allow_null=True, help_text="mean pairwise Jaccard of suggestions on shared targets")
    pairs = serializers.IntegerField()
    shared_targets = serializers.IntegerField()


class SwsStatisticsSerializer(serializers.Serializer[Any]):
    scheme = serializers.CharField()
    benchmark = serializers.CharField()
    interaction = InteractionSerializer()
    contexts = serializers.IntegerField(help_text="sentences")
    targets = serializers.IntegerField(help_text="spans")
    suggestions = serializers.IntegerField()
    votes = serializers.IntegerField()
    types = SwsTypesSerializer()
    multiword_targets = serializers.IntegerField()
    per_target = SwsPerTargetSerializer()
    per_suggestion = SwsPerSuggestionSerializer()
    collected = SwsCollectedSerializer()
    agreement = SwsAgreementSerializer()


# The statistics of each scheme, by scheme name (``analysis.figures``).
STATISTICS_SERIALIZERS: dict[str, type[serializers.Serializer[Any]]] = {
    "swords": StatisticsSerializer,
    "prolex": ProlexStatisticsSerializer,
    "sws": SwsStatisticsSerializer,
}


def _statistics_schemas() -> dict[str, serializers.Serializer[Any] | type[serializers.Serializer[Any]]]:
    return dict(STATISTICS_SERIALIZERS)


class StatisticsQuerySerializer(serializers.Serializer[Any]):
    acceptable = serializers.FloatField(default=0.5, min_value=0.0, max_value=1.0)
    conceivable = serializers.FloatField(default=0.0, min_value=0.0, max_value=1.0)
    reannotation = serializers.CharField(
        required=False, allow_blank=True, help_text="import origin of a re-annotation; empty for none"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            attrs["thresholds"] = ScoreThresholds(acceptable=attrs["acceptable"], conceivable=attrs["conceivable"])
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        return attrs


class AlphaSerializer(serializers.Serializer[Any]):
    alpha = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()
    units = serializers.IntegerField(help_text="candidates with two labels or more")
    labels = serializers.IntegerField()
    resamples = serializers.IntegerField()


class WorkerAgreementSerializer(serializers.Serializer[Any]):
    worker_id = serializers.IntegerField()
    worker = serializers.CharField()
    labels = serializers.IntegerField()
    compared = serializers.IntegerField()
    agreed = serializers.IntegerField()
    ties = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True)
    controls_correct = serializers.IntegerField()
    controls_total = serializers.IntegerField()
    control_accuracy = serializers.FloatField(allow_null=True)


class KappaPairSerializer(serializers.Serializer[Any]):
    worker_a_id = serializers.IntegerField()
    worker_a = serializers.CharField()
    worker_b_id = serializers.IntegerField()
    worker_b = serializers.CharField()
    items = serializers.IntegerField()
    observed = serializers.FloatField(allow_null=True)
    kappa = serializers.FloatField(allow_null=True)


class KappaSummarySerializer(serializers.Serializer[Any]):
    pairs = serializers.IntegerField()
    pairs_with_kappa = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)
    median = serializers.FloatField(allow_null=True)
    weighted_mean = serializers.FloatField(allow_null=True)
    items = serializers.IntegerField()


class KappaSerializer(serializers.Serializer[Any]):
    min_overlap = serializers.IntegerField()
    summary = KappaSummarySerializer()
    pairs = KappaPairSerializer(many=True, required=False)


class RboPointSerializer(serializers.Serializer[Any]):
    k = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)
    std = serializers.FloatField(allow_null=True)


class RboSerializer(serializers.Serializer[Any]):
    reannotation_origin = serializers.CharField()
    candidates = serializers.IntegerField()
    targets = serializers.IntegerField()
    labels = serializers.IntegerField()
    p = serializers.FloatField()
    samples = serializers.IntegerField()
    points = RboPointSerializer(many=True)


class AgreementSerializer(serializers.Serializer[Any]):
    benchmark = serializers.CharField()
    labels = serializers.IntegerField()
    workers = serializers.IntegerField()
    seed = serializers.IntegerField()
    alpha = AlphaSerializer(help_text="accept / reject / abstain as three values")
    alpha_without_abstain = AlphaSerializer(help_text="abstain labels left out")
    collapse_abstain = serializers.BooleanField()
    worker_agreement = WorkerAgreementSerializer(many=True)
    kappa = KappaSerializer()
    rbo = RboSerializer(allow_null=True, help_text="null without a re-annotation")


# Counts compared with numpy's 64-bit integers stay far below their limit.
MAX_COUNT = 2**31 - 1
# More labels per candidate than any collection gathers.
MAX_LABELS = 1000


class AgreementQuerySerializer(serializers.Serializer[Any]):
    resamples = serializers.IntegerField(default=1000, min_value=0, max_value=10000)
    # numpy seeds are non-negative.
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1)
    min_overlap = serializers.IntegerField(default=1, min_value=1, max_value=MAX_COUNT)
    pairs = serializers.BooleanField(default=True, help_text="list every pair of workers")
    reannotation = serializers.CharField(required=False, allow_blank=True)


class AuditQuerySerializer(serializers.Serializer[Any]):
    step2_labels = serializers.IntegerField(required=False, min_value=1, max_value=MAX_LABELS)
    pass_min_accepts = serializers.IntegerField(required=False, min_value=1, max_value=MAX_LABELS)
    min_labels = serializers.IntegerField(required=False, min_value=1, max_value=MAX_LABELS)


class AuditRowSerializer(serializers.Serializer[Any]):
    pass_min_accepts = serializers.IntegerField()
    audited = serializers.IntegerField()
    dropped = serializers.IntegerField()
    kept = serializers.IntegerField()
    dropped_with_accept = serializers.IntegerField()
    dropped_acceptable = serializers.IntegerField()
    dropped_with_accept_unacceptable = serializers.IntegerField()
    acceptable = serializers.IntegerField()
    share_dropped = serializers.FloatField(allow_null=True)
    share_dropped_with_accept = serializers.FloatField(allow_null=True, help_text="of the dropped")
    share_still_unacceptable = serializers.FloatField(allow_null=True, help_text="of the dropped with an accept")
    share_of_acceptable_lost = serializers.FloatField(allow_null=True)


class AuditGridRowSerializer(AuditRowSerializer):
    step2_labels = serializers.IntegerField()


class AuditSerializer(AuditRowSerializer):
    benchmark = serializers.CharField()
    step2_labels = serializers.IntegerField()
    min_labels = serializers.IntegerField()
    grid = AuditGridRowSerializer(many=True)


class ReannotationInputSerializer(serializers.Serializer[Any]):
    origin = serializers.CharField(allow_null=True, help_text="import origin of the re-annotation; null clears")


class ReannotationSerializer(serializers.Serializer[Any]):
    benchmark = serializers.CharField()
    origin = serializers.CharField(allow_null=True)


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


class EvaluationInputSerializer(serializers.Serializer[Any]):
    result = serializers.FileField(
        help_text='the SWORDS library\'s result JSON, gzipped or not: {"substitutes_lemmatized": bool, '
        '"substitutes": {target id: [[substitute, score], ...]}}',
        validators=[validate_upload_size],
    )
    system = serializers.CharField(
        required=False, max_length=100, help_text="keep the figures on the leaderboard under this name"
    )
    per_target = serializers.BooleanField(default=False, help_text="add each target's figures")
    split = serializers.CharField(required=False, max_length=50, help_text="only the targets of this split")


class SplitInputSerializer(serializers.Serializer[Any]):
    shares = serializers.DictField(
        child=serializers.FloatField(min_value=0),
        required=False,
        help_text='a seeded rule: split name -> share, e.g. {"dev": 0.5, "test": 0.5}',
    )
    seed = serializers.IntegerField(
        required=False, min_value=0, max_value=2**63 - 1, help_text="seed of the rule (default: the benchmark's)"
    )
    list = serializers.FileField(
        required=False,
        help_text="or a CSV list with the columns target (SWORDS id, external id or id) and split",
        validators=[validate_upload_size],
    )


class LeaderboardQuerySerializer(serializers.Serializer[Any]):
    split = serializers.CharField(required=False, max_length=50, help_text="the leaderboard of this split")


class FiguresSerializer(serializers.Serializer[Any]):
    """Percentages as the SWORDS library gives them (docs/evaluation.md)."""

    f10_lenient = serializers.FloatField()
    fc10_lenient = serializers.FloatField()
    f10_strict = serializers.FloatField()
    fc10_strict = serializers.FloatField()
    p10_lenient = serializers.FloatField()
    r10_lenient = serializers.FloatField()
    pc10_lenient = serializers.FloatField()
    rc10_lenient = serializers.FloatField()
    p10_strict = serializers.FloatField()
    r10_strict = serializers.FloatField()
    pc10_strict = serializers.FloatField()
    rc10_strict = serializers.FloatField()
    gap = serializers.FloatField()
    targets_evaluated = serializers.IntegerField()
    targets_missing = serializers.IntegerField()


class EvaluationSerializer(FiguresSerializer):
    per_target = serializers.DictField(child=serializers.DictField(), required=False)


class LeaderboardRowSerializer(FiguresSerializer):
    system = serializers.CharField()
    oracle = serializers.BooleanField(help_text="the benchmark judged by itself")


# --- views -----------------------------------------------------------------------------------


def _query(serializer_class: type[serializers.Serializer[Any]], request: Request) -> dict[str, Any]:
    given = serializer_class(data=request.query_params)
    given.is_valid(raise_exception=True)
    return dict(given.validated_data)


def _reannotation(query: dict[str, Any]) -> str | None:
    return query.get("reannotation")


class StatisticsView(APIView):
    """A benchmark's statistics as its scheme reports them: SWORDS Table 2 and Fig. 1 (DESIGN §7), or
    the figures of ProLex or Smart Word Suggestions; ``scheme`` says which."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[StatisticsQuerySerializer],
        responses=PolymorphicProxySerializer(
            component_name="SchemeStatistics",
            serializers=_statistics_schemas,
            resource_type_field_name="scheme",
        ),
    )
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        query = _query(StatisticsQuerySerializer, request)
        result = benchmark_figures(
            benchmark=benchmark,
            options=StatisticsOptions(thresholds=query["thresholds"], reannotation=_reannotation(query)),
        )
        return Response(STATISTICS_SERIALIZERS[benchmark.scheme](result).data)


class AgreementView(APIView):
    """Krippendorff's alpha, leave-one-out agreement per worker, Cohen's kappa per pair, RBO against k."""

    permission_classes = [IsResearcher]

    @extend_schema(parameters=[AgreementQuerySerializer], responses=AgreementSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        query = _query(AgreementQuerySerializer, request)
        result = services.benchmark_agreement(
            benchmark=benchmark,
            resamples=query["resamples"],
            seed=query.get("seed"),
            min_overlap=query["min_overlap"],
            include_pairs=query["pairs"],
            data=services.benchmark_data(benchmark=benchmark, reannotation_origin=_reannotation(query)),
        )
        return Response(AgreementSerializer(result).data)


class FilterAuditView(APIView):
    """The filter audit (SWORDS §4.4), with a grid of other step-2 settings."""

    permission_classes = [IsResearcher]

    @extend_schema(parameters=[AuditQuerySerializer], responses=AuditSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        query = _query(AuditQuerySerializer, request)
        result = services.benchmark_filter_audit(benchmark=benchmark, **query)
        return Response(AuditSerializer(result).data)


class ReannotationView(APIView):
    """Mark an import origin as a re-annotation of the benchmark, or clear the mark."""

    permission_classes = [IsResearcher]

    @extend_schema(request=ReannotationInputSerializer, responses={200: ReannotationSerializer})
    def put(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        given = ReannotationInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            services.benchmark_reannotation_set(benchmark=benchmark, origin=given.validated_data["origin"])
        except ValueError as exc:
            raise serializers.ValidationError({"origin": str(exc)}) from exc
        origin = (benchmark.extra.get("analysis") or {}).get("reannotation_origin")
        return Response(ReannotationSerializer({"benchmark": benchmark.name, "origin": origin}).data)


class ExportJobListCreateView(APIView):
    """A benchmark's export jobs, newest first; POST queues a new one (written by a Celery task)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=ExportJobSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        jobs = ExportJob.objects.filter(benchmark=benchmark).select_related("benchmark")[:50]
        return Response(ExportJobSerializer(jobs, many=True, context={"request": request}).data)

    @extend_schema(request=ExportInputSerializer, responses={201: ExportJobSerializer})
    def post(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
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
        job = get_object_or_404(ExportJob.objects.select_related("benchmark"), pk=job_id)
        return Response(ExportJobSerializer(job, context={"request": request}).data)


class ExportJobRestartView(APIView):
    """Queue a failed export job again (409 unless it failed)."""

    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses={200: ExportJobSerializer, 409: OpenApiTypes.OBJECT})
    def post(self, request: Request, job_id: int) -> Response:
        job = get_object_or_404(ExportJob.objects.select_related("benchmark"), pk=job_id)
        if not services.export_job_restart(job=job):
            return Response({"detail": f"Export {job.pk} is {job.status}: only a failed one restarts."}, status=409)
        return Response(ExportJobSerializer(job, context={"request": request}).data)


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

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY})
    def get(self, request: Request, job_id: int) -> HttpResponseBase:
        return export_job_download_response(get_object_or_404(ExportJob, pk=job_id))


CONTENT_TYPES = {".json": "application/json", ".csv": "text/csv"}


def direct_export_allowed(*, benchmark: Benchmark, format: str) -> bool:
    """Statistics and the candidate table always stream from a request; the large formats up to a size;
    the dataset folder never (an export job zips it)."""
    if format in (exports.STATS, exports.CANDIDATES_CSV):
        return True
    if format == exports.DATASET:
        return False
    return benchmark_valid_labels(benchmark=benchmark).count() <= settings.ANALYSIS_DIRECT_EXPORT_MAX_LABELS


def direct_export_response(*, benchmark: Benchmark, format: str) -> HttpResponseBase:
    """A streamed download of one export format (memory bounded by a chunk of rows)."""
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
        content_type=f"{CONTENT_TYPES[chosen.suffix]}; charset=utf-8",
    )
    filename = services.export_filename(benchmark=benchmark, format=format, compress=False)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class DirectExportView(APIView):
    """Stream an export straight from the request (409 for a large benchmark: create a job)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        # Not called "format": DRF reads a "format" URL argument as the renderer's suffix.
        parameters=[OpenApiParameter("export_format", str, OpenApiParameter.PATH, enum=exports.export_format_names())],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, 409: OpenApiTypes.STR},
    )
    def get(self, request: Request, name: str, export_format: str) -> HttpResponseBase:
        benchmark = get_object_or_404(Benchmark, name=name)
        return direct_export_response(benchmark=benchmark, format=export_format)


class SentenceTargetSerializer(serializers.Serializer[Any]):
    span = serializers.ListField(child=serializers.IntegerField(), help_text="[start, end) in tokens")
    text = serializers.CharField()
    votes = serializers.ListField(
        child=serializers.ListField(child=serializers.JSONField()), help_text="[suggestion, votes], most voted first"
    )
    type = serializers.CharField(help_text="refine-usage or diversify-expression")
    origin = serializers.CharField(help_text="released (imported) or collected (merged here)")
    annotators = serializers.IntegerField(allow_null=True)
    voting_index = serializers.FloatField(allow_null=True)


class SentenceSerializer(serializers.Serializer[Any]):
    id = serializers.CharField(source="entry.id")
    sentence = serializers.CharField(source="entry.sentence")
    tokens = serializers.ListField(child=serializers.CharField(), source="entry.tokens")
    annotators = serializers.IntegerField()
    discarded = serializers.ListField(child=serializers.CharField(), help_text="reasons given for setting it aside")
    targets = SentenceTargetSerializer(many=True)


class SwsSuggestionsView(APIView):
    """A Smart Word Suggestions benchmark's sentences with their targets, released and merged here."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=SentenceSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name, scheme=sws.NAME)
        sentences = [
            {
                "entry": sentence.entry,
                "annotators": sentence.annotators,
                "discarded": sentence.discarded,
                "targets": [vars(target) for target in sentence.targets()],
            }
            for sentence in sws.sws_sentences(benchmark=benchmark)
        ]
        return Response(SentenceSerializer(sentences, many=True).data)


class TargetProposalsSerializer(serializers.Serializer[Any]):
    target_id = serializers.IntegerField()
    word = serializers.CharField()
    pos = serializers.CharField()
    proposers = serializers.IntegerField(source="proposals.proposers")
    none = serializers.IntegerField(source="proposals.none", help_text="annotators to whom none came to mind")
    votes = serializers.DictField(
        child=serializers.IntegerField(), source="proposals.votes", help_text="lemma -> annotators who proposed it"
    )


class ProposalsView(APIView):
    """What annotators proposed in a SWORDS benchmark's generation task (step 1), by target."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=TargetProposalsSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        return Response(TargetProposalsSerializer(generation.target_proposals(benchmark=benchmark), many=True).data)


class SplitListCreateView(APIView):
    """Targets per split of the benchmark; POST splits it anew (a seeded rule or a CSV list)."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        return Response(services.benchmark_splits(benchmark=benchmark))

    @extend_schema(request=SplitInputSerializer, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        given = SplitInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        if ("shares" in data) == ("list" in data):
            raise serializers.ValidationError({"shares": ["give either shares or a list"]})
        try:
            if "list" in data:
                counts = services.benchmark_split_import(benchmark=benchmark, source=data["list"])
            else:
                seed = data.get("seed", benchmark.seed)
                counts = services.benchmark_split_seeded(
                    benchmark=benchmark, shares=list(data["shares"].items()), seed=seed
                )
        except services.SplitError as exc:
            raise serializers.ValidationError({"split": [str(exc)]}) from exc
        return Response(counts)


class EvaluationListCreateView(APIView):
    """The benchmark's leaderboard (the oracle first); POST evaluates a result file and, given a
    system name, keeps its figures on the leaderboard."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(parameters=[LeaderboardQuerySerializer], responses=LeaderboardRowSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        split = _query(LeaderboardQuerySerializer, request).get("split")
        try:
            services.split_check(benchmark=benchmark, split=split)
        except services.SplitError as exc:
            raise serializers.ValidationError({"split": [str(exc)]}) from exc
        board = services.benchmark_leaderboard(benchmark=benchmark, split=split)
        return Response(LeaderboardRowSerializer(board, many=True).data)

    @extend_schema(request={"multipart/form-data": EvaluationInputSerializer}, responses=EvaluationSerializer)
    def post(self, request: Request, name: str) -> Response:
        benchmark = get_object_or_404(Benchmark, name=name)
        given = EvaluationInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        split = given.validated_data.get("split")
        try:
            services.split_check(benchmark=benchmark, split=split)
            result = services.result_load(source=given.validated_data["result"])
            figures = services.system_evaluate(
                benchmark=benchmark, result=result, per_target=given.validated_data["per_target"], split=split
            )
            if given.validated_data.get("system"):
                services.system_evaluation_save(
                    benchmark=benchmark,
                    system=given.validated_data["system"],
                    figures=figures,
                    split=split,
                    created_by=request.user,  # type: ignore[arg-type]
                )
        except (ResultError, ValueError) as exc:
            raise serializers.ValidationError({"result": [str(exc)]}) from exc
        return Response(EvaluationSerializer(figures.as_dict()).data)


urlpatterns = [
    path("benchmarks/<slug:name>/statistics", StatisticsView.as_view(), name="api-benchmark-statistics"),
    path("benchmarks/<slug:name>/agreement", AgreementView.as_view(), name="api-benchmark-agreement"),
    path("benchmarks/<slug:name>/filter-audit", FilterAuditView.as_view(), name="api-benchmark-filter-audit"),
    path("benchmarks/<slug:name>/reannotation", ReannotationView.as_view(), name="api-benchmark-reannotation"),
    path("benchmarks/<slug:name>/exports", ExportJobListCreateView.as_view(), name="api-benchmark-exports"),
    path("benchmarks/<slug:name>/export/<str:export_format>", DirectExportView.as_view(), name="api-benchmark-export"),
    path("benchmarks/<slug:name>/suggestions", SwsSuggestionsView.as_view(), name="api-benchmark-suggestions"),
    path("benchmarks/<slug:name>/proposals", ProposalsView.as_view(), name="api-benchmark-proposals"),
    path("benchmarks/<slug:name>/splits", SplitListCreateView.as_view(), name="api-benchmark-splits"),
    path("benchmarks/<slug:name>/evaluations", EvaluationListCreateView.as_view(), name="api-benchmark-evaluations"),
    path("exports/<int:job_id>", ExportJobDetailView.as_view(), name="api-export-detail"),
    path("exports/<int:job_id>/download", ExportJobDownloadView.as_view(), name="api-export-download"),
    path("exports/<int:job_id>/restart", ExportJobRestartView.as_view(), name="api-export-restart"),
]
