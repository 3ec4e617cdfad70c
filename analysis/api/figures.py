"""REST API of what a benchmark reports (researchers only): statistics, agreement, the filter
audit, the re-annotation mark, and the pages of the other schemes (merged suggestions, proposals)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis import services
from analysis.api.common import query as read_query
from analysis.figures import StatisticsOptions, benchmark_figures
from annotation.access import Role, benchmark_for
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher
from schemes.generation import figures as generation
from schemes.scores import ScoreThresholds
from schemes.sws import figures as sws

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


class ReannotationInputSerializer(serializers.Serializer[Any]):
    origin = serializers.CharField(allow_null=True, help_text="import origin of the re-annotation; null clears")


class ReannotationSerializer(serializers.Serializer[Any]):
    benchmark = serializers.CharField()
    origin = serializers.CharField(allow_null=True)


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
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        query = read_query(StatisticsQuerySerializer, request)
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
    """The filter audit (SWORDS §4.4), with a grid of other step-2 settings."""

    permission_classes = [IsResearcher]

    @extend_schema(parameters=[AuditQuerySerializer], responses=AuditSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        query = read_query(AuditQuerySerializer, request)
        result = services.benchmark_filter_audit(benchmark=benchmark, **query)
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


class SwsSuggestionsView(PaginatedList, APIView):
    """A Smart Word Suggestions benchmark's sentences with their targets, released and merged here."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=SentenceSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER, scheme=sws.NAME)
        sentences = [
            {
                "entry": sentence.entry,
                "annotators": sentence.annotators,
                "discarded": sentence.discarded,
                "targets": [vars(target) for target in sentence.targets()],
            }
            for sentence in sws.sws_sentences(benchmark=benchmark)
        ]
        return self.paginated(request, sentences, SentenceSerializer)


class TargetProposalsSerializer(serializers.Serializer[Any]):
    target_id = serializers.IntegerField()
    word = serializers.CharField()
    pos = serializers.CharField()
    proposers = serializers.IntegerField(source="proposals.proposers")
    none = serializers.IntegerField(source="proposals.none", help_text="annotators to whom none came to mind")
    votes = serializers.DictField(
        child=serializers.IntegerField(), source="proposals.votes", help_text="lemma -> annotators who proposed it"
    )


class ProposalsView(PaginatedList, APIView):
    """What annotators proposed in a SWORDS benchmark's generation task (step 1), by target."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=TargetProposalsSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return self.paginated(request, generation.target_proposals(benchmark=benchmark), TargetProposalsSerializer)
