"""A HIT in progress kept on the server, so another device resumes its answers and its clock
(docs/design.md §4, "Drafts across devices").

The time rule: each page view draws a random id when it opens and reports the active (visible)
milliseconds it has counted itself, a running total. The server keeps, per view, the largest total
that view reported; the assignment's time on page is the sum over views. A repeated or late report
adds nothing (a maximum, not a sum), so no period is counted twice, and two devices open at once
each add their own visible time. Each view is clipped to the batch's assignment duration, and the
sum to the time since the claim when it is read for a submission.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import Worker
from hits.models import Assignment, AssignmentDraft, AssignmentStatus
from hits.telemetry import TelemetryInvalid, telemetry_parse

VIEW_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
ANSWER_NAME = re.compile(r"^item-[A-Za-z0-9_-]{1,58}$")
# What the page keeps beside its answers: its telemetry so far (checked as a submission's is), the
# rows answered once (by position) and when the last of them was first answered.
STATE_FIELDS = frozenset({"telemetry", "first", "last_first_ms"})


class DraftInvalid(ValidationError):
    """A draft report that is not what the page sends; the message names the field."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="draft_invalid")


@dataclass(frozen=True)
class DraftReport:
    view: str
    ms: int
    answers: list[dict[str, str]]
    state: dict[str, Any]


def _whole(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) or value < 0:
        raise DraftInvalid(f"{name} must be a whole number of milliseconds, 0 or more, not {value!r}.")
    return int(value)


def draft_parse(raw: Any) -> DraftReport:
    """Check a report as the page sends it: ``{"view", "ms", "answers", "state"}``.

    Bounded: the whole object by ``DRAFT_MAX_BYTES`` once written as JSON, answers are
    ``{name, value}`` objects of the page's answer fields (``item-…``), the state's telemetry passes
    ``telemetry_parse``. A time beyond any assignment's is not refused here: it is clipped on save.
    """
    if not isinstance(raw, dict):
        raise DraftInvalid("The draft must be a JSON object.")
    size = len(json.dumps(raw, ensure_ascii=False).encode())
    if size > settings.DRAFT_MAX_BYTES:
        raise DraftInvalid(f"The draft is {size} bytes; at most {settings.DRAFT_MAX_BYTES} are kept (DRAFT_MAX_BYTES).")
    unknown = sorted(set(raw) - {"view", "ms", "answers", "state"})
    if unknown:
        raise DraftInvalid(f"The draft has unknown fields: {', '.join(map(str, unknown))[:200]}.")
    view = raw.get("view")
    if not isinstance(view, str) or not VIEW_ID.match(view):
        raise DraftInvalid("view must be the page view's id: 8 to 64 letters, digits, - or _.")
    ms = _whole("ms", raw.get("ms", 0))
    answers = raw.get("answers", [])
    if not isinstance(answers, list):
        raise DraftInvalid("answers must be a list of {name, value} objects.")
    for index, answer in enumerate(answers):
        if not (
            isinstance(answer, dict)
            and set(answer) == {"name", "value"}
            and all(isinstance(part, str) for part in answer.values())
        ):
            raise DraftInvalid(f"answers[{index}] must be an object of two strings, name and value.")
        if not ANSWER_NAME.match(answer["name"]):
            raise DraftInvalid(
                f"answers[{index}].name is {answer['name'][:70]!r}, not one of the page's answer fields (item-…)."
            )
    state = raw.get("state", {})
    if not isinstance(state, dict):
        raise DraftInvalid("state must be an object.")
    unknown = sorted(set(state) - STATE_FIELDS)
    if unknown:
        raise DraftInvalid(f"state has unknown fields: {', '.join(map(str, unknown))[:200]}.")
    if "telemetry" in state:
        try:
            state["telemetry"] = telemetry_parse(state["telemetry"]).as_dict()
        except TelemetryInvalid as error:
            raise DraftInvalid(f"state.{error.message}") from None
    first = state.get("first", [])
    if not isinstance(first, list) or not all(isinstance(row, int) and not isinstance(row, bool) for row in first):
        raise DraftInvalid("state.first must be a list of row positions.")
    if "last_first_ms" in state:
        state["last_first_ms"] = _whole("state.last_first_ms", state["last_first_ms"])
    return DraftReport(view=view, ms=ms, answers=answers, state=state)


def _duration_ms(assignment: Assignment) -> int:
    return int(assignment.hit.batch.assignment_duration.total_seconds() * 1000)


def draft_save(*, assignment_id: int, worker: Worker, report: DraftReport) -> AssignmentDraft:
    """Keep the latest answers of a live claim and add the report's view to its clock.

    Only the worker holding the claim may save it: anyone else's assignment, or one no longer
    claimed, raises ``Assignment.DoesNotExist`` and changes nothing. The assignment row is locked
    (``FOR UPDATE``) so two devices' saves are applied one after the other; a view's time is the
    largest it reported, clipped to the batch's assignment duration, so a repeat adds nothing. A
    draft holds at most ``DRAFT_MAX_VIEWS`` views; a further new view is refused (``DraftInvalid``).
    """
    with transaction.atomic():
        assignment = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("hit__batch")
            .get(pk=assignment_id, worker=worker, status=AssignmentStatus.CLAIMED)
        )
        draft = AssignmentDraft.objects.filter(assignment=assignment).first()
        if draft is None:
            draft = AssignmentDraft(assignment=assignment, worker=worker, views={})
        views = dict(draft.views)
        if report.view not in views and len(views) >= settings.DRAFT_MAX_VIEWS:
            raise DraftInvalid(
                f"This HIT was opened {len(views)} times already; no more page views are counted (DRAFT_MAX_VIEWS)."
            )
        ms = min(report.ms, _duration_ms(assignment))
        views[report.view] = max(int(views.get(report.view, 0)), ms)
        draft.views = views
        draft.answers = report.answers
        draft.state = report.state
        draft.save()
    return draft


def draft_milliseconds(*, views: dict[str, Any]) -> int:
    """The time on page the views add up to (the rule in this module's docstring)."""
    return sum(int(ms) for ms in views.values())


def draft_seconds(*, assignment: Assignment, now: datetime | None = None) -> float | None:
    """The server's time on page of an assignment, bounded by the time since its claim; None
    without a draft. The draft is read once (a submit's locking read loads it with the assignment)."""
    try:
        views = assignment.draft.views
    except AssignmentDraft.DoesNotExist:
        return None
    now = now or timezone.now()
    elapsed = max(0.0, (now - assignment.claimed_at).total_seconds())
    return min(draft_milliseconds(views=views) / 1000, elapsed)


def drafts_delete(*, assignment_ids: list[int]) -> int:
    """Drop the drafts of assignments that were submitted, returned or expired."""
    deleted, _ = AssignmentDraft.objects.filter(assignment_id__in=assignment_ids).delete()
    return deleted
