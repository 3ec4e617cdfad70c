"""REST API for benchmarks: list, detail with counts, import, and the imports to list and remove
(researchers only)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors
from annotation.access import (
    AccessRefused,
    Role,
    access_grant,
    access_revoke,
    benchmark_for,
    benchmark_members,
    benchmark_to_share,
    object_for,
)
from annotation.importers import auto_format_help, import_format_names, validate_upload_size
from annotation.importers.jobs import candidates_job_create, import_job_create, import_job_for, import_job_progress
from annotation.importers.sources import SOURCE_NAMES
from annotation.llm import LLM, ModelRequest
from annotation.models import Activity, ActivityKind, Benchmark, Candidate, Import, ImportJob, ImportJobStatus, Target
from annotation.services import ImportRemovalRefused, candidates_add, cefr_level_set, import_delete
from crowdlex.pagination import PaginatedList
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
            "scheme_settings",
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
        help_text="a file of one of the formats, gzipped or not (docs/formats.md)", validators=[validate_upload_size]
    )
    format = serializers.ChoiceField(
        choices=["auto", *import_format_names()],
        default="auto",
        help_text=auto_format_help(),
    )
    origin = serializers.CharField(
        required=False, max_length=200, help_text="name the labels are kept under; default: the file name"
    )
    new_label_set = serializers.BooleanField(
        default=False,
        help_text="the labels are a new annotation of candidates another origin labelled (a re-annotation); "
        "without it such labels are refused as counted twice",
    )


class EntityCountsSerializer(serializers.Serializer[Any]):
    created = serializers.IntegerField()
    merged = serializers.IntegerField()
    skipped = serializers.IntegerField()


class IdMismatchSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    file_id = serializers.CharField()
    expected_id = serializers.CharField()


class LabelOverlapSerializer(serializers.Serializer[Any]):
    origin = serializers.CharField()
    candidates = serializers.IntegerField(help_text="candidates labelled by both")


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
    new_label_set = serializers.BooleanField()
    candidates_by_source = serializers.DictField(
        child=serializers.IntegerField(), help_text='new candidates by source name ("" for none)'
    )
    label_overlaps = LabelOverlapSerializer(
        many=True, help_text="with new_label_set: the origins whose candidates the labels were added beside"
    )
    unchanged = serializers.BooleanField(
        help_text="the same file as the origin's last import, byte for byte: nothing read or written"
    )
    seconds = serializers.FloatField()


class ImportProgressSerializer(serializers.Serializer[Any]):
    done = serializers.IntegerField(help_text="targets imported so far")
    total = serializers.IntegerField(allow_null=True, help_text="targets in the file, where the format tells")


class ImportErrorSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField(help_text="file, line or id, field, and what is wrong")
    file = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    item = serializers.CharField(allow_null=True, help_text="the id in the file, where the format has no lines")
    field = serializers.CharField(allow_null=True)


class ImportSummarySerializer(serializers.Serializer[Any]):
    origin = serializers.CharField()
    new_label_set = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    contexts = serializers.IntegerField()
    targets = serializers.IntegerField()
    candidates = serializers.IntegerField()
    labels = serializers.IntegerField()


class ImportDeleteQuerySerializer(serializers.Serializer[Any]):
    dry_run = serializers.BooleanField(default=False, help_text="report what would be removed, remove nothing")


class ImportRemovalSerializer(serializers.Serializer[Any]):
    benchmark = serializers.CharField()
    origin = serializers.CharField()
    dry_run = serializers.BooleanField()
    labels = serializers.IntegerField()
    candidates = serializers.IntegerField()
    targets = serializers.IntegerField()
    contexts = serializers.IntegerField()
    targets_reopened = serializers.IntegerField(help_text="targets other imports keep, sent back to step 2")


class DetailSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()


class ActivitySerializer(serializers.ModelSerializer[Activity]):
    actor = serializers.CharField(source="actor_name", help_text='who did it; "" for the platform itself')

    class Meta:
        model = Activity
        fields = ["id", "created_at", "kind", "actor", "summary", "result"]


class ActivityQuerySerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=ActivityKind.choices, required=False, help_text="only entries of this kind")


class BenchmarkActivityApi(generics.ListAPIView[Activity]):
    """The benchmark's activity log, newest first: who imported, created, closed, published,
    approved, rejected, bonused, blocked, changed a setting or exported, when, with what result."""

    permission_classes = [IsResearcher]
    serializer_class = ActivitySerializer
    filterset_class = None

    @extend_schema(parameters=[ActivityQuerySerializer])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no benchmark
            return Activity.objects.none()
        benchmark = benchmark_for(self.request.user, self.kwargs["name"], Role.VIEWER)
        query = ActivityQuerySerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return selectors.activity_list(benchmark=benchmark, kind=query.validated_data.get("kind"))


class BenchmarkListView(generics.ListAPIView[Benchmark]):
    permission_classes = [IsResearcher]
    serializer_class = BenchmarkListItemSerializer

    def get_queryset(self) -> Any:
        return selectors.benchmark_list(user=self.request.user)


class BenchmarkDetailView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=BenchmarkDetailSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        counts = selectors.benchmark_counts(benchmark=benchmark)
        return Response(BenchmarkDetailSerializer(benchmark, context={"counts": counts}).data)


class ModelReportSerializer(serializers.Serializer[Any]):
    """What a run of a language model for candidates did, or (dry) would do (docs/candidates.md)."""

    benchmark = serializers.CharField()
    origin = serializers.CharField(help_text="llm:<model>: the candidates' source and the import's origin")
    model = serializers.CharField()
    endpoint = serializers.CharField(help_text="the endpoint's base URL (never the key)")
    prompt_sha256 = serializers.CharField(help_text="targets asked under this model and prompt are skipped")
    per_target = serializers.IntegerField()
    temperature = serializers.FloatField()
    dry_run = serializers.BooleanField()
    targets = serializers.IntegerField(help_text="targets chosen")
    already_asked = serializers.IntegerField(help_text="of which asked before under this model and prompt")
    asked = serializers.IntegerField()
    answered = serializers.IntegerField()
    failed = serializers.IntegerField(help_text="asked in vain after the retries: a rerun asks them again")
    candidates_created = serializers.IntegerField()
    candidates_existing = serializers.IntegerField(help_text="substitutes the targets had already: gained the source")
    candidates_by_target = serializers.DictField(child=serializers.IntegerField(), help_text="target id -> new")
    repeated = serializers.IntegerField()
    target_itself = serializers.IntegerField()
    beyond_count = serializers.IntegerField()
    unusable_count = serializers.IntegerField()
    unusable = serializers.ListField(child=serializers.CharField(), help_text="the first 50, each naming its target")
    failures = serializers.ListField(child=serializers.CharField(), help_text="the first 50, each naming its target")
    stopped = serializers.CharField(help_text="why the run stopped early (a wrong key, model or URL); empty if not")
    retries = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.CharField(allow_null=True, help_text="dollars at LLM_PRICE_PER_1K_*; null: no price")
    first_prompt = serializers.CharField(help_text="dry run: the first target's prompt")
    estimated_prompt_tokens = serializers.IntegerField()
    estimated_completion_tokens = serializers.IntegerField()
    estimated_cost = serializers.CharField(allow_null=True)
    seconds = serializers.FloatField()


def _is_model_report(report: Any) -> bool:
    return isinstance(report, dict) and "prompt_sha256" in report


class ImportJobSerializer(serializers.ModelSerializer[ImportJob]):
    url = serializers.SerializerMethodField(help_text="this job, to poll until its status is done or failed")
    page = serializers.SerializerMethodField(help_text="the job's page, with its progress and outcome")
    progress = serializers.SerializerMethodField(
        help_text="while running: targets imported so far and, where the format tells, of how many"
    )
    report = serializers.SerializerMethodField(help_text="once done: what the import created")
    model_report = serializers.SerializerMethodField(
        help_text="once done, for candidates from a language model (format llm): what the run did"
    )
    error = ImportErrorSerializer(allow_null=True, help_text="once failed: file, line or id, field, what is wrong")

    class Meta:
        model = ImportJob
        fields = ["id", "url", "page", "benchmark_name", "file_name", "format", "origin", "new_label_set"]
        fields += ["status", "progress", "report", "model_report", "error", "created_at", "started_at", "finished_at"]

    @extend_schema_field(ImportReportSerializer(allow_null=True))  # type: ignore[misc]
    def get_report(self, job: ImportJob) -> dict[str, Any] | None:
        if job.report is None or _is_model_report(job.report):
            return None
        return dict(ImportReportSerializer(job.report).data)

    @extend_schema_field(ModelReportSerializer(allow_null=True))  # type: ignore[misc]
    def get_model_report(self, job: ImportJob) -> dict[str, Any] | None:
        return dict(ModelReportSerializer(job.report).data) if _is_model_report(job.report) else None

    def _absolute(self, url: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request is not None else url

    def get_url(self, job: ImportJob) -> str:
        return self._absolute(reverse("api-import-job", args=[job.pk]))

    def get_page(self, job: ImportJob) -> str:
        return self._absolute(reverse("import-job", args=[job.pk]))

    @extend_schema_field(ImportProgressSerializer(allow_null=True))  # type: ignore[misc]
    def get_progress(self, job: ImportJob) -> dict[str, Any] | None:
        if job.status != ImportJobStatus.RUNNING:
            return None
        found = import_job_progress(job)
        return {"done": found["done"], "total": found["total"]} if found else None


class BenchmarkImportView(APIView):
    """Import a file into the benchmark (created if needed) as a job: the upload is stored and 202
    answers at once with the job's URL, to poll until it is done (its report) or failed (file,
    line, field). All or nothing, and repeatable (docs/formats.md, "Import jobs")."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportInputSerializer},
        responses={202: ImportJobSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        if Benchmark.objects.filter(name=name).exists():
            # Into an existing benchmark: the user's, as an editor (someone else's answers 404).
            benchmark_for(request.user, name, Role.EDITOR)
        given = ImportInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        # Django keeps uploads above FILE_UPLOAD_MAX_MEMORY_SIZE in a temporary file; the job's
        # copy is written from it a chunk at a time, and the job streams from that.
        job = import_job_create(
            upload=given.validated_data["file"],
            benchmark_name=name,
            fmt=given.validated_data["format"],
            origin=given.validated_data.get("origin"),
            new_label_set=given.validated_data["new_label_set"],
            created_by=request.user,  # type: ignore[arg-type]
        )
        job.refresh_from_db()  # run already when tasks run inline (the embedded default)
        body = ImportJobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class CandidatesAddInputSerializer(serializers.Serializer[Any]):
    # "source" is also a DRF field's attribute, which the stubs type; the metaclass takes this one away.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=list(SOURCE_NAMES), help_text="wordnet, or llm: a language model"
    )
    targets = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, help_text="target ids or words; none: all"
    )
    model = serializers.CharField(required=False, max_length=200, help_text="llm: the model (default: LLM_MODEL)")
    per_target = serializers.IntegerField(required=False, min_value=1, max_value=100)
    temperature = serializers.FloatField(required=False, min_value=0, max_value=2)
    prompt = serializers.CharField(
        required=False,
        max_length=20000,
        help_text="llm: a prompt template instead of the scheme's (docs/candidates.md)",
    )
    dry_run = serializers.BooleanField(
        default=False, help_text="llm: answer the first prompt and the cost estimate at once, ask nothing"
    )


