"""The MTurk ExternalQuestion page (docs/design.md §4): the annotator's page, inside MTurk's frame.

MTurk opens ``/mturk/hit/<public token>/?assignmentId=…&hitId=…&workerId=…&turkSubmitTo=…`` in an
iframe. While the worker previews, ``assignmentId`` is ``ASSIGNMENT_ID_NOT_AVAILABLE`` and the
HIT is shown read-only. Once accepted, the worker's answers are stored through the same
``assignment_submit`` as the local queue, and then the page sends ``assignmentId`` to
``turkSubmitTo/mturk/externalSubmit`` so MTurk records the assignment as submitted.

The ids in the query are not trusted on their own: the answers are stored unconfirmed and count
for nothing until a sync finds the assignment in MTurk's list under the same worker and HIT
(``crowds.services.sync.batch_sync``), and nothing is paid before that.

The page's flag form posts here too (with a ``flag`` field): the flag is stored and the page
shown again.
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
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from crowdlex.middleware import content_security_policy, never_cached
from crowds.mturk.client import NAME, PREVIEW_ASSIGNMENT_ID
from crowds.services import CrowdActionRefused, assignment_accept_remote
from crowds.services.publishing import remote_binding
from crowds.services.throttles import CrowdBindingThrottle, crowd_page_throttled, refused_by
from hits.models import HIT, SUBMITTED_STATUSES, Assignment, Batch, BatchStatus, RemoteHIT
from hits.services import (
    AnswersInvalid,
    FlagInvalid,
    PledgeMissing,
    SubmissionRefused,
    assignment_submit,
    hit_flag_set,
)
from hits.telemetry import TelemetryInvalid
from hits.views.annotator import (
    ALREADY_SUBMITTED,
    hit_page_context,
    posted_answers,
    posted_flag,
    posted_pledge,
    posted_seconds,
    posted_telemetry,
)

# MTurk ids are short upper-case alphanumerics; anything else is not from MTurk.
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TOKEN_SALT = "hits.mturk.assignment"
# A POST with this field is a flag (the flag form), not the answers.
FLAG_FIELD = "flag"


def _frameable(response: HttpResponse) -> HttpResponse:
    """Only this page may be framed, and only by MTurk's sites (X-Frame-Options stays DENY elsewhere);
    its form may post to MTurk's submit origins (the finished assignment goes there)."""
    response["Content-Security-Policy"] = content_security_policy(
        frame_ancestors=["'self'", *settings.MTURK_FRAME_ANCESTORS],
        form_action=["'self'", *settings.MTURK_SUBMIT_ORIGINS],
    )
    response["Referrer-Policy"] = "no-referrer"
    return response


def _submit_origin(raw: str) -> str | None:
    """The turkSubmitTo origin if it is one of MTurk's (MTURK_SUBMIT_ORIGINS), else None.

    Checked so the page can never be made to post a worker's assignment anywhere else.
    """
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path not in {"", "/"}:
        return None
    origin = f"{parts.scheme}://{parts.netloc}"
    allowed = {value.rstrip("/") for value in settings.MTURK_SUBMIT_ORIGINS}
    return origin if origin in allowed else None


def _sign(assignment: Assignment, submit_origin: str) -> str:
    return signing.dumps({"a": assignment.pk, "x": assignment.external_id, "s": submit_origin}, salt=_TOKEN_SALT)


def _message(request: HttpRequest, text: str, *, status: int) -> HttpResponse:
    return _frameable(render(request, "crowds/message.html", {"message": text}, status=status))


def _page(
    request: HttpRequest,
    hit: HIT,
    *,
    assignment: Assignment | None,
    token: str = "",
    selected: dict[int, str] | None = None,
    missing: list[int] | None = None,
    error: str = "",
    flag_error: str = "",
    flag_sent: bool = False,
    status: int = 200,
    extra: Mapping[str, Any] | None = None,
) -> HttpResponse:
    context: dict[str, Any] = hit_page_context(
        hit_id=hit.pk,
        assignment=assignment,
        selected=selected,
        missing=missing or (),
        error=error,
        flag_error=flag_error,
    )
    action = reverse("mturk-hit", kwargs={"token": hit.public_token})
    context.update(
        {"form_action": action, "flag_action": action, "return_action": "", "token": token, "flag_sent": flag_sent}
    )
    context.update(extra or {})
    return _frameable(render(request, "crowds/mturk/hit.html", context, status=status))


