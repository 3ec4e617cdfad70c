"""The Prolific study page (docs/design.md §4): where a batch's study sends its participants.

Prolific opens ``/prolific/study/<public token>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…`` in a tab.
The page gives the participant one HIT of the batch (``assignment_accept_participant``) and shows
the same annotator page as the local queue; the answers are stored through the same
``assignment_submit``, and the participant is then sent to Prolific's completion page with the
study's completion code. Opened without the parameters (Prolific's preview), it shows a HIT
read-only.

The ids in the query are not trusted on their own: the answers are stored unconfirmed and count
for nothing until a sync finds the session among the study's submissions under the same
participant (``crowds.services.sync.batch_sync``), and nothing is paid before that.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from crowdlex.middleware import content_security_policy, never_cached
from crowds.prolific.client import NAME, completion_url
from crowds.services import CrowdActionRefused, assignment_accept_participant
from crowds.services.participants import hit_for_participant, participant_binding
from crowds.services.throttles import CrowdBindingThrottle, crowd_page_throttled, refused_by
from hits.models import HIT, SUBMITTED_STATUSES, Assignment, Batch, BatchStatus
from hits.services import AnswersInvalid, FlagInvalid, SubmissionRefused, assignment_submit, hit_flag_set
from hits.views.annotator import hit_page_context, posted_answers, posted_flag, posted_seconds

# Prolific's ids are 24 hexadecimal characters; anything outside this is not from Prolific.
_ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
_TOKEN_SALT = "hits.prolific.assignment"
FLAG_FIELD = "flag"


def _policy(response: HttpResponse) -> HttpResponse:
    """After the form is posted the page redirects to Prolific's completion page: a browser applies
    ``form-action`` to that redirect too, so Prolific's origin is allowed there."""
    parts = urlsplit(settings.PROLIFIC_COMPLETION_URL)
    response["Content-Security-Policy"] = content_security_policy(
        form_action=["'self'", f"{parts.scheme}://{parts.netloc}"]
    )
    response["Referrer-Policy"] = "no-referrer"
    return response


def _message(request: HttpRequest, text: str, *, status: int) -> HttpResponse:
    return _policy(render(request, "crowds/message.html", {"message": text}, status=status))


def _sign(assignment: Assignment) -> str:
    return signing.dumps({"a": assignment.pk, "x": assignment.external_id}, salt=_TOKEN_SALT)


def _page(
    request: HttpRequest,
    batch: Batch,
    hit_id: int,
    *,
    assignment: Assignment | None,
    selected: dict[int, str] | None = None,
    missing: list[int] | None = None,
    error: str = "",
    flag_error: str = "",
    flag_sent: bool = False,
    status: int = 200,
    extra: Mapping[str, Any] | None = None,
) -> HttpResponse:
    context: dict[str, Any] = hit_page_context(
        hit_id=hit_id,
        assignment=assignment,
        selected=selected,
        missing=missing or (),
        error=error,
        flag_error=flag_error,
    )
    action = reverse("prolific-study", kwargs={"token": batch.public_token})
    context.update(
        {
            "form_action": action,
            "flag_action": action,
            "return_action": "",
            "token": _sign(assignment) if assignment is not None else "",
            "flag_sent": flag_sent,
        }
    )
    context.update(extra or {})
    return _policy(render(request, "crowds/prolific/study.html", context, status=status))


def prolific_preview_page(request: HttpRequest, hit: HIT, *, extra: Mapping[str, Any]) -> HttpResponse:
    """The study page as Prolific's preview opens it (no participant), showing ``hit``, for a
    researcher's preview of any batch, published or not; it writes nothing (docs/design.md §4.1)."""
    return _page(request, hit.batch, hit.pk, assignment=None, extra=extra)


def _complete(batch: Batch) -> HttpResponse:
    """Back to Prolific with the study's completion code: Prolific then lists the submission as
    awaiting review, which is what a sync confirms the saved work against."""
    return _policy(HttpResponseRedirect(completion_url(str(batch.external.get("completion_code", "")))))


def _published_batch(**lookup: Any) -> Batch:
    """The batch of a study page: a Prolific batch whose study exists; anything else is 404, as for a
    missing one."""
    batch = get_object_or_404(Batch, backend=NAME, **lookup)
    if batch.status == BatchStatus.DRAFT or not batch.external.get("study_id"):
        raise Http404("No study matches the given query.")
    return batch


