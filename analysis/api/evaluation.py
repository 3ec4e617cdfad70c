"""REST API of splits and of systems evaluated against a benchmark, with its leaderboard
(researchers only)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis import services
from analysis.api.common import query as read_query
from analysis.evaluation import ResultError
from analysis.models import UnscoredJudgement
from annotation.access import Role, benchmark_for
from annotation.importers import validate_upload_size
from annotation.models import Benchmark
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher
from crowds.interface import backend_choices, default_backend_name


class EvaluationInputSerializer(serializers.Serializer[Any]):
    result = serializers.FileField(
        help_text="the system's result file, gzipped or not, in the result format of the evaluation the "
        "benchmark's scheme declares (docs/evaluation.md)",
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
        help_text="or a CSV list with the columns target (its swords library id, external id or id) and split",
        validators=[validate_upload_size],
    )


class LeaderboardQuerySerializer(serializers.Serializer[Any]):
    split = serializers.CharField(required=False, max_length=50, help_text="the leaderboard of this split")


class LeaderboardRowSerializer(serializers.Serializer[Any]):
    """A leaderboard row: the system's name, whether it is the oracle, and its figures by their JSON names."""

    system = serializers.CharField()
    oracle = serializers.BooleanField(help_text="the benchmark judged by itself")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return dict(instance)


class SplitListCreateView(APIView):
    """Targets per split of the benchmark; POST splits it anew (a seeded rule or a CSV list)."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return Response(services.benchmark_splits(benchmark=benchmark))

    @extend_schema(request=SplitInputSerializer, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.EDITOR)
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


def _evaluated(benchmark: Benchmark) -> Benchmark:
    """The benchmark, if its scheme declares the evaluation; else 404 saying why."""
    try:
        services.evaluation_check(benchmark=benchmark)
    except services.EvaluationUnavailable as exc:
        raise NotFound(str(exc)) from exc
    return benchmark


class EvaluationListCreateView(PaginatedList, APIView):
    """The benchmark's leaderboard (the oracle first); POST evaluates a result file and, given a
    system name, keeps its figures on the leaderboard."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(parameters=[LeaderboardQuerySerializer], responses=LeaderboardRowSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = _evaluated(benchmark_for(request.user, name, Role.VIEWER))
        split = read_query(LeaderboardQuerySerializer, request).get("split")
        try:
            services.split_check(benchmark=benchmark, split=split)
        except services.SplitError as exc:
            raise serializers.ValidationError({"split": [str(exc)]}) from exc
        board = services.benchmark_leaderboard(benchmark=benchmark, split=split)
        return self.paginated(request, board, LeaderboardRowSerializer)

    @extend_schema(
        request={"multipart/form-data": EvaluationInputSerializer},
        responses={200: OpenApiTypes.OBJECT},
        description="The figures by the JSON names of the scheme's evaluation (docs/evaluation.md).",
    )
    def post(self, request: Request, name: str) -> Response:
        benchmark = _evaluated(benchmark_for(request.user, name, Role.EDITOR))
        given = EvaluationInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        split = given.validated_data.get("split")
        try:
            services.split_check(benchmark=benchmark, split=split)
            system = given.validated_data.get("system")
            # A saved system keeps its result file, to be scored again on the grown benchmark.
            result = services.result_load(benchmark=benchmark, source=given.validated_data["result"], keep=bool(system))
            figures = services.system_evaluate(
                benchmark=benchmark, result=result, per_target=given.validated_data["per_target"], split=split
            )
            if system:
                services.system_evaluation_save(
                    benchmark=benchmark,
                    system=system,
                    figures=figures,
                    split=split,
                    created_by=request.user,  # type: ignore[arg-type]
                    result=result,
                )
        except (ResultError, ValueError) as exc:
            raise serializers.ValidationError({"result": [str(exc)]}) from exc
        return Response(figures)


class JudgementInputSerializer(serializers.Serializer[Any]):
    result = serializers.FileField(
        help_text="the system's result file, gzipped or not, in the result format of the benchmark's evaluation",
        validators=[validate_upload_size],
    )
    system = serializers.RegexField(
        r"\S",
        max_length=100,
        help_text="the system's name: it is saved on the leaderboard, its substitutes added as system:<name>",
    )
    top_k = serializers.IntegerField(
        default=10,
        min_value=1,
        max_value=settings.EVALUATION_JUDGE_MAX_TOP_K,
        help_text="how many of each target's substitutes are looked at (EVALUATION_JUDGE_MAX_TOP_K at most)",
    )
    backend = serializers.ChoiceField(choices=backend_choices(), default=default_backend_name, help_text="the crowd")
    split = serializers.CharField(required=False, max_length=50, help_text="only the targets of this split")
    dry_run = serializers.BooleanField(default=False, help_text="only say what would be judged and its cost")


