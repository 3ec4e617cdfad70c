"""MTurk's publish options in the API's body: the endpoint and the worker qualifications."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from crowds.mturk.client import MAX_APPROVED_HITS, PRODUCTION, SANDBOX, Qualifications


class QualificationsIn(serializers.Serializer):
    approval_rate = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=100)
    locale = serializers.CharField(required=False, allow_null=True, max_length=2)
    approved_hits = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_APPROVED_HITS)


def publish_api_fields() -> dict[str, serializers.Field]:
    return {
        "environment": serializers.ChoiceField(
            choices=[SANDBOX, PRODUCTION], required=False, help_text="MTurk only; default: the batch's own endpoint"
        ),
        "qualifications": QualificationsIn(
            required=False, help_text="MTurk: replaces the batch's; a null turns one off"
        ),
    }


def publish_api_options(data: Mapping[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if data.get("environment") is not None:
        options["sandbox"] = data["environment"] == SANDBOX
    if data.get("qualifications") is not None:
        options["qualifications"] = {key: data["qualifications"].get(key) for key in Qualifications.KEYS}
    return options