def mturk_preview_page(request: HttpRequest, hit: HIT, *, extra: Mapping[str, Any]) -> HttpResponse:
    """The page MTurk frames while a worker previews ``hit`` (``assignmentId`` is
    ``ASSIGNMENT_ID_NOT_AVAILABLE``), for a researcher's preview of any batch, published or not;
    it writes nothing (docs/design.md §4.1)."""
    return _page(request, hit, assignment=None, extra=extra)


def _send_to_mturk(
    request: HttpRequest, assignment: Assignment, submit_origin: str, *, already_submitted: bool
) -> HttpResponse:
    context = {
        "assignment": assignment,
        "submit_url": f"{submit_origin}/mturk/externalSubmit",
        "heading": ALREADY_SUBMITTED if already_submitted else "Thank you, your answers are saved",
    }
    return _frameable(render(request, "crowds/mturk/submit.html", context))


def _published_hit(**lookup: Any) -> HIT:
    """The HIT a crowd page shows: an MTurk HIT with a posting; anything else is 404, as for a missing one."""
    hit = get_object_or_404(HIT.objects.select_related("batch", "target__context"), batch__backend=NAME, **lookup)
    if hit.batch.status == BatchStatus.DRAFT or not RemoteHIT.objects.filter(hit=hit).exists():
        raise Http404("No HIT matches the given query.")
    return hit


# The page lives in MTurk's iframe, so the browser treats every request to it as cross-site:
# the SameSite CSRF cookie is not sent with the POST and Django's CSRF check would refuse every
# worker. Nothing here rests on a cookie or a session either (no ambient authority for a forged
# request to borrow): the form carries a token signed with SECRET_KEY that names the one
# assignment it may submit and where the page may send it, so a POST can only submit the
# assignment whose page the sender opened. Hence csrf_exempt on this view only.
@csrf_exempt
@xframe_options_exempt
@never_cached
@require_http_methods(["GET", "POST"])
@crowd_page_throttled
def mturk_hit(request: HttpRequest, token: str) -> HttpResponse:
    """The page of a published HIT, found by its random public token (docs/design.md §4). A HIT of a
    closed batch is 404 except to a worker reloading an assignment bound while it was open, and to
    the form that assignment's page signed; a preview writes nothing."""
    hit = _published_hit(public_token=token)
    if request.method == "POST":
        return _flag(request, hit) if FLAG_FIELD in request.POST else _submit(request, hit)

    open_batch = hit.batch.status == BatchStatus.OPEN
    assignment_id = request.GET.get("assignmentId", "")
    if not assignment_id or assignment_id == PREVIEW_ASSIGNMENT_ID:
        if not open_batch:
            raise Http404("No HIT matches the given query.")
        return _page(request, hit, assignment=None)
    worker_id = request.GET.get("workerId", "")
    hit_external_id = request.GET.get("hitId", "")
    if not all(_ID.match(value) for value in (assignment_id, worker_id, hit_external_id)):
        return _message(request, "This page was opened without valid MTurk parameters.", status=400)
    submit_origin = _submit_origin(request.GET.get("turkSubmitTo", ""))
    if submit_origin is None:
        return _message(request, "This page was opened from an unknown site.", status=400)
    known = remote_binding(hit=hit, worker_external_id=worker_id, assignment_external_id=assignment_id)
    if known is None:
        if not open_batch:
            raise Http404("No HIT matches the given query.")
        # A first visit writes a pending binding (a worker and an assignment row): bounded per address.
        refusal = refused_by(CrowdBindingThrottle, request)
        if refusal is not None:
            return refusal
    try:
        assignment = known or assignment_accept_remote(
            hit=hit,
            worker_external_id=worker_id,
            assignment_external_id=assignment_id,
            hit_external_id=hit_external_id,
        )
    except CrowdActionRefused as refusal:
        return _message(request, str(refusal), status=409)
    if assignment.status in SUBMITTED_STATUSES:
        # Saved already (a reload, or the send to MTurk did not go through): send it again.
        return _send_to_mturk(request, assignment, submit_origin, already_submitted=True)
    return _page(request, hit, assignment=assignment, token=_sign(assignment, submit_origin))


