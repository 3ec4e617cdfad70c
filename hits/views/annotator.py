"""The annotator's side of the local queue: work home, claim next, the HIT page, return."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Worker
from annotation.roles import is_annotator, is_researcher
from annotation.services import worker_for_user
from crowdlex.throttling import ClaimThrottle, SubmitThrottle, throttled
from hits import selectors
from hits.models import Assignment, AssignmentStatus
from hits.services import AnswersInvalid, SubmissionRefused, assignment_claim_next, assignment_return, assignment_submit

# Radio groups on the page are named "item-<HITItem id>".
ANSWER_FIELD_PREFIX = "item-"
HISTORY_LENGTH = 50


def annotator_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Log in first; annotators (and researchers trying their own HITs) may work, others get 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (is_annotator(request.user) or is_researcher(request.user)):
            raise PermissionDenied("This page is for annotators.")
        return view(request, *args, **kwargs)

    return wrapper


def _worker(request: HttpRequest) -> Worker:
    return worker_for_user(user=request.user)  # type: ignore[arg-type]


def posted_answers(data: QueryDict) -> dict[int, str]:
    """Answers from the page's radio groups, HITItem id -> value."""
    answers: dict[int, str] = {}
    for key in data:
        suffix = key.removeprefix(ANSWER_FIELD_PREFIX)
        if key.startswith(ANSWER_FIELD_PREFIX) and suffix.isdigit():
            answers[int(suffix)] = data.get(key, "")
    return answers


def posted_seconds(data: QueryDict) -> float | None:
    """The page's own measure of time on page, if it sent a usable one (the service bounds it)."""
    try:
        seconds = float(data.get("seconds_on_page", ""))
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) else None


def render_assignment(
    request: HttpRequest,
    assignment: Assignment,
    *,
    selected: Mapping[int, str] | None = None,
    missing: Iterable[int] = (),
    error: str = "",
    status: int = 200,
    extra: Mapping[str, Any] | None = None,
) -> HttpResponse:
    """Render ``hits/assignment.html``; ``extra`` lets other backends (MTurk) set the form target."""
    editable = assignment.status in (AssignmentStatus.CLAIMED, AssignmentStatus.EXPIRED)
    if selected is None and not editable:
        selected = selectors.assignment_answers(assignment=assignment)
    context: dict[str, Any] = {
        "assignment": assignment,
        "page": selectors.hit_page(hit_id=assignment.hit_id, selected=selected, missing=missing),
        "editable": editable,
        "preview": False,
        "form_action": reverse("work-assignment", args=[assignment.pk]),
        "return_action": reverse("work-return", args=[assignment.pk])
        if assignment.status == AssignmentStatus.CLAIMED
        else "",
        "error": error,
    }
    context.update(extra or {})
    return render(request, "hits/assignment.html", context, status=status)


def _go_to_next(request: HttpRequest, worker: Worker) -> HttpResponse:
    assignment = assignment_claim_next(worker=worker)
    if assignment is None:
        return redirect("work-next")
    return redirect("work-assignment", assignment.pk)


@annotator_required
def work_home(request: HttpRequest) -> HttpResponse:
    worker = _worker(request)
    context = {
        "worker": worker,
        "counts": selectors.work_counts(worker=worker),
        "live": selectors.live_claim(worker=worker),
        "history": list(selectors.work_history(worker=worker)[:HISTORY_LENGTH]),
        "history_length": HISTORY_LENGTH,
    }
    return render(request, "hits/work_home.html", context)


@annotator_required
@require_http_methods(["GET", "POST"])
@throttled(ClaimThrottle)
def work_next(request: HttpRequest) -> HttpResponse:
    """POST claims the next HIT (or resumes the one in progress) and opens it; GET, where
    POST sends the annotator when there is nothing to claim, says so (it never claims)."""
    if request.method == "POST":
        return _go_to_next(request, _worker(request))
    return render(request, "hits/no_work.html", {})


@annotator_required
@require_http_methods(["GET", "POST"])
@throttled(SubmitThrottle)
def work_assignment(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """GET shows the HIT; POST submits it and moves on to the next HIT."""
    assignment = selectors.assignment_for_page(assignment_id=assignment_id, user_id=request.user.pk)
    if assignment is None:
        # Someone else's assignment is indistinguishable from a missing one.
        raise Http404("No such assignment.")
    if request.method == "GET":
        return render_assignment(request, assignment)

    answers = posted_answers(request.POST)
    try:
        assignment_submit(assignment=assignment, answers=answers, seconds_on_page=posted_seconds(request.POST))
    except AnswersInvalid as error:
        return render_assignment(
            request, assignment, selected=answers, missing=error.missing, error=str(error.message), status=400
        )
    except SubmissionRefused as error:
        messages.error(request, str(error.message))
        return redirect("work-home")
    messages.success(request, "Thank you, your answers are saved.")
    return _go_to_next(request, assignment.worker)


@annotator_required
@require_POST
def work_return(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = selectors.assignment_for_page(assignment_id=assignment_id, user_id=request.user.pk)
    if assignment is None:
        raise Http404("No such assignment.")
    try:
        assignment_return(assignment=assignment)
    except SubmissionRefused as error:
        messages.error(request, str(error.message))
    else:
        messages.info(request, "You returned the HIT; it goes back to the pool for someone else.")
    return redirect("work-home")
