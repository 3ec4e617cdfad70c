"""REST API for annotators: claim, submit, return, flag and their own history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import ISO_8601, generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.models import Benchmark, Worker
from annotation.services import worker_for_user
from crowdlex.permissions import IsAnnotator
from crowdlex.reconnect import retry_on_lost_connection
from crowdlex.sql import instance_of
from crowdlex.throttling import ClaimThrottle, DraftThrottle, SubmitThrottle
from crowdlex.transactions import in_one_transaction
from hits import selectors
from hits import telemetry as bounds
from hits.models import MAX_ASSIGNMENT_MINUTES, Assignment, AssignmentDraft, AssignmentStatus, Batch, HITFlagReason
from hits.qualification.selectors import Standing, claim_refusal
from hits.services import (
    AnswersInvalid,
    DraftInvalid,
    FlagInvalid,
    PledgeMissing,
    SubmissionRefused,
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    draft_parse,
    draft_save,
    hit_flag_set,
)
from hits.services.drafts import draft_milliseconds
from hits.services.flags import NOTE_MAX_LENGTH
from hits.telemetry import Telemetry, TelemetryInvalid, telemetry_parse

# --- serializers: annotator side -------------------------------------------------------------


class WorkItemOut(serializers.Serializer):
    """A row to judge. There is deliberately no kind: controls look like candidates."""

    id = serializers.IntegerField()
    text = serializers.CharField()


class WorkTargetOut(serializers.Serializer):
    word = serializers.CharField()
    offset = serializers.IntegerField(help_text="character offset of the word in the context")


class WorkAssignmentOut(serializers.Serializer):
    """An assignment with everything needed to show its HIT; items in display order."""

    id = serializers.IntegerField()
    status = serializers.CharField()
    claimed_at = serializers.DateTimeField()
    deadline = serializers.DateTimeField()
    hit = serializers.IntegerField()
    context_text = serializers.CharField(help_text="the context; the target sits at target.offset")
    target = WorkTargetOut()
    items = WorkItemOut(many=True)


class WorkClaimIn(serializers.Serializer):
    batch = serializers.IntegerField(required=False, min_value=1, help_text="claim only in this batch")
    benchmark = serializers.SlugField(required=False, help_text="claim only in this benchmark (by name)")
    avoid_batch = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="pass over this batch (say, the one a HIT was just returned to) while another has a HIT for you",
    )


class WorkProjectOut(serializers.Serializer):
    """A project: an open local batch with HITs left for the requester (docs/annotator.md, "Projects")."""

    batch = serializers.IntegerField(source="batch_id", help_text="claim from it with work_claim's batch")
    title = serializers.CharField()
    summary = serializers.CharField(help_text="what its HITs ask, in a sentence")
    benchmark = serializers.CharField(source="benchmark_name")
    reward = serializers.DecimalField(
        max_digits=6, decimal_places=2, allow_null=True, help_text="per HIT; null when the batch pays nothing"
    )
    minutes_allowed = serializers.IntegerField(help_text="time allowed for one HIT")
    hits_left = serializers.IntegerField(help_text="HITs you may take, the qualification test aside")
    assigned = serializers.BooleanField(help_text="some of its HITs were reserved for you by name")
    qualification = serializers.ChoiceField(
        choices=["", "needed", "passed", "failed"],
        allow_blank=True,
        help_text="where you stand with the test before its HITs: empty when there is none",
    )


def _count(help_text: str, maximum: int = bounds.MAX_COUNT) -> serializers.IntegerField:
    return serializers.IntegerField(required=False, min_value=0, max_value=maximum, help_text=help_text)


class WorkTelemetryIn(serializers.Serializer):
    """How the HIT was worked on: timings (ms) and counts, never text (``hits.telemetry.Telemetry``)."""

    v = serializers.IntegerField(required=False, min_value=bounds.VERSION, max_value=bounds.VERSION)
    ms_to_first_answer = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=bounds.MAX_MS, help_text="first view to first answer"
    )
    item_ms = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=bounds.MAX_MS),
        required=False,
        max_length=bounds.MAX_ITEMS,
        help_text="per row, in the order first answered: ms since the previous row's first answer",
    )
    pointer = _count("trusted mouse or pen presses")
    touch = _count("trusted touches")
    key = _count("trusted key presses")
    hidden = _count("times the page was hidden")
    away_ms = _count("ms the page was hidden", bounds.MAX_MS)
    away_answering_ms = _count("ms hidden before the last answer", bounds.MAX_MS)
    copies = _count("copy or cut events on the text")
    pastes = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=bounds.MAX_CHARS),
        required=False,
        max_length=bounds.MAX_PASTES,
        help_text="characters of each paste into a text field",
    )
    typed_keys = _count("keys pressed in text fields")
    typed_chars = _count("characters typed or inserted into text fields, pastes aside", bounds.MAX_CHARS)
    largest_insert = _count("largest insertion in one input event that was not a paste", bounds.MAX_CHARS)
    inserts = _count("input events that inserted text")
    blocked = _count("copy or paste attempts refused by the page")
    loads = _count("times the page was opened")

    def to_internal_value(self, data: Any) -> Any:
        # A nested serializer drops unknown keys silently; telemetry names every field it may hold.
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(f"telemetry has unknown fields: {', '.join(map(str, unknown))[:200]}")
        value = super().to_internal_value(data)
        try:
            telemetry_parse(dict(data))
        except TelemetryInvalid as error:
            raise serializers.ValidationError(error.message) from None
        return value


class WorkSubmitIn(serializers.Serializer):
    answers = serializers.DictField(
        child=serializers.JSONField(),
        help_text="every item of the HIT, item id -> its answer in the benchmark's scheme "
        "(a choice's value, or what the scheme's page sends); the scheme checks them",
    )
    # No claim is open longer than a batch's longest assignment duration.
    seconds_on_page = serializers.FloatField(
        required=False, allow_null=True, min_value=0, max_value=MAX_ASSIGNMENT_MINUTES * 60
    )
    telemetry = WorkTelemetryIn(required=False, allow_null=True)
    pledge = serializers.BooleanField(
        required=False, default=False, help_text="the pledge to answer oneself, when the benchmark asks for it"
    )


class WorkReturnIn(serializers.Serializer):
    telemetry = WorkTelemetryIn(required=False, allow_null=True)


def _telemetry(validated: dict[str, Any]) -> Telemetry | None:
    raw = validated.get("telemetry")
    return None if raw is None else telemetry_parse(dict(raw))


class WorkSubmittedOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    seconds_on_page = serializers.FloatField(allow_null=True)


class WorkReturnedOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()


class WorkFlagIn(serializers.Serializer):
    item = serializers.IntegerField(
        required=False, allow_null=True, help_text="a row (item id) of the HIT; none flags the whole HIT"
    )
    reason = serializers.ChoiceField(choices=HITFlagReason.choices)
    note = serializers.CharField(required=False, allow_blank=True, max_length=NOTE_MAX_LENGTH)


class WorkFlagOut(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id", allow_null=True)
    reason = serializers.CharField()
    note = serializers.CharField()
    created_at = serializers.DateTimeField()


class WorkHistoryOut(serializers.Serializer):
    """One of the annotator's own assignments: no scores, no filtering flag (docs/design.md §1)."""

    id = serializers.IntegerField()
    hit = serializers.IntegerField(source="hit_id")
    word = serializers.CharField(source="hit.target.word")
    status = serializers.CharField()
    claimed_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    seconds_on_page = serializers.FloatField(allow_null=True)