class JudgementSerializer(serializers.Serializer[Any]):
    """A complete evaluation: what is judged, its cost, how far it is, and its figures once done."""

    id = serializers.IntegerField(allow_null=True)
    system = serializers.CharField(source="evaluation.system")
    split = serializers.CharField(source="evaluation.split")
    status = serializers.CharField()
    top_k = serializers.IntegerField()
    backend = serializers.CharField()
    substitutes = serializers.IntegerField(source="substitute_count")
    targets = serializers.SerializerMethodField()
    cost = serializers.DictField(help_text="the first step's batch priced by its crowd (crowds.services.BatchPreview)")
    batch = serializers.IntegerField(source="batch_id", allow_null=True)
    candidates_judged = serializers.SerializerMethodField()
    version_before = serializers.DictField()
    version_after = serializers.DictField()
    report = serializers.DictField(
        allow_null=True,
        help_text='{"figures": {setting: {figure: value}}, "intervals": {setting: {figure: [low, high]}}, ...} '
        "for lenient, strict and complete (docs/evaluation.md); null until every substitute is judged",
    )

    def get_targets(self, judgement: UnscoredJudgement) -> int:
        return len(judgement.substitutes)

    def get_candidates_judged(self, judgement: UnscoredJudgement) -> int:
        return services.judgement_progress(judgement=judgement).settled if judgement.pk else 0


class RescoreInputSerializer(serializers.Serializer[Any]):
    system = serializers.RegexField(r"\S", max_length=100, help_text="a system saved on the leaderboard")
    split = serializers.CharField(required=False, max_length=50, help_text="its split, when it was saved for one")


class RescoreOutputSerializer(serializers.Serializer[Any]):
    system = serializers.CharField()
    version = serializers.DictField(help_text="the benchmark version it is now scored on")
    figures = serializers.DictField(help_text="its figures by the JSON names of the scheme's evaluation")
    history = serializers.ListField(child=serializers.DictField(), help_text="earlier scores, oldest first")


def _judged(benchmark: Benchmark) -> Benchmark:
    """The benchmark, if its scheme's evaluation judges unscored substitutes; else 404 saying why."""
    try:
        services.judging_check(benchmark=_evaluated(benchmark))
    except services.JudgingError as exc:
        raise NotFound(str(exc)) from exc
    return benchmark


class EvaluationJudgementListCreateView(PaginatedList, APIView):
    """The benchmark's complete evaluations, newest first; POST evaluates a result file, saves the
    system and sends its unscored top-k substitutes to be judged at once (``dry_run``: only their
    count and cost)."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(responses=JudgementSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = _judged(benchmark_for(request.user, name, Role.VIEWER))
        return self.paginated(request, services.judgements_refresh(benchmark=benchmark), JudgementSerializer)

    @extend_schema(
        request={"multipart/form-data": JudgementInputSerializer},
        responses={201: JudgementSerializer, 200: JudgementSerializer},
        description="201 with the started judgement (its batch), or 200 with the unsaved proposal of a dry run.",
    )
    def post(self, request: Request, name: str) -> Response:
        benchmark = _judged(benchmark_for(request.user, name, Role.EDITOR))
        given = JudgementInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        split = data.get("split")
        try:
            services.split_check(benchmark=benchmark, split=split)
            result = services.result_load(benchmark=benchmark, source=data["result"], keep=True)
            figures = services.system_evaluate(benchmark=benchmark, result=result, split=split)
            judgement = services.system_judge_unscored(
                benchmark=benchmark,
                system=data["system"],
                result=result,
                figures=figures,
                split=split,
                top_k=data["top_k"],
                backend=data["backend"],
                by=request.user,  # type: ignore[arg-type]
                dry_run=data["dry_run"],
            )
        except (ResultError, ValueError) as exc:
            raise serializers.ValidationError({"result": [str(exc)]}) from exc
        return Response(JudgementSerializer(judgement).data, status=200 if data["dry_run"] else 201)


class EvaluationRescoreView(APIView):
    """Score a saved system again, from its kept result file, on the benchmark as it stands now."""

    permission_classes = [IsResearcher]
    parser_classes = [JSONParser]

    @extend_schema(request=RescoreInputSerializer, responses=RescoreOutputSerializer)
    def post(self, request: Request, name: str) -> Response:
        benchmark = _evaluated(benchmark_for(request.user, name, Role.EDITOR))
        given = RescoreInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            evaluation = services.evaluation_find(
                benchmark=benchmark, system=given.validated_data["system"], split=given.validated_data.get("split")
            )
            rescored = services.system_evaluation_rescore(evaluation=evaluation, by=request.user)
        except (ResultError, ValueError) as exc:
            raise serializers.ValidationError({"system": [str(exc)]}) from exc
        return Response(RescoreOutputSerializer(rescored).data)
