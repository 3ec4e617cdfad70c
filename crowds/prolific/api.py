"""Prolific's publish options in the API's body: the study's estimated time and rejection category."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from crowds.prolific.client import REJECTION_CATEGORIES

OPTIONS = ("estimated_minutes", "rejection_category")


def publish_api_fields() -> dict[str, serializers.Field]:
    return {
        "estimated_minutes": serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=7 * 24 * 60,
            help_text="Prolific: the study's estimated completion time",
        ),
        "rejection_category": serializers.ChoiceField(
            choices=list(REJECTION_CATEGORIES), required=False, help_text="Prolific: the category its rejections carry"
        ),
    }


def publish_api_options(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: data[key] for key in OPTIONS if data.get(key) is not None}