class WorkErrorOut(serializers.Serializer):
    detail = serializers.CharField()
    missing = serializers.ListField(child=serializers.IntegerField(), required=False)
    unknown = serializers.ListField(child=serializers.CharField(), required=False)
    invalid = serializers.ListField(child=serializers.IntegerField(), required=False)


class WorkRefusedOut(serializers.Serializer):
    detail = serializers.CharField()
    qualification = serializers.CharField(help_text="the qualification test's API path")


# --- views: annotator side -------------------------------------------------------------------


# The bodies of the claim and the submit are built here rather than by their serializers (which
# describe them in the schema): instantiating a serializer copies its fields, a sixth of a cycle's
# CPU. tests/hits/test_work_api.py checks each body against its serializer's.
_DATETIME = serializers.DateTimeField()


def _datetime(value: Any) -> Any:
    """``DateTimeField().to_representation(value)``: for an aware datetime, with DRF's ISO 8601 and
    time zones on, its ISO form in the current time zone (UTC written ``Z``) written here, as DRF's
    field asks the settings and the zone again for each value (docs/benchmarks.md, "The API's cycle
    in one process"); anything else by the field."""
    if value is None:
        return None
    if type(value) is datetime and value.utcoffset() is not None and _iso_in_zones():
        try:
            text = value.astimezone(timezone.get_current_timezone()).isoformat()
        except OverflowError:
            return _DATETIME.to_representation(value)  # DRF's refusal
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    return _DATETIME.to_representation(value)


