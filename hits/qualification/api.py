"""REST API of the qualification test: annotators take it (``work`` tag), researchers build it and
read its results (``qualification`` tag). The same services as the pages and the command."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, benchmark_for
from annotation.importers.errors import ImportFailed
from annotation.models import Benchmark
from annotation.services import worker_for_user
from crowdlex.permissions import IsAnnotator, IsResearcher
from crowdlex.throttling import SubmitThrottle
from hits.qualification import selectors
from hits.qualification.gold import (
    MAX_GOLD_ITEMS,
    ClearScores,
    GoldItem,
    expectation_error,
    gold_items_from_benchmark,
)
from hits.qualification.models import QualificationAttempt, QualificationItem, QualificationTest
from hits.qualification.services import (
    GoldScheme,
    QualificationRefused,
    gold_scheme,
    no_test_message,
    offered_gold_scheme,
    qualification_attempt_start,
    qualification_attempt_submit,
    qualification_build,
)
from schemes.base import AnswersInvalid, QualificationGold

# --- annotators ------------------------------------------------------------------------------


class GoldItemShownOut(serializers.Serializer):
    """An item to judge; what it expects is never sent."""

    id = serializers.IntegerField()
    context_text = serializers.CharField()
    word = serializers.CharField()
    offset = serializers.IntegerField(help_text="character offset of the word in the context")
    text = serializers.CharField(help_text="the candidate to judge")


class AttemptOut(serializers.Serializer):
    benchmark = serializers.CharField()
    pass_mark = serializers.FloatField()
    started_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    passed = serializers.BooleanField(allow_null=True)
    correct = serializers.IntegerField(allow_null=True, help_text="answers as expected, once submitted")
    total = serializers.IntegerField(allow_null=True)
    choices = serializers.ListField(child=serializers.CharField(), help_text="the answers each item takes")
    items = GoldItemShownOut(many=True)


class AttemptSubmitIn(serializers.Serializer):
    answers = serializers.DictField(
        child=serializers.JSONField(), help_text="every item shown, item id -> one of the choices"
    )


class AttemptErrorOut(serializers.Serializer):
    detail = serializers.CharField()
    missing = serializers.ListField(child=serializers.IntegerField(), required=False)
    unknown = serializers.ListField(child=serializers.CharField(), required=False)
    invalid = serializers.ListField(child=serializers.IntegerField(), required=False)


def _attempt_out(attempt: QualificationAttempt) -> dict[str, Any]:
    items = QualificationItem.objects.in_bulk(attempt.items)
    done = attempt.submitted_at is not None
    scheme = gold_scheme(attempt.test.benchmark).scheme
    return AttemptOut(
        {
            "benchmark": attempt.test.benchmark.name,
            "pass_mark": attempt.test.pass_mark,
            "started_at": attempt.started_at,
            "submitted_at": attempt.submitted_at,
            "passed": attempt.passed,
            "correct": attempt.correct if done else None,
            "total": attempt.total if done else None,
            "choices": [choice.value for choice in scheme.page.choices],
            "items": [
                {
                    "id": pk,
                    "context_text": items[pk].context,
                    "word": items[pk].word,
                    "offset": items[pk].offset,
                    "text": items[pk].candidate,
                }
                for pk in attempt.items
                if pk in items
            ],
        }
    ).data


def _offered(benchmark: Benchmark) -> GoldScheme:
    """The scheme's test of ``benchmark``; 404 saying so where its scheme offers none."""
    found = offered_gold_scheme(benchmark)
    if found is None:
        raise NotFound(no_test_message(benchmark))
    return found


def _test_of(benchmark: Benchmark) -> QualificationTest:
    _offered(benchmark)
    test = QualificationTest.objects.select_related("benchmark").filter(benchmark=benchmark).first()
    if test is None:
        raise NotFound("This benchmark has no qualification test.")
    return test


def _researchers_test(request: Request, name: str, need: Role) -> QualificationTest:
    """The benchmark's test for a researcher with the role ``need`` in it (404 / 403 otherwise)."""
    return _test_of(benchmark_for(request.user, name, need))


def _attempt(request: Request, name: str) -> QualificationAttempt:
    benchmark = selectors.benchmark_to_take(user=request.user, name=name)
    if benchmark is None:
        raise NotFound("No such benchmark.")
    test = _test_of(benchmark)
    worker = worker_for_user(user=request.user)  # type: ignore[arg-type]
    try:
        return qualification_attempt_start(test=test, worker=worker)
    except QualificationRefused as error:
        raise NotFound(str(error.message)) from error


