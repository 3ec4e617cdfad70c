"""What the annotator's page records of how a HIT was worked on: timings and counts, never the text.

The page (``static/hits/hit_page.js``) sends one small JSON object with a submission or a return;
:func:`telemetry_parse` is the one place that checks it, for the HTML form, the REST work API and the
MTurk page alike. Everything is bounded, so a forged object can neither grow a row nor hide text:
lists are short, numbers are whole and capped, and no field holds a string.

Why each figure (docs/quality.md): people pasting a language model's answer show pastes or text that
appears in one burst; people asking one in another tab leave the page between reading and
answering; scripts answer without any trusted pointer, touch or key event, or at a regular pace no
person keeps.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

VERSION = 1
# A claim lasts a week at most (hits.models.MAX_ASSIGNMENT_MINUTES); no duration may exceed it.
MAX_MS = 7 * 24 * 3600 * 1000
MAX_COUNT = 100_000
MAX_CHARS = 100_000
# Rows of one page (SWORDS has 12; a sentence-marking page a few dozen) and pastes kept.
MAX_ITEMS = 200
MAX_PASTES = 50
# The form field (a JSON string) is bounded before it is parsed.
MAX_JSON_LENGTH = 8_000


class TelemetryInvalid(ValidationError):
    """The telemetry sent with a submission is not what the page sends; the message names the field."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="telemetry_invalid")


@dataclass(frozen=True)
class Telemetry:
    """One assignment's interaction record. Durations are milliseconds the page was visible unless
    named ``away``; counts are of events the browser marked as trusted (``isTrusted``: made by a
    person's device, not by a script)."""

    # From the first view of the page (across reloads) to the first answered row; None: no row answered.
    ms_to_first_answer: int | None = None
    # Per row, in the order rows were first answered: the time since the previous row's first answer.
    item_ms: tuple[int, ...] = ()
    pointer: int = 0
    touch: int = 0
    key: int = 0
    # Times the page was hidden (another tab or app), time hidden in all, and the part of it before the last answer.
    hidden: int = 0
    away_ms: int = 0
    away_answering_ms: int = 0
    # Copy or cut events on the text being judged.
    copies: int = 0
    # Characters of each paste (or drop) into a text field.
    pastes: tuple[int, ...] = ()
    # Text fields: keys pressed in them, characters that went into them by typing or any insertion other
    # than a paste, the largest such insertion in one input event (a burst), and how many events inserted.
    typed_keys: int = 0
    typed_chars: int = 0
    largest_insert: int = 0
    inserts: int = 0
    # Copy and paste attempts the page refused (when the benchmark disables them).
    blocked: int = 0
    # Times the page was opened for this assignment (reloads add one each).
    loads: int = 1

    @property
    def input_events(self) -> int:
        return self.pointer + self.touch + self.key

    @property
    def pasted_chars(self) -> int:
        return sum(self.pastes)

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["item_ms"] = list(self.item_ms)
        data["pastes"] = list(self.pastes)
        return {"v": VERSION, **data}

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> Telemetry:
        """A stored row back as the object (it was checked when stored)."""
        return telemetry_parse(dict(data))


_COUNTS = ("pointer", "touch", "key", "hidden", "copies", "typed_keys", "inserts", "blocked", "loads")
_DURATIONS = ("away_ms", "away_answering_ms")
_CHARS = ("typed_chars", "largest_insert")
_FIELDS = frozenset(f.name for f in dataclasses.fields(Telemetry)) | {"v"}


def _whole(name: str, value: Any, maximum: int) -> int:
    # JSON has one number type: 3.0 is accepted as 3, 3.5 is not a count.
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise TelemetryInvalid(f"telemetry.{name} must be a whole number, not {value!r}.")
    if not 0 <= value <= maximum:
        raise TelemetryInvalid(f"telemetry.{name} must be between 0 and {maximum}, not {value!r}.")
    return int(value)


def _list(name: str, value: Any, *, length: int, maximum: int) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise TelemetryInvalid(f"telemetry.{name} must be a list of whole numbers.")
    if len(value) > length:
        raise TelemetryInvalid(f"telemetry.{name} may hold at most {length} numbers, not {len(value)}.")
    return tuple(_whole(f"{name}[{index}]", entry, maximum) for index, entry in enumerate(value))


def telemetry_parse(raw: Any) -> Telemetry:
    """Check an object as the page sends it and return it typed; ``TelemetryInvalid`` says what is wrong.

    Unknown fields are refused (a typo would otherwise drop a figure silently); missing ones take
    their defaults, so an older page's object still reads.
    """
    if not isinstance(raw, dict):
        raise TelemetryInvalid("telemetry must be an object.")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise TelemetryInvalid(f"telemetry has unknown fields: {', '.join(map(str, unknown))[:200]}.")
    if raw.get("v", VERSION) != VERSION:
        raise TelemetryInvalid(f"telemetry.v must be {VERSION}.")
    values: dict[str, Any] = {}
    for name in _COUNTS:
        if name in raw:
            values[name] = _whole(name, raw[name], MAX_COUNT)
    for name in _DURATIONS:
        if name in raw:
            values[name] = _whole(name, raw[name], MAX_MS)
    for name in _CHARS:
        if name in raw:
            values[name] = _whole(name, raw[name], MAX_CHARS)
    first = raw.get("ms_to_first_answer")
    if first is not None:
        values["ms_to_first_answer"] = _whole("ms_to_first_answer", first, MAX_MS)
    if "item_ms" in raw:
        values["item_ms"] = _list("item_ms", raw["item_ms"], length=MAX_ITEMS, maximum=MAX_MS)
    if "pastes" in raw:
        values["pastes"] = _list("pastes", raw["pastes"], length=MAX_PASTES, maximum=MAX_CHARS)
    telemetry = Telemetry(**values)
    if telemetry.away_answering_ms > telemetry.away_ms:
        raise TelemetryInvalid("telemetry.away_answering_ms cannot exceed telemetry.away_ms.")
    return telemetry


def telemetry_from_form(text: str | None) -> Telemetry | None:
    """The page's hidden ``telemetry`` field: None when absent or empty (no script ran), else checked."""
    if text is None or not text.strip():
        return None
    if len(text) > MAX_JSON_LENGTH:
        raise TelemetryInvalid(f"telemetry is longer than {MAX_JSON_LENGTH} characters.")
    try:
        raw = json.loads(text)
    except ValueError:
        raise TelemetryInvalid("telemetry is not valid JSON.") from None
    return telemetry_parse(raw)