def _iso_in_zones() -> bool:
    return bool(settings.USE_TZ) and str(api_settings.DATETIME_FORMAT).lower() == ISO_8601


def _assignment_out(assignment: Assignment) -> dict[str, Any]:
    """The body of ``WorkAssignmentOut``."""
    context, word, offset, items = selectors.hit_items(hit_id=assignment.hit_id)
    return {
        "id": assignment.pk,
        "status": str(assignment.status),
        "claimed_at": _datetime(assignment.claimed_at),
        "deadline": _datetime(assignment.deadline),
        "hit": assignment.hit_id,
        "context_text": context,
        "target": {"word": word, "offset": offset},
        "items": [{"id": pk, "text": text} for pk, text in items],
    }


def _submitted_out(assignment: Assignment) -> dict[str, Any]:
    """The body of ``WorkSubmittedOut``."""
    return {
        "id": assignment.pk,
        "status": str(assignment.status),
        "submitted_at": _datetime(assignment.submitted_at),
        "seconds_on_page": assignment.seconds_on_page,
    }


# The bodies a client sends on every claim and submit are read here when they have the plain shape
# every client sends (no scope, answers as strings, a time on page, no telemetry), with exactly the
# values their serializers would give; anything else (and every refusal) is left to the serializers.
# Building a serializer copies its fields (the submit's include the telemetry's twenty): about
# half a millisecond of a cycle. tests/hits/test_work_api.py checks the two agree on any body.
_MAX_SECONDS_ON_PAGE = MAX_ASSIGNMENT_MINUTES * 60
_PLAIN_SUBMIT_KEYS = {"answers", "seconds_on_page", "telemetry", "pledge"}


def claim_params(data: Any) -> dict[str, Any] | None:
    """``WorkClaimIn``'s validated data of a body without a scope (``{}``); None for any other."""
    return {} if type(data) is dict and not data else None


def submit_params(data: Any) -> dict[str, Any] | None:
    """``WorkSubmitIn``'s validated data of a JSON body of answers given as strings, with or without
    a number for the time on page, a null telemetry and a boolean pledge; None for any other body
    (the serializer reads it)."""
    if type(data) is not dict or not data.keys() <= _PLAIN_SUBMIT_KEYS:
        return None
    answers = data.get("answers")
    if type(answers) is not dict or not all(type(value) is str for value in answers.values()):
        return None
    pledge = data.get("pledge", False)
    if type(pledge) is not bool or data.get("telemetry") is not None:
        return None
    params: dict[str, Any] = {"answers": {str(key): value for key, value in answers.items()}}
    if "seconds_on_page" in data:
        seconds = data["seconds_on_page"]
        if seconds is not None:
            if type(seconds) not in (int, float) or not 0 <= seconds <= _MAX_SECONDS_ON_PAGE:
                return None
            seconds = float(seconds)
        params["seconds_on_page"] = seconds
    if "telemetry" in data:
        params["telemetry"] = None
    params["pledge"] = pledge
    return params


# What get_object_or_404 says, so every "not yours" answer reads the same.
NOT_YOURS = "No Assignment matches the given query."


