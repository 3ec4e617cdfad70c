"""The toy panel's page: a member arrives with their panel id and submission id in the URL, works on
the HIT here and, once the answers are saved, hands the work in on the panel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from crowds.interface import CrowdActionRefused
from crowds.services import assignment_accept_remote
from crowds.services.publishing import remote_binding
from hits.models import HIT, RemoteHIT
from hits.services import AnswersInvalid, SubmissionRefused, assignment_submit
from hits.views.annotator import hit_page_context, posted_answers, posted_seconds
from tests.crowds.toy.panel import PANEL


def _page(request: HttpRequest, hit: HIT, *, assignment: Any, extra: Mapping[str, Any], status: int = 200) -> Any:
    context = hit_page_context(hit_id=hit.pk, assignment=assignment)
    action = reverse("toypanel-hit", kwargs={"token": hit.public_token}) + "?" + request.GET.urlencode()
    context.update({"form_action": action, "flag_action": "", "return_action": "", **extra})
    return render(request, "hits/assignment.html", context, status=status)


def toy_preview_page(request: HttpRequest, hit: HIT, extra: Mapping[str, Any]) -> HttpResponse:
    return _page(request, hit, assignment=None, extra=extra)


@csrf_exempt
def toy_hit(request: HttpRequest, token: str) -> HttpResponse:
    hit = get_object_or_404(HIT.objects.select_related("batch"), public_token=token, batch__backend="toypanel")
    worker, submission = request.GET.get("member", ""), request.GET.get("submission", "")
    posting = RemoteHIT.objects.filter(hit=hit, round=0).values_list("external_id", flat=True).first() or ""
    if not worker or not submission or not posting:
        return HttpResponse("Open this page from the panel.", status=400)
    try:
        assignment = remote_binding(
            hit=hit, worker_external_id=worker, assignment_external_id=submission
        ) or assignment_accept_remote(
            hit=hit, worker_external_id=worker, assignment_external_id=submission, hit_external_id=posting
        )
    except CrowdActionRefused as refusal:
        return HttpResponse(str(refusal), status=409)
    if request.method != "POST":
        return _page(request, hit, assignment=assignment, extra={})
    try:
        assignment_submit(
            assignment=assignment, answers=posted_answers(request.POST), seconds_on_page=posted_seconds(request.POST)
        )
    except (AnswersInvalid, SubmissionRefused) as invalid:
        return HttpResponse(str(invalid.message), status=400)
    PANEL.hand_in(submission=submission, worker=worker, posting=posting, at=timezone.now())
    return HttpResponse("Saved: hand the work in on the panel.")