class BenchmarkCandidatesAddApi(APIView):
    """Add candidates to the benchmark's targets from a source, as a job like an import's (202, its URL
    to poll; a model's report is its ``model_report``); a dry run of a language model answers 200 with
    its first prompt and cost estimate and asks nothing (docs/candidates.md)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        request=CandidatesAddInputSerializer,
        responses={202: ImportJobSerializer, 200: ModelReportSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        from django.conf import settings

        benchmark = benchmark_for(request.user, name, Role.EDITOR)
        given = CandidatesAddInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        model = None
        if data["source"] == LLM:
            model = ModelRequest(
                model=data.get("model") or settings.LLM_MODEL,
                per_target=data.get("per_target"),
                temperature=data.get("temperature"),
                prompt=data.get("prompt"),
            )
        try:
            if data["dry_run"] and model is not None:
                report = candidates_add(
                    benchmark=benchmark, source=LLM, targets=data.get("targets") or None, model=model, dry_run=True
                )
                return Response(ModelReportSerializer(report.as_dict()).data)
            job = candidates_job_create(
                benchmark=benchmark,
                source=data["source"],
                targets=data.get("targets") or None,
                model=model,
                created_by=request.user,  # type: ignore[arg-type]
            )
        except ValueError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from exc
        job.refresh_from_db()  # run already when tasks run inline (the embedded default)
        body = ImportJobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class ImportJobDetailView(APIView):
    """An import job: pending, running (with its progress), done (with its report) or failed (with
    its error). Its creator sees it, and so does every viewer of its benchmark."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=ImportJobSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        job = import_job_for(request.user, job_id)
        return Response(ImportJobSerializer(job, context={"request": request}).data)