def _own_assignment(request: Request, assignment_id: int) -> Assignment:
    """The requester's assignment; anyone else's is a 404, as if it did not exist."""
    return get_object_or_404(Assignment, pk=assignment_id, worker__user_id=request.user.pk)


def _worker(request: Request) -> Worker:
    return worker_for_user(user=request.user)  # type: ignore[arg-type]


class InOneTransactionApi(APIView):
    """An API view whose request runs in one transaction (``crowdlex.transactions``), run again on a
    new connection when the connection was lost (``crowdlex.reconnect``).

    The view function is wrapped once, when the URLconf builds it: ``method_decorator`` on
    ``dispatch`` wraps the bound method again on every request, a hundredth of the request's CPU
    (docs/benchmarks.md, "The API's request path")."""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        return retry_on_lost_connection(in_one_transaction(super().as_view(**initkwargs)))


# The account's read, the claim and the page it answers: one transaction.
class WorkClaimView(InOneTransactionApi):
    permission_classes = [IsAnnotator]
    throttle_classes = [ClaimThrottle]

    @extend_schema(
        operation_id="work_claim",
        summary="Claim the next HIT (or resume the one in progress)",
        request=WorkClaimIn,
        responses={
            200: WorkAssignmentOut,
            204: OpenApiResponse(description="no work right now"),
            403: OpenApiResponse(WorkRefusedOut, description="you did not pass the benchmark's qualification test"),
            404: OpenApiResponse(description="no such batch or benchmark"),
            409: OpenApiResponse(WorkRefusedOut, description="take the benchmark's qualification test first"),
        },
        tags=["work"],
    )
    def post(self, request: Request) -> Response:
        validated = claim_params(request.data)
        if validated is None:
            params = WorkClaimIn(data=request.data)
            params.is_valid(raise_exception=True)
            validated = params.validated_data
        batch = get_object_or_404(Batch, pk=validated["batch"]) if "batch" in validated else None
        benchmark = get_object_or_404(Benchmark, name=validated["benchmark"]) if "benchmark" in validated else None
        worker = _worker(request)
        # The HIT's page is read in the claim's transaction, the request's (``in_one_transaction``).
        assignment = assignment_claim_next(
            worker=worker,
            batch=batch,
            benchmark=benchmark,
            avoid_batch=validated.get("avoid_batch"),
            savepoint=False,
        )
        body = _assignment_out(assignment) if assignment is not None else None
        if body is None:
            scope = benchmark if benchmark is not None else (batch.benchmark if batch is not None else None)
            refusal = claim_refusal(worker=worker, batch_id=batch.pk if batch else None, benchmark=scope)
            if refusal is None:
                return Response(status=status.HTTP_204_NO_CONTENT)
            body = {
                "detail": refusal.message,
                "qualification": reverse("api-work-qualification", args=[refusal.test.benchmark.name]),
            }
            failed = refusal.reason == Standing.FAILED
            return Response(
                WorkRefusedOut(body).data, status=status.HTTP_403_FORBIDDEN if failed else status.HTTP_409_CONFLICT
            )
        return Response(body)