# Prolific links participants here from its own site, and participants have no account: nothing
# rests on a cookie or a session. The form carries a token signed with SECRET_KEY naming the one
# assignment it may submit (its session), so a forged post can submit nothing the sender did not
# open themselves. Hence csrf_exempt on this view only, as for the MTurk page.
@csrf_exempt
@never_cached
@require_http_methods(["GET", "POST"])
@crowd_page_throttled
def prolific_study(request: HttpRequest, token: str) -> HttpResponse:
    """The study page of a published batch, found by its random public token (docs/design.md §4). A
    closed batch is 404 except to a session reloading the assignment it was given while the study was
    open, and to the form that assignment's page signed; a preview writes nothing."""
    batch = _published_batch(public_token=token)
    if request.method == "POST":
        return _flag(request, batch) if FLAG_FIELD in request.POST else _submit(request, batch)
    open_batch = batch.status == BatchStatus.OPEN
    participant = request.GET.get("PROLIFIC_PID", "")
    if not participant:
        if not open_batch:
            raise Http404("No study matches the given query.")
        return _preview(request, batch)
    study = request.GET.get("STUDY_ID", "")
    session = request.GET.get("SESSION_ID", "")
    if not all(_ID.match(value) for value in (participant, study, session)):
        return _message(request, "This page was opened without valid Prolific parameters.", status=400)
    if study != batch.external.get("study_id"):
        return _message(request, "This link does not belong to this study. Please return it on Prolific.", status=400)
    known = participant_binding(batch=batch, participant_id=participant, session_id=session, kind="prolific")
    if known is None:
        if not open_batch:
            raise Http404("No study matches the given query.")
        # A first visit writes a pending binding (a worker and an assignment row): bounded per address.
        refusal = refused_by(CrowdBindingThrottle, request)
        if refusal is not None:
            return refusal
    try:
        assignment = known or assignment_accept_participant(batch=batch, participant_id=participant, session_id=session)
    except CrowdActionRefused as refusal:
        return _message(request, str(refusal), status=409)
    if assignment.status in SUBMITTED_STATUSES:
        # Saved already (a reload, or the way back to Prolific did not go through): send them again.
        return _complete(batch)
    return _page(request, batch, assignment.hit_id, assignment=assignment)


@csrf_exempt
@never_cached
@require_http_methods(["GET", "POST"])
@crowd_page_throttled
def prolific_study_by_id(request: HttpRequest, batch_id: int) -> HttpResponse:
    """The URL studies published before public tokens sent participants to (``/prolific/study/<database
    id>/``): an open study is sent on to its token URL, query and method kept (307); anything else is
    404, so counting ids finds nothing."""
    batch = _published_batch(pk=batch_id)
    if batch.status != BatchStatus.OPEN:
        raise Http404("No study matches the given query.")
    target = reverse("prolific-study", kwargs={"token": batch.public_token})
    query = request.META.get("QUERY_STRING", "")
    response = HttpResponseRedirect(f"{target}?{query}" if query else target)
    response.status_code = 307
    return _policy(response)


def _preview(request: HttpRequest, batch: Batch) -> HttpResponse:
    first = batch.hits.order_by("id").first()
    if first is None:
        return _message(request, "This study has no work yet.", status=404)
    return _page(request, batch, first.pk, assignment=None)


def _signed(request: HttpRequest, batch: Batch) -> Assignment | HttpResponse:
    try:
        data = signing.loads(request.POST.get("token", ""), salt=_TOKEN_SALT)
        assignment = Assignment.objects.select_related("hit__batch", "worker").get(pk=data["a"], hit__batch=batch)
    except (signing.BadSignature, KeyError, TypeError, Assignment.DoesNotExist):
        return _message(request, "This form is not valid for this study. Please reload the page.", status=403)
    if assignment.external_id != data.get("x"):
        return _message(request, "This form belongs to an earlier session. Please reload the page.", status=403)
    return assignment


def _flag(request: HttpRequest, batch: Batch) -> HttpResponse:
    assignment = _signed(request, batch)
    if isinstance(assignment, HttpResponse):
        return assignment
    try:
        hit_flag_set(assignment=assignment, **posted_flag(request.POST))
    except FlagInvalid as invalid:
        return _page(
            request, batch, assignment.hit_id, assignment=assignment, flag_error=str(invalid.message), status=400
        )
    return _page(request, batch, assignment.hit_id, assignment=assignment, flag_sent=True)


def _submit(request: HttpRequest, batch: Batch) -> HttpResponse:
    assignment = _signed(request, batch)
    if isinstance(assignment, HttpResponse):
        return assignment
    answers = posted_answers(request.POST)
    try:
        assignment_submit(assignment=assignment, answers=answers, seconds_on_page=posted_seconds(request.POST))
    except AnswersInvalid as invalid:
        return _page(
            request,
            batch,
            assignment.hit_id,
            assignment=assignment,
            selected=answers,
            missing=invalid.missing,
            error=str(invalid.message),
            status=400,
        )
    except SubmissionRefused as refusal:
        return _message(request, f"{refusal.message} Please return the study on Prolific.", status=409)
    return _complete(batch)


__all__ = ["hit_for_participant", "prolific_study"]


def prolific_public_preview_url(batch: Batch, hit: HIT) -> str:
    """The study's entry page once the study is on Prolific, or ""."""
    return reverse("prolific-study", kwargs={"token": batch.public_token}) if batch.external.get("study_id") else ""