class ImportListView(PaginatedList, APIView):
    """The benchmark's imports by origin, oldest first, with the rows each brought."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=ImportSummarySerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return self.paginated(request, selectors.import_list(benchmark=benchmark), ImportSummarySerializer)


class ImportDeleteView(APIView):
    """Remove an import by origin (``?dry_run=true`` to see what would go); 409 while crowd work depends on it."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[ImportDeleteQuerySerializer],
        responses={200: ImportRemovalSerializer, 404: DetailSerializer, 409: DetailSerializer},
    )
    def delete(self, request: Request, name: str, origin: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.OWNER)
        query = ImportDeleteQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            removal = import_delete(
                benchmark=benchmark, origin=origin, dry_run=query.validated_data["dry_run"], by=request.user
            )
        except Import.DoesNotExist as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
        except ImportRemovalRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(ImportRemovalSerializer(removal).data)


class LevelInputSerializer(serializers.Serializer[Any]):
    level = serializers.CharField(allow_blank=True, help_text='A1 to C2; "" clears it (back to imported or estimated)')
    candidate = serializers.IntegerField(required=False, help_text="a candidate of the target; left out: the target")


class LevelSerializer(serializers.Serializer[Any]):
    target = serializers.IntegerField()
    candidate = serializers.IntegerField(allow_null=True)
    level = serializers.CharField()