# The account's read and the submit: one transaction.
class WorkSubmitView(InOneTransactionApi):
    permission_classes = [IsAnnotator]
    throttle_classes = [SubmitThrottle]

    @extend_schema(
        operation_id="work_submit",
        summary="Submit the answers of one's own assignment (idempotent)",
        request=WorkSubmitIn,
        responses={
            200: WorkSubmittedOut,
            400: OpenApiResponse(WorkErrorOut, description="answers missing, unknown or invalid"),
            404: OpenApiResponse(description="not one of your assignments"),
            409: OpenApiResponse(WorkErrorOut, description="returned, or expired and the HIT is complete"),
        },
        tags=["work"],
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        validated = submit_params(request.data)
        if validated is None:
            params = WorkSubmitIn(data=request.data)
            if not params.is_valid():
                # Someone else's assignment is a 404 whatever the body says.
                _own_assignment(request, assignment_id)
                raise serializers.ValidationError(params.errors)
            validated = params.validated_data
        try:
            worker = request.user.worker  # type: ignore[union-attr]
        except Worker.DoesNotExist as missing:
            raise Http404(NOT_YOURS) from missing
        try:
            # Only the id is read: the service loads the row under its lock, for this worker only. An
            # instance of the id alone, its other fields deferred: building every field's default
            # took a few hundredths of a millisecond of each submit.
            submitted = assignment_submit(
                assignment=instance_of(Assignment, id=assignment_id),
                worker=worker,
                answers=validated["answers"],
                seconds_on_page=validated.get("seconds_on_page"),
                telemetry=_telemetry(validated),
                pledged=validated["pledge"],
                savepoint=False,
            )
        except Assignment.DoesNotExist as missing:
            raise Http404(NOT_YOURS) from missing
        except AnswersInvalid as error:
            body = {
                "detail": error.message,
                "missing": error.missing,
                "unknown": error.unknown,
                "invalid": error.invalid,
            }
            return Response(WorkErrorOut(body).data, status=status.HTTP_400_BAD_REQUEST)
        except PledgeMissing as error:
            return Response(WorkErrorOut({"detail": error.message}).data, status=status.HTTP_400_BAD_REQUEST)
        except SubmissionRefused as error:
            return Response(WorkErrorOut({"detail": error.message}).data, status=status.HTTP_409_CONFLICT)
        return Response(_submitted_out(submitted))


@method_decorator(retry_on_lost_connection, name="dispatch")
class WorkReturnView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(
        operation_id="work_return",
        summary="Give one's own HIT back to the pool",
        request=WorkReturnIn,
        responses={
            200: WorkReturnedOut,
            404: OpenApiResponse(description="not one of your assignments"),
            409: OpenApiResponse(WorkErrorOut, description="already submitted"),
        },
        tags=["work"],
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = _own_assignment(request, assignment_id)
        params = WorkReturnIn(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            returned = assignment_return(assignment=assignment, telemetry=_telemetry(params.validated_data))
        except SubmissionRefused as error:
            return Response(WorkErrorOut({"detail": error.message}).data, status=status.HTTP_409_CONFLICT)
        return Response(WorkReturnedOut(returned).data)


class WorkFlagView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(
        operation_id="work_flag",
        summary="Flag one's own HIT or one of its rows for the researchers (the HIT is not returned)",
        request=WorkFlagIn,
        responses={
            200: WorkFlagOut,
            400: OpenApiResponse(WorkErrorOut, description="no such reason or row"),
            404: OpenApiResponse(description="not one of your assignments"),
        },
        tags=["work"],
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = _own_assignment(request, assignment_id)
        params = WorkFlagIn(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            flag = hit_flag_set(
                assignment=assignment,
                reason=params.validated_data["reason"],
                item_id=params.validated_data.get("item"),
                note=params.validated_data.get("note", ""),
            )
        except FlagInvalid as error:
            return Response(WorkErrorOut({"detail": error.message}).data, status=status.HTTP_400_BAD_REQUEST)
        return Response(WorkFlagOut(flag).data)


@method_decorator(retry_on_lost_connection, name="dispatch")
@extend_schema_view(
    get=extend_schema(operation_id="work_history", summary="One's own assignments, newest first", tags=["work"])
)
class WorkHistoryView(generics.ListAPIView):
    permission_classes = [IsAnnotator]
    serializer_class = WorkHistoryOut
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[Assignment]:
        return selectors.work_assignments(worker=_worker(self.request))


@method_decorator(retry_on_lost_connection, name="dispatch")
class WorkProjectsView(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(
        operation_id="work_projects",
        summary="The projects with HITs left for you, oldest batch first",
        responses={200: WorkProjectOut(many=True)},
        tags=["work"],
    )
    def get(self, request: Request) -> Response:
        return Response(WorkProjectOut(selectors.work_projects(worker=_worker(request)), many=True).data)


# --- drafts: a HIT in progress kept on the server (docs/design.md §4, "Drafts across devices") ---


class WorkDraftAnswer(serializers.Serializer):
    name = serializers.RegexField(r"^item-[A-Za-z0-9_-]{1,58}$", help_text="the page's answer field")
    value = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=10_000)


class WorkDraftStateIn(serializers.Serializer):
    telemetry = WorkTelemetryIn(required=False, help_text="the page's telemetry so far")
    first = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=bounds.MAX_ITEMS),
        required=False,
        max_length=bounds.MAX_ITEMS,
        help_text="rows (by position) answered once so far",
    )
    last_first_ms = serializers.IntegerField(
        required=False, min_value=0, help_text="time on page when the last of them was first answered"
    )


class WorkDraftIn(serializers.Serializer):
    view = serializers.RegexField(
        r"^[A-Za-z0-9_-]{8,64}$", help_text="the page view's own random id, drawn when the page opened"
    )
    ms = serializers.IntegerField(
        min_value=0,
        help_text="active milliseconds this page view has counted so far (a running total; "
        "clipped to the batch's assignment duration)",
    )
    answers = serializers.ListField(
        child=WorkDraftAnswer(), required=False, max_length=bounds.MAX_ITEMS, help_text="the answers so far"
    )
    state = WorkDraftStateIn(required=False)


class WorkDraftOut(serializers.Serializer):
    answers = WorkDraftAnswer(many=True)
    state = serializers.DictField()
    views = serializers.DictField(child=serializers.IntegerField(), help_text="milliseconds kept per page view")
    seconds = serializers.FloatField(help_text="time on page so far: the sum over page views")
    updated_at = serializers.DateTimeField()


def _draft_out(draft: AssignmentDraft) -> dict[str, Any]:
    return {
        "answers": draft.answers,
        "state": draft.state,
        "views": draft.views,
        "seconds": draft_milliseconds(views=draft.views) / 1000,
        "updated_at": draft.updated_at,
    }


@method_decorator(retry_on_lost_connection, name="dispatch")
class WorkDraftView(APIView):
    """The draft of one's own HIT in progress: read it on another device, or save it as one works."""

    permission_classes = [IsAnnotator]
    throttle_classes = [DraftThrottle]

    @extend_schema(
        operation_id="work_draft",
        summary="The draft of one's own HIT in progress (204: none yet)",
        responses={
            200: WorkDraftOut,
            204: OpenApiResponse(description="no draft saved yet"),
            404: OpenApiResponse(description="not one of your assignments in progress"),
        },
        tags=["work"],
    )
    def get(self, request: Request, assignment_id: int) -> Response:
        get_object_or_404(
            Assignment, pk=assignment_id, worker__user_id=request.user.pk, status=AssignmentStatus.CLAIMED
        )
        draft = AssignmentDraft.objects.filter(assignment_id=assignment_id).first()
        if draft is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(WorkDraftOut(_draft_out(draft)).data)

    @extend_schema(
        operation_id="work_draft_save",
        summary="Save the answers so far and add this page view's active time (idempotent per view)",
        request=WorkDraftIn,
        responses={
            200: WorkDraftOut,
            400: OpenApiResponse(WorkErrorOut, description="not a draft the page sends, or too large"),
            404: OpenApiResponse(description="not one of your assignments in progress"),
        },
        tags=["work"],
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        params = WorkDraftIn(data=request.data)
        try:
            if not params.is_valid():
                # Someone else's assignment is a 404 whatever the body says.
                _own_assignment(request, assignment_id)
                raise serializers.ValidationError(params.errors)
            report = draft_parse(dict(request.data))
            worker = request.user.worker  # type: ignore[union-attr]
            draft = draft_save(assignment_id=assignment_id, worker=worker, report=report)
        except (Assignment.DoesNotExist, Worker.DoesNotExist) as missing:
            raise Http404(NOT_YOURS) from missing
        except DraftInvalid as error:
            # Someone else's assignment is a 404 whatever the body says.
            get_object_or_404(Assignment, pk=assignment_id, worker__user_id=request.user.pk)
            return Response(WorkErrorOut({"detail": error.message}).data, status=status.HTTP_400_BAD_REQUEST)
        return Response(WorkDraftOut(_draft_out(draft)).data)
