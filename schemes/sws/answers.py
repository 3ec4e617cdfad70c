"""What an annotator's answer to a sentence is in Smart Word Suggestions, and its checks.

The page posts (and the work API takes) one answer per sentence, as JSON or an object::

    {"targets": [{"start": 10, "end": 17, "suggestions": "apparent; clear", "type": "refine-usage"}],
     "discard": ""}

``start`` and ``end`` are character offsets in the sentence (end-exclusive), ``suggestions`` a list
or one string separated by ``;``, ``type`` refine-usage or diversify-expression (or 1 / 2, as the
released files write it). ``discard`` gives the reason a sentence with errors is set aside; it then
needs no targets. Anything else is refused with a message that names the target.
"""

from __future__ import annotations

from typing import Any

from schemes.base import AnswerRefused, answer_object
from schemes.sws.merge import TYPE_CODES, TYPE_NAMES

MAX_TARGETS = 50
MAX_SUGGESTIONS = 10
MAX_SUGGESTION_LENGTH = 100
MAX_REASON_LENGTH = 500
MARKED, DISCARDED = "marked", "discarded"


def _suggestions(raw: Any, number: int, target: str) -> list[str]:
    if isinstance(raw, str):
        raw = raw.split(";")
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise AnswerRefused(f"Target {number}: give the suggestions as text separated by ';'.")
    found: dict[str, str] = {}
    for suggestion in (item.strip() for item in raw):
        if suggestion:
            found.setdefault(suggestion.casefold(), suggestion)
    if not found:
        raise AnswerRefused(f"Target {number} (“{target}”) has no suggestion: type one or more, separated by ';'.")
    if len(found) > MAX_SUGGESTIONS:
        raise AnswerRefused(f"Target {number}: give at most {MAX_SUGGESTIONS} suggestions.")
    for suggestion in found.values():
        if len(suggestion) > MAX_SUGGESTION_LENGTH:
            raise AnswerRefused(f"Target {number}: a suggestion is longer than {MAX_SUGGESTION_LENGTH} characters.")
        if suggestion.casefold() == target.casefold():
            raise AnswerRefused(f"Target {number}: “{suggestion}” is the target itself; suggest something else.")
    return list(found.values())


def _type(raw: Any, number: int) -> str:
    if isinstance(raw, int) and not isinstance(raw, bool) and raw in TYPE_NAMES:
        return TYPE_NAMES[raw]
    if isinstance(raw, str) and raw in TYPE_CODES:
        return raw
    raise AnswerRefused(f"Target {number}: choose its type, refine-usage or diversify-expression.")


def _target(raw: Any, number: int, sentence: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise AnswerRefused(f"Target {number} is not an object with start, end, suggestions and type.")
    start, end = raw.get("start"), raw.get("end")
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (start, end)):
        raise AnswerRefused(f"Target {number}: start and end must be character offsets in the sentence.")
    assert isinstance(start, int) and isinstance(end, int)
    if not 0 <= start < end <= len(sentence) or not sentence[start:end].strip():
        raise AnswerRefused(f"Target {number}: select a word or phrase of the sentence.")
    # The span is the selected words, without the spaces around them.
    start += len(sentence[start:end]) - len(sentence[start:end].lstrip())
    end -= len(sentence[start:end]) - len(sentence[start:end].rstrip())
    text = sentence[start:end]
    return {
        "start": start,
        "end": end,
        "text": text,
        "suggestions": _suggestions(raw.get("suggestions"), number, text),
        "type": _type(raw.get("type"), number),
    }


def clean_answer(raw: Any, *, sentence: str, min_targets: int) -> tuple[str, dict[str, Any]]:
    """(``MARKED`` or ``DISCARDED``, the answer's data) or ``AnswerRefused``."""
    raw = answer_object(raw, what="the targets you marked")
    reason = raw.get("discard") or ""
    if not isinstance(reason, str) or len(reason) > MAX_REASON_LENGTH:
        raise AnswerRefused(
            f"The reason for discarding the sentence must be text of at most {MAX_REASON_LENGTH} characters."
        )
    raw_targets = raw.get("targets") or []
    if not isinstance(raw_targets, list):
        raise AnswerRefused("The targets must be a list.")
    if len(raw_targets) > MAX_TARGETS:
        raise AnswerRefused(f"Mark at most {MAX_TARGETS} targets in one sentence.")
    targets = [_target(target, number, sentence) for number, target in enumerate(raw_targets, start=1)]
    spans = [(target["start"], target["end"]) for target in targets]
    if len(set(spans)) < len(spans):
        raise AnswerRefused("The same words are marked twice: give all their suggestions in one target.")
    reason = reason.strip()
    if not reason and len(targets) < min_targets:
        raise AnswerRefused(
            f"Mark at least {min_targets} targets (you marked {len(targets)}), "
            "or discard the sentence with a reason if it has errors."
        )
    return (DISCARDED if reason else MARKED), {"targets": targets, "discard": reason}