class TargetLevelView(APIView):
    """Set the CEFR level of a target or of one of its candidates (ProLex's proficiency rule reads it)."""

    permission_classes = [IsResearcher]

    @extend_schema(request=LevelInputSerializer, responses={200: LevelSerializer, 400: DetailSerializer})
    def put(self, request: Request, name: str, target_id: int) -> Response:
        target = object_for(request.user, Target.objects.all(), Role.EDITOR, benchmark__name=name, pk=target_id)
        given = LevelInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        candidate_id = given.validated_data.get("candidate")
        candidate = get_object_or_404(Candidate, pk=candidate_id) if candidate_id is not None else None
        try:
            row = cefr_level_set(target=target, candidate=candidate, level=given.validated_data["level"])
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(LevelSerializer({"target": target.pk, "candidate": candidate_id, "level": row.cefr}).data)


class MemberSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=[role.label for role in Role])
    granted_by = serializers.CharField(source="granted_by.username", default=None, allow_null=True)
    granted_at = serializers.DateTimeField()

    def to_representation(self, member: Any) -> dict[str, Any]:
        data = super().to_representation(member)
        data["role"] = Role(member.role).label
        return data


class GrantInputSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150, help_text="a researcher's account")
    role = serializers.ChoiceField(choices=[role.label for role in Role])


class BenchmarkAccessView(APIView):
    """GET: who has which role in the benchmark (any member). POST: grant or change a role (owners;
    a superuser on a benchmark nobody owns)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=MemberSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return Response(MemberSerializer(benchmark_members(benchmark=benchmark), many=True).data)

    @extend_schema(request=GrantInputSerializer, responses={200: MemberSerializer, 400: DetailSerializer})
    def post(self, request: Request, name: str) -> Response:
        benchmark = benchmark_to_share(request.user, name)
        given = GrantInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        user = User.objects.filter(username=given.validated_data["username"]).first()
        role = next(role for role in Role if role.label == given.validated_data["role"])
        try:
            if user is None:
                raise AccessRefused("No researcher has this account.")
            member = access_grant(benchmark=benchmark, user=user, role=role, by=request.user)
        except AccessRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(MemberSerializer(member).data)


class BenchmarkAccessMemberView(APIView):
    """Revoke a researcher's role (owners); the last owner cannot leave."""

    permission_classes = [IsResearcher]

    @extend_schema(responses={204: None, 400: DetailSerializer, 404: DetailSerializer})
    def delete(self, request: Request, name: str, username: str) -> Response:
        benchmark = benchmark_to_share(request.user, name)
        member = get_object_or_404(benchmark_members(benchmark=benchmark), user__username=username)
        try:
            access_revoke(benchmark=benchmark, user=member.user)
        except AccessRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(status=status.HTTP_204_NO_CONTENT)


urlpatterns = [
    path("benchmarks/", BenchmarkListView.as_view(), name="api-benchmark-list"),
    path("benchmarks/<slug:name>/", BenchmarkDetailView.as_view(), name="api-benchmark-detail"),
    path("benchmarks/<slug:name>/access", BenchmarkAccessView.as_view(), name="api-benchmark-access"),
    path(
        "benchmarks/<slug:name>/access/<str:username>",
        BenchmarkAccessMemberView.as_view(),
        name="api-benchmark-access-member",
    ),
    path("benchmarks/<slug:name>/import", BenchmarkImportView.as_view(), name="api-benchmark-import"),
    path("benchmarks/<slug:name>/candidates", BenchmarkCandidatesAddApi.as_view(), name="api-benchmark-candidates-add"),
    path("import-jobs/<int:job_id>", ImportJobDetailView.as_view(), name="api-import-job"),
    path("benchmarks/<slug:name>/activity/", BenchmarkActivityApi.as_view(), name="api-benchmark-activity"),
    path("benchmarks/<slug:name>/imports", ImportListView.as_view(), name="api-import-list"),
    path("benchmarks/<slug:name>/imports/<path:origin>", ImportDeleteView.as_view(), name="api-import-delete"),
    path("benchmarks/<slug:name>/targets/<int:target_id>/level", TargetLevelView.as_view(), name="api-target-level"),
]
