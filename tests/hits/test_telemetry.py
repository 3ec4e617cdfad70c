"""The page's telemetry as the server checks it, without a database (hits.telemetry)."""

import json

import pytest

from hits.telemetry import (
    MAX_ITEMS,
    MAX_JSON_LENGTH,
    MAX_PASTES,
    Telemetry,
    TelemetryInvalid,
    telemetry_from_form,
    telemetry_parse,
)

PAGE = {
    "v": 1,
    "ms_to_first_answer": 5200,
    "item_ms": [5200, 1800, 2400],
    "pointer": 4,
    "touch": 0,
    "key": 3,
    "hidden": 1,
    "away_ms": 40000,
    "away_answering_ms": 35000,
    "copies": 1,
    "pastes": [12],
    "typed_keys": 9,
    "typed_chars": 21,
    "largest_insert": 1,
    "inserts": 9,
    "blocked": 0,
    "loads": 2,
}


def test_what_the_page_sends_reads_back_typed_and_stores_as_it_came() -> None:
    telemetry = telemetry_parse(PAGE)
    assert telemetry.item_ms == (5200, 1800, 2400)
    assert telemetry.input_events == 7 and telemetry.pasted_chars == 12
    assert telemetry.as_dict() == PAGE
    assert Telemetry.from_stored(telemetry.as_dict()) == telemetry


def test_missing_fields_take_their_defaults_and_whole_floats_are_counts() -> None:
    telemetry = telemetry_parse({"pointer": 3.0})
    assert telemetry == Telemetry(pointer=3)
    assert telemetry.ms_to_first_answer is None and telemetry.loads == 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "telemetry must be an object"),
        ({"text": "the answer"}, "unknown fields: text"),
        ({"v": 2}, "telemetry.v must be 1"),
        ({"key": -1}, "telemetry.key must be between 0"),
        ({"key": 1.5}, "telemetry.key must be a whole number"),
        ({"key": True}, "telemetry.key must be a whole number"),
        ({"key": "3"}, "telemetry.key must be a whole number"),
        ({"away_ms": 10**12}, "telemetry.away_ms must be between 0"),
        ({"item_ms": "1,2"}, "telemetry.item_ms must be a list"),
        ({"item_ms": [1] * (MAX_ITEMS + 1)}, f"at most {MAX_ITEMS} numbers"),
        ({"pastes": [1] * (MAX_PASTES + 1)}, f"at most {MAX_PASTES} numbers"),
        ({"pastes": ["pasted words"]}, r"telemetry.pastes\[0\] must be a whole number"),
        ({"away_ms": 10, "away_answering_ms": 20}, "cannot exceed telemetry.away_ms"),
    ],
)
def test_anything_else_is_refused_with_the_field_named(raw: object, message: str) -> None:
    with pytest.raises(TelemetryInvalid, match=message):
        telemetry_parse(raw)


def test_the_form_field_is_optional_but_when_sent_must_be_bounded_json() -> None:
    assert telemetry_from_form(None) is None
    assert telemetry_from_form("  ") is None
    assert telemetry_from_form(json.dumps(PAGE)) == telemetry_parse(PAGE)
    with pytest.raises(TelemetryInvalid, match="not valid JSON"):
        telemetry_from_form("{pointer: 1")
    with pytest.raises(TelemetryInvalid, match="longer than"):
        telemetry_from_form(" " * (MAX_JSON_LENGTH + 1) + "{}")