@csrf_exempt
@xframe_options_exempt
@never_cached
@require_http_methods(["GET", "POST"])
@crowd_page_throttled
def mturk_hit_by_id(request: HttpRequest, hit_id: int) -> HttpResponse:
    """The URL HITs published before public tokens were framed at (``/mturk/hit/<database id>/``):
    a HIT that is published and still open (which MTurk itself shows to anyone) is sent on to its
    token URL, query and method kept (307); anything else is 404, so counting ids finds nothing."""
    hit = _published_hit(pk=hit_id)
    if hit.batch.status != BatchStatus.OPEN:
        raise Http404("No HIT matches the given query.")
    target = reverse("mturk-hit", kwargs={"token": hit.public_token})
    query = request.META.get("QUERY_STRING", "")
    response = HttpResponseRedirect(f"{target}?{query}" if query else target)
    response.status_code = 307
    return _frameable(response)


def _signed(request: HttpRequest, hit: HIT) -> tuple[Assignment, str, str] | HttpResponse:
    """The assignment, token and submit origin a posted form is signed for, or the refusal to send."""
    token = request.POST.get("token", "")
    try:
        data = signing.loads(token, salt=_TOKEN_SALT)
        assignment = Assignment.objects.select_related("hit__batch", "worker").get(pk=data["a"], hit=hit)
    except (signing.BadSignature, KeyError, TypeError, Assignment.DoesNotExist):
        return _message(request, "This form is not valid for this HIT. Please reload the page.", status=403)
    if assignment.external_id != data.get("x") or request.POST.get("assignmentId") != assignment.external_id:
        return _message(request, "This form belongs to an earlier assignment. Please reload the page.", status=403)
    submit_origin = str(data.get("s", ""))
    if _submit_origin(submit_origin) is None:
        return _message(request, "This form is not valid for this HIT. Please reload the page.", status=403)
    return assignment, token, submit_origin


def _flag(request: HttpRequest, hit: HIT) -> HttpResponse:
    signed = _signed(request, hit)
    if isinstance(signed, HttpResponse):
        return signed
    assignment, token, _ = signed
    try:
        hit_flag_set(assignment=assignment, **posted_flag(request.POST))
    except FlagInvalid as invalid:
        return _page(request, hit, assignment=assignment, token=token, flag_error=str(invalid.message), status=400)
    return _page(request, hit, assignment=assignment, token=token, flag_sent=True)


def _submit(request: HttpRequest, hit: HIT) -> HttpResponse:
    signed = _signed(request, hit)
    if isinstance(signed, HttpResponse):
        return signed
    assignment, token, submit_origin = signed
    already_submitted = assignment.status in SUBMITTED_STATUSES
    answers = posted_answers(request.POST)
    try:
        assignment = assignment_submit(
            assignment=assignment,
            answers=answers,
            seconds_on_page=posted_seconds(request.POST),
            telemetry=posted_telemetry(request.POST),
            pledged=posted_pledge(request.POST),
        )
    except (TelemetryInvalid, PledgeMissing) as invalid:
        return _page(
            request,
            hit,
            assignment=assignment,
            token=token,
            selected=answers,
            error=str(invalid.message),
            status=400,
        )
    except AnswersInvalid as invalid:
        return _page(
            request,
            hit,
            assignment=assignment,
            token=token,
            selected=answers,
            missing=invalid.missing,
            error=str(invalid.message),
            status=400,
        )
    except SubmissionRefused as refusal:
        return _message(request, f"{refusal.message} Please return the HIT.", status=409)
    return _send_to_mturk(request, assignment, submit_origin, already_submitted=already_submitted)


def mturk_public_preview_url(batch: Batch, hit: HIT) -> str:
    """MTurk's own preview of a published HIT (its ExternalQuestion page with no assignment), or ""."""
    if not RemoteHIT.objects.filter(hit=hit).exists():
        return ""
    page = reverse("mturk-hit", kwargs={"token": hit.public_token})
    return f"{page}?assignmentId={PREVIEW_ASSIGNMENT_ID}"