class WorkQualificationApi(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(
        operation_id="work_qualification",
        summary="One's qualification test of a benchmark: started on first read, then its result",
        responses={
            200: AttemptOut,
            404: OpenApiResponse(description="no such test, it is closed, or the scheme offers none"),
        },
        tags=["work"],
    )
    def get(self, request: Request, name: str) -> Response:
        return Response(_attempt_out(_attempt(request, name)))


class WorkQualificationSubmitApi(APIView):
    permission_classes = [IsAnnotator]
    throttle_classes = [SubmitThrottle]

    @extend_schema(
        operation_id="work_qualification_submit",
        summary="Submit one's qualification test (once; a second submit returns the first result)",
        request=AttemptSubmitIn,
        responses={
            200: AttemptOut,
            400: OpenApiResponse(AttemptErrorOut, description="answers missing, unknown or invalid"),
            404: OpenApiResponse(description="no such test, it is closed, or the scheme offers none"),
        },
        tags=["work"],
    )
    def post(self, request: Request, name: str) -> Response:
        # A test that is not there (or not to be seen) answers 404 whatever the body.
        benchmark = selectors.benchmark_to_take(user=request.user, name=name)
        if benchmark is None:
            raise NotFound("No such benchmark.")
        _test_of(benchmark)
        params = AttemptSubmitIn(data=request.data)
        params.is_valid(raise_exception=True)
        attempt = _attempt(request, name)
        try:
            graded = qualification_attempt_submit(attempt=attempt, answers=params.validated_data["answers"])
        except AnswersInvalid as error:
            body = {
                "detail": error.message,
                "missing": error.missing,
                "unknown": error.unknown,
                "invalid": error.invalid,
            }
            return Response(AttemptErrorOut(body).data, status=status.HTTP_400_BAD_REQUEST)
        return Response(_attempt_out(graded))


# --- researchers -----------------------------------------------------------------------------


class GoldItemIn(serializers.Serializer):
    """A hand-written gold item, with the keys of a gold file (docs/qualification.md)."""

    # Declared here rather than as attributes: "context" would hide the serializer's own context.
    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        return {
            "context": serializers.CharField(trim_whitespace=False),
            "target": serializers.CharField(trim_whitespace=False, max_length=600),
            "offset": serializers.IntegerField(
                required=False, min_value=0, help_text="default: the target's first occurrence"
            ),
            "candidate": serializers.CharField(max_length=500),
            "expected": serializers.CharField(
                help_text="an answer the scheme lets a gold item expect, in its words (1 / -1) or as a label "
                "(accept / reject)"
            ),
        }


class FromBenchmarkIn(serializers.Serializer):
    benchmark = serializers.SlugField(help_text="a finished benchmark whose clear scores give the gold items")
    min_labels = serializers.IntegerField(default=10, min_value=1, max_value=10_000)
    accept_min = serializers.FloatField(default=0.9, min_value=0, max_value=1)
    reject_max = serializers.FloatField(default=0.0, min_value=0, max_value=1)
    items = serializers.IntegerField(required=False, min_value=1, max_value=MAX_GOLD_ITEMS, help_text="at most")


class QualificationBuildIn(serializers.Serializer):
    length = serializers.IntegerField(min_value=1, max_value=1000, help_text="items per attempt")
    pass_mark = serializers.FloatField(min_value=0, max_value=1, help_text="share of answers as expected to pass")
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**31 - 1)
    items = serializers.ListField(
        child=GoldItemIn(), required=False, max_length=MAX_GOLD_ITEMS, help_text="hand-written gold items"
    )
    from_benchmark = FromBenchmarkIn(required=False)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("items" in data) == ("from_benchmark" in data):
            raise serializers.ValidationError("Give either items or from_benchmark.")
        return data


class GoldItemOut(serializers.Serializer):
    # Declared here rather than as attributes: "context" would hide the serializer's own context.
    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        return {
            "position": serializers.IntegerField(),
            "context": serializers.CharField(),
            "word": serializers.CharField(),
            "offset": serializers.IntegerField(),
            "candidate": serializers.CharField(),
            "expected": serializers.CharField(help_text="in the scheme's words (e.g. 1 or -1)"),
            "expected_label": serializers.CharField(help_text="the stored label it stands for (accept / reject)"),
            "source_score": serializers.FloatField(allow_null=True),
            "shown": serializers.IntegerField(),
            "share_correct": serializers.FloatField(allow_null=True),
        }


class QualificationOut(serializers.Serializer):
    # Declared here rather than as attributes: "source" would hide the field's own source.
    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        return {
            "benchmark": serializers.CharField(),
            "active": serializers.BooleanField(),
            "length": serializers.IntegerField(),
            "pass_mark": serializers.FloatField(),
            "source": serializers.CharField(),
            "mturk_types": serializers.DictField(child=serializers.CharField()),
            "taken": serializers.IntegerField(),
            "passed": serializers.IntegerField(),
            "failed": serializers.IntegerField(),
            "pass_rate": serializers.FloatField(allow_null=True),
            "items": GoldItemOut(many=True),
        }


