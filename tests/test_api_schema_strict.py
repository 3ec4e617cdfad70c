"""The schema states what validation enforces: an input its patterns and bounds allow is accepted, and
one validation refuses is outside them (a negative reward, an empty amount, a blank reason). The
fuzzer (tests/test_api_fuzz.py) checks every operation; these are the cases it found."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from crowdlex.schema import decimal_pattern


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _matches(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


@pytest.mark.parametrize(
    ("field", "accepted", "refused"),
    [
        (
            serializers.DecimalField(max_digits=6, decimal_places=2, min_value=0),
            ["0", "0.10", "9999.99", ".5", "12."],
            ["-1", "-0.10", "", ".", "10000", "0.001", "NaN"],
        ),
        (
            serializers.DecimalField(max_digits=6, decimal_places=2, min_value=Decimal("0.01")),
            ["0.01", "5", "9999.99"],
            ["0", "0.00", ".0", "-1", ""],
        ),
        (serializers.DecimalField(max_digits=4, decimal_places=2), ["-1.5", "99.99"], ["100", "", "-"]),
    ],
)
def test_a_decimals_pattern_is_what_the_field_accepts(
    field: serializers.DecimalField, accepted: list[str], refused: list[str]
) -> None:
    pattern = decimal_pattern(field)
    assert pattern is not None
    for text in accepted:
        assert _matches(pattern, text) and field.run_validation(text) is not None, text
    for text in refused:
        assert not _matches(pattern, text), text
        with pytest.raises(serializers.ValidationError):
            field.run_validation(text)


def test_a_negative_reward_is_outside_the_schema(schema: dict[str, Any]) -> None:
    reward = schema["components"]["schemas"]["BatchCreate"]["properties"]["reward"]
    assert not _matches(reward["pattern"], "-1.00") and _matches(reward["pattern"], "0.25")
    amount = schema["components"]["schemas"]["BonusIn"]["properties"]["amount"]
    assert not _matches(amount["pattern"], "") and not _matches(amount["pattern"], "0.00")


def test_text_that_may_not_be_blank_says_so(schema: dict[str, Any]) -> None:
    reason = schema["components"]["schemas"]["BonusIn"]["properties"]["reason"]
    assert reason["minLength"] == 1
    assert not _matches(reason["pattern"], "   ") and _matches(reason["pattern"], " thanks ")
    assert not _matches(reason["pattern"], "a\x00b")


def test_an_operation_without_an_upload_reads_json_and_an_upload_reads_multipart(schema: dict[str, Any]) -> None:
    assert list(schema["paths"]["/api/batches/"]["post"]["requestBody"]["content"]) == ["application/json"]
    upload = schema["paths"]["/api/benchmarks/{name}/import"]["post"]["requestBody"]["content"]
    assert list(upload) == ["multipart/form-data"]
    form = schema["components"]["schemas"][upload["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[1]]
    assert form["properties"]["file"]["format"] == "binary"


def test_signal_overrides_name_the_settings_there_are(schema: dict[str, Any]) -> None:
    overrides = schema["components"]["schemas"]["ReviewSettings"]["properties"]["signal_overrides"]
    assert overrides["additionalProperties"] is False
    assert overrides["properties"]["min_assignments"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 1_000_000,
        "multipleOf": 1,
    }
