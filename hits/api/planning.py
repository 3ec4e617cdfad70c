"""REST API for planning batches: what a new batch would create and cost (the form's preview), and
a clone of a batch with its settings for other targets or another backend."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, object_for, require
from crowdlex.permissions import IsResearcher
from crowds.interface import backend_choices
from hits import services
from hits.api.researcher import BatchCreateSerializer, BatchSerializer, batch_response
from hits.models import Batch
from hits.preview import batch_preview


class BatchPreviewSerializer(serializers.Serializer[Any]):
    step = serializers.IntegerField()
    backend = serializers.CharField()
    targets = serializers.IntegerField(help_text="targets the batch would have HITs for")
    hits = serializers.IntegerField()
    assignments = serializers.IntegerField(help_text="assignments over all its HITs")
    assignments_per_hit = serializers.IntegerField()
    with_fee = serializers.BooleanField(help_text="whether the crowd takes a fee (MTurk) or not (the local queue)")
    reward = serializers.DecimalField(max_digits=6, decimal_places=2, help_text="dollars per assignment")
    rewards_total = serializers.DecimalField(max_digits=12, decimal_places=2)
    fees_total = serializers.DecimalField(max_digits=12, decimal_places=2)
    total = serializers.DecimalField(max_digits=12, decimal_places=2)
    large_hits = serializers.IntegerField(help_text="HITs of 10 or more assignments (MTurk's 40 % fee)")
    cost_per_assignment = serializers.DecimalField(max_digits=8, decimal_places=2, allow_null=True)
    median_seconds = serializers.FloatField(allow_null=True, help_text="measured median seconds per assignment")
    hourly_wage = serializers.DecimalField(max_digits=8, decimal_places=2, allow_null=True)
    target_hourly_wage = serializers.DecimalField(max_digits=8, decimal_places=2)
    reward_for_target_wage = serializers.DecimalField(max_digits=8, decimal_places=2, allow_null=True)


class BatchCloneSerializer(serializers.Serializer[Any]):
    targets = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        allow_empty=False,
        help_text="target ids; left out, every target waiting for the step outside open batches",
    )
    backend = serializers.ChoiceField(choices=backend_choices(), required=False, help_text="left out: the batch's")
    force = serializers.BooleanField(
        default=False, help_text="generate even for candidates already in an open batch of the step"
    )


def _generation_arguments(data: dict[str, Any]) -> dict[str, Any]:
    # What the batch shows workers changes neither its HITs nor their cost.
    data.pop("design", None)
    minutes = data.pop("assignment_minutes", None)
    if minutes is not None:
        data["assignment_duration"] = timedelta(minutes=minutes)
    return data


class BatchPreviewApi(APIView):
    """What ``POST /api/batches/`` would create with the same body, and what it would cost: nothing is created."""

    permission_classes = [IsResearcher]

    @extend_schema(request=BatchCreateSerializer, responses={200: BatchPreviewSerializer})
    def post(self, request: Request) -> Response:
        given = BatchCreateSerializer(data=request.data, context={"request": request})
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        # A dry run of creating a batch, so the role that creates one, as on the batches page;
        # another's benchmark reads as unknown.
        require(request.user, data["benchmark"], Role.EDITOR)
        try:
            preview = batch_preview(**_generation_arguments(data))
        except services.HitsGenerationError as error:
            raise ValidationError({"non_field_errors": [str(error)]}) from error
        return Response(BatchPreviewSerializer(preview.as_dict()).data)


class BatchCloneApi(APIView):
    """A new batch with this batch's settings (step, seed, assignments, reward, durations, texts,
    qualifications, review policy) for other targets or on another backend."""

    permission_classes = [IsResearcher]

    @extend_schema(request=BatchCloneSerializer, responses={201: BatchSerializer})
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.EDITOR, pk=pk)
        given = BatchCloneSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            clone = services.batch_clone(
                batch=batch,
                created_by=request.user if isinstance(request.user, User) else None,
                **given.validated_data,
            )
        except services.HitsGenerationError as error:
            raise ValidationError({"non_field_errors": [str(error)]}) from error
        return batch_response(clone, status_code=status.HTTP_201_CREATED)