class AttemptResultOut(serializers.Serializer):
    worker = serializers.CharField(source="worker.external_id")
    worker_kind = serializers.CharField(source="worker.kind")
    started_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    correct = serializers.IntegerField()
    total = serializers.IntegerField()
    passed = serializers.BooleanField(allow_null=True)


def _test_out(test: QualificationTest) -> dict[str, Any]:
    summary = selectors.test_summary(test)
    items = [
        {
            "position": row.item.position,
            "context": row.item.context,
            "word": row.item.word,
            "offset": row.item.offset,
            "candidate": row.item.candidate,
            "expected": row.expected,
            "expected_label": row.item.expected,
            "source_score": row.item.source_score,
            "shown": row.shown,
            "share_correct": row.share_correct,
        }
        for row in selectors.item_figures(test)
    ]
    return QualificationOut(
        {
            "benchmark": test.benchmark.name,
            "active": test.active,
            "length": test.length,
            "pass_mark": test.pass_mark,
            "source": test.source,
            "mturk_types": test.crowd_types,
            "taken": summary.taken,
            "passed": summary.passed,
            "failed": summary.failed,
            "pass_rate": summary.pass_rate,
            "items": items,
        }
    ).data


def _gold_items(request: Request, data: dict[str, Any], gold: QualificationGold) -> tuple[list[GoldItem], str]:
    if "from_benchmark" in data:
        source = data["from_benchmark"]
        # Gold drawn from another benchmark reads its labels: a viewer of it may.
        other = benchmark_for(request.user, source["benchmark"], Role.VIEWER)
        try:
            clear = ClearScores(source["min_labels"], source["accept_min"], source["reject_max"])
        except ValueError as error:
            raise serializers.ValidationError({"from_benchmark": [str(error)]}) from error
        items = gold_items_from_benchmark(benchmark=other, clear=clear, limit=source.get("items"), seed=data["seed"])
        return (
            items,
            f"benchmark {other.name} (>= {clear.min_labels} labels, "
            f"score >= {clear.accept_min} or <= {clear.reject_max})",
        )
    items = []
    for number, raw in enumerate(data["items"], start=1):
        expected = gold.expects_label(raw["expected"])
        if expected is None:
            raise serializers.ValidationError(
                {"items": [f"item {number}, field 'expected': {expectation_error(gold, raw['expected'])}"]}
            )
        offset = raw.get("offset")
        if offset is None:
            offset = raw["context"].find(raw["target"])
            if offset < 0:
                raise serializers.ValidationError(
                    {"items": [f"item {number}, field 'target': the target does not occur in the context"]}
                )
        items.append(GoldItem(raw["context"], raw["target"], offset, raw["candidate"].strip(), expected))
    return items, "hand-written (API)"


class QualificationApi(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="qualification_read",
        summary="A benchmark's qualification test: settings, gold items, pass rate",
        responses={200: QualificationOut, 404: OpenApiResponse(description="no such benchmark or test")},
        tags=["qualification"],
    )
    def get(self, request: Request, name: str) -> Response:
        return Response(_test_out(_researchers_test(request, name, Role.VIEWER)))

    @extend_schema(
        operation_id="qualification_build",
        summary="Build (or rebuild, while nobody has taken it) a benchmark's qualification test",
        request=QualificationBuildIn,
        responses={
            200: QualificationOut,
            400: OpenApiResponse(description="bad gold items or settings"),
            404: OpenApiResponse(description="no such benchmark, or its scheme offers no qualification test"),
            409: OpenApiResponse(description="people have taken the test: it stays as it is"),
        },
        tags=["qualification"],
    )
    def put(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.EDITOR)
        gold = _offered(benchmark).gold
        params = QualificationBuildIn(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        try:
            items, source = _gold_items(request, data, gold)
            test = qualification_build(
                benchmark=benchmark,
                items=items,
                length=data["length"],
                pass_mark=data["pass_mark"],
                seed=data["seed"],
                source=source,
                created_by=request.user if isinstance(request.user, User) else None,
            )
        except ImportFailed as error:
            return Response({"detail": error.describe()}, status=status.HTTP_400_BAD_REQUEST)
        except QualificationRefused as error:
            code = status.HTTP_409_CONFLICT if error.code == "taken" else status.HTTP_400_BAD_REQUEST
            return Response({"detail": error.message}, status=code)
        return Response(_test_out(test))


@extend_schema_view(
    get=extend_schema(
        operation_id="qualification_attempts",
        summary="Each person's result on a benchmark's qualification test, newest first",
        tags=["qualification"],
    )
)
class QualificationAttemptsApi(generics.ListAPIView):
    permission_classes = [IsResearcher]
    serializer_class = AttemptResultOut
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[QualificationAttempt]:
        return selectors.test_attempts(_researchers_test(self.request, self.kwargs["name"], Role.VIEWER))
