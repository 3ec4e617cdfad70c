"""REST API of what a benchmark reports (researchers only): statistics, agreement, the filter
audit and the re-annotation mark. A scheme's own pages register their API with its figures
(``analysis.figures.register_pages``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis import services
from analysis.aggregation import METHODS
from analysis.api.common import query as read_query
from analysis.figures import StatisticsOptions, benchmark_figures, registered_figures, scheme_figures
from annotation.access import Role, benchmark_for
from crowdlex.permissions import IsResearcher
from schemes.scores import ScoreThresholds

# --- serializers -----------------------------------------------------------------------------


def _statistics_schemas() -> dict[str, serializers.Serializer[Any] | type[serializers.Serializer[Any]]]:
    """Each scheme's statistics serializer (``SchemeFigures.serializer``), by scheme name."""
    return {figures.scheme: figures.serializer for figures in registered_figures() if figures.serializer is not None}


class StatisticsQuerySerializer(serializers.Serializer[Any]):
    acceptable = serializers.FloatField(default=0.5, min_value=0.0, max_value=1.0)
    conceivable = serializers.FloatField(default=0.0, min_value=0.0, max_value=1.0)
    reannotation = serializers.CharField(
        required=False, allow_blank=True, help_text="import origin of a re-annotation; empty for none"
    )
    aggregation = serializers.ChoiceField(
        choices=list(METHODS), required=False, help_text="sum up this worker-aware model's posteriors beside the score"
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


class FilteredWorkerAgreementSerializer(serializers.Serializer[Any]):
    worker_id = serializers.IntegerField()
    worker = serializers.CharField()
    labels = serializers.IntegerField(help_text="labels of the worker's filtered assignments")
    compared = serializers.IntegerField(help_text="of which on candidates whose valid labels have a unique majority")
    agreed = serializers.IntegerField()
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
    filtered_worker_agreement = FilteredWorkerAgreementSerializer(
        many=True, help_text="workers with filtered work: those labels against the valid labels' majority"
    )
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


class SourceYieldRowSerializer(serializers.Serializer[Any]):
    # "source" is also a DRF field's attribute, which the stubs type; the metaclass takes this one away.
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="a source: coinco, thesaurus, wordnet, llm:<model>, system:<name>"
    )
    candidates = serializers.IntegerField(help_text="candidates it proposed (excluded ones left out)")
    only_this_source = serializers.IntegerField(help_text="of which no other source proposed")
    judged = serializers.IntegerField(help_text="of which with at least one valid label")
    labels = serializers.IntegerField(help_text="valid labels of its candidates")
    acceptable = serializers.IntegerField()
    conceivable = serializers.IntegerField()
    share_acceptable = serializers.FloatField(allow_null=True, help_text="acceptable over judged")
    share_conceivable = serializers.FloatField(allow_null=True, help_text="conceivable over judged")
    cost = serializers.CharField(allow_null=True, help_text="labels x price per label, in dollars; null: no price")
    cost_per_acceptable = serializers.CharField(allow_null=True, help_text="null without a price or an acceptable one")


class SourceYieldSerializer(serializers.Serializer[Any]):
    benchmark = serializers.CharField()
    acceptable = serializers.CharField(help_text="what the scheme calls acceptable")
    conceivable = serializers.CharField(help_text="what the scheme calls conceivable")
    price_per_label = serializers.CharField(
        allow_null=True, help_text="rewards paid for collected work over its labels, in dollars; null: no price"
    )
    sources = SourceYieldRowSerializer(many=True)


class SourceYieldView(APIView):
    """Which candidate source pays off (docs/design.md §14): per source, candidates, labels, the share
    the scheme calls acceptable and conceivable, and the cost per acceptable candidate; 404 for a
    scheme whose candidates are not judged one by one."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=SourceYieldSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        result = services.benchmark_source_yield(benchmark=benchmark)
        if result is None:
            raise NotFound(f"{benchmark.name}'s scheme does not judge its candidates one by one")
        return Response(SourceYieldSerializer({"benchmark": benchmark.name, **result}).data)


class ReannotationInputSerializer(serializers.Serializer[Any]):
    origin = serializers.CharField(allow_null=True, help_text="import origin of the re-annotation; null clears")


class ReannotationSerializer(serializers.Serializer[Any]):
    benchmark = serializers.CharField()
    origin = serializers.CharField(allow_null=True)


def _reannotation(query: dict[str, Any]) -> str | None:
    return query.get("reannotation")


class StatisticsView(APIView):
    """A benchmark's statistics as its scheme reports them (``SchemeFigures.statistics``, shaped by its
    ``serializer``; docs/design.md §7 for schemes that judge candidates); ``scheme`` says which."""

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
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        query = read_query(StatisticsQuerySerializer, request)
        result = benchmark_figures(
            benchmark=benchmark,
            options=StatisticsOptions(
                thresholds=query["thresholds"], reannotation=_reannotation(query), aggregation=query.get("aggregation")
            ),
        )
        serializer = scheme_figures(benchmark).serializer
        return Response(result if serializer is None else serializer(result).data)


class AgreementView(APIView):
    """Krippendorff's alpha, leave-one-out agreement per worker, Cohen's kappa per pair, RBO against k."""

    permission_classes = [IsResearcher]

    @extend_schema(parameters=[AgreementQuerySerializer], responses=AgreementSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        query = read_query(AgreementQuerySerializer, request)
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
    """The filter audit (SWORDS §4.4), with a grid of other step-2 settings; 404 for a benchmark
    whose scheme has no reduce step to audit."""

    permission_classes = [IsResearcher]

    @extend_schema(parameters=[AuditQuerySerializer], responses=AuditSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        query = read_query(AuditQuerySerializer, request)
        try:
            result = services.benchmark_filter_audit(benchmark=benchmark, **query)
        except services.AuditUnavailable as exc:
            raise NotFound(str(exc)) from exc
        return Response(AuditSerializer(result).data)


class ReannotationView(APIView):
    """Mark an import origin as a re-annotation of the benchmark, or clear the mark."""

    permission_classes = [IsResearcher]

    @extend_schema(request=ReannotationInputSerializer, responses={200: ReannotationSerializer})
    def put(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.EDITOR)
        given = ReannotationInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            services.benchmark_reannotation_set(benchmark=benchmark, origin=given.validated_data["origin"])
        except ValueError as exc:
            raise serializers.ValidationError({"origin": str(exc)}) from exc
        origin = (benchmark.extra.get("analysis") or {}).get("reannotation_origin")
        return Response(ReannotationSerializer({"benchmark": benchmark.name, "origin": origin}).data)
