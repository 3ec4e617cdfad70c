"""The annotator's side of the local queue: work home and its projects, claim next (from any project or
one), the HIT page, return, flag."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.core.signals import setting_changed
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import redirect, render
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Worker
from annotation.roles import is_annotator, is_researcher
from annotation.services import worker_for_user
from crowdlex.middleware import never_cached
from crowdlex.reconnect import retry_on_lost_connection
from crowdlex.throttling import ClaimThrottle, SubmitThrottle, throttled
from crowdlex.transactions import AfterRollback, in_one_transaction
from crowds.interface import queue_backend_names
from hits import selectors
from hits.guards import pledge_given
from hits.models import HIT, PLEDGE_TEXT, Assignment, AssignmentStatus, Batch, HITFlagReason
from hits.qualification import selectors as qualification_selectors
from hits.selectors import HitPart, WorkProgress, own_work
from hits.services import (
    AnswersInvalid,
    FlagInvalid,
    PledgeMissing,
    SubmissionRefused,
    assignment_claim_next,
    assignment_return,
    assignment_submit_with_part,
    hit_flag_set,
)
from hits.signin import signed_in_at
from hits.telemetry import Telemetry, TelemetryInvalid, telemetry_from_form

# Radio groups on the page are named "item-<HITItem id>".
ANSWER_FIELD_PREFIX = "item-"
HISTORY_LENGTH = 50
# An assignment that still takes answers: a live claim, or an expired one whose HIT may still need it.
EDITABLE_STATUSES = (AssignmentStatus.CLAIMED, AssignmentStatus.EXPIRED)


ALREADY_SUBMITTED = "You had already submitted this HIT; your first answers were kept."
# The flag form's reasons, as the page lists them (the choices of a model's enumeration are fixed).
FLAG_REASONS = HITFlagReason.choices
# The session key of the batch whose HIT the annotator just returned: the next "Start working"
# passes over it while another project has a HIT for them (docs/design.md §11).
RETURNED_BATCH = "work_returned_batch"


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


def posted_telemetry(data: QueryDict) -> Telemetry | None:
    """The page's record of how the HIT was worked on (``TelemetryInvalid`` when malformed)."""
    return telemetry_from_form(data.get("telemetry"))


def posted_pledge(data: QueryDict) -> bool:
    return data.get("pledge") == "yes"


def posted_flag(data: QueryDict) -> dict[str, Any]:
    """The flag form's fields as ``hit_flag_set`` takes them (an empty item flags the whole HIT)."""
    item = data.get("item", "")
    return {
        "reason": data.get("reason", ""),
        "item_id": int(item) if item.isascii() and item.isdigit() else None,
        "note": data.get("note", ""),
    }


# An assignment's routes, per (route, script prefix, URL configuration): the address before and
# after the assignment's id. Reversing a route took a twentieth of a millisecond each time, five
# times a cycle. A handful of routes and prefixes; bounded as the page's kept fragments are
# (``WORK_PAGE_FRAGMENTS_KEPT``, forgotten whole when full; docs/design.md §4).
_ASSIGNMENT_URLS: dict[tuple[str, str, Any], tuple[str, str]] = {}
# Reversed in place of an id: a number that no route of an assignment holds otherwise.
_ID_STANDIN = 987654321987654321


def assignment_url(name: str, assignment_id: int) -> str:
    """``reverse(name, args=[assignment_id])`` for a route whose one argument is an assignment's id
    (an ``int`` converter, spelled as ``str`` spells it), the route reversed once per script prefix
    and URL configuration."""
    key = (name, get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF)
    found = _ASSIGNMENT_URLS.get(key)
    if found is None:
        before, standin, after = reverse(name, args=[_ID_STANDIN]).partition(str(_ID_STANDIN))
        assert standin, name
        if len(_ASSIGNMENT_URLS) >= settings.WORK_PAGE_FRAGMENTS_KEPT:
            _ASSIGNMENT_URLS.clear()
        found = _ASSIGNMENT_URLS[key] = (before, after)
    return f"{found[0]}{int(assignment_id)}{found[1]}"


def _forget_assignment_urls(**_: Any) -> None:
    _ASSIGNMENT_URLS.clear()


# A test's change of the URL configuration or of the script prefix's setting.
setting_changed.connect(_forget_assignment_urls, dispatch_uid="hits.views.annotator.assignment_urls")


def hit_page_context(
    *,
    hit_id: int,
    assignment: Assignment | None,
    selected: Mapping[int, str] | None = None,
    missing: Iterable[int] = (),
    error: str = "",
    flag_error: str = "",
    progress: WorkProgress | None = None,
    items: Sequence[Sequence[Any]] | None = None,
) -> dict[str, Any]:
    """What the page shell (``hits/assignment.html``) needs from any backend; None is a preview.

    A submitted (or returned) assignment shows the worker's stored answers, read-only. ``progress``
    is read when not given, and so are the HIT's ``items`` (``selectors.assignment_page``).
    """
    editable = assignment is not None and assignment.status in EDITABLE_STATUSES
    if assignment is not None and selected is None and not editable:
        selected = selectors.assignment_answers(assignment=assignment)
    if progress is None and assignment is not None:
        progress = selectors.assignment_progress(assignment=assignment)
    page = selectors.hit_page(hit_id=hit_id, selected=selected, missing=missing, items=items)
    mitigations = page.mitigations
    return {
        "assignment": assignment,
        "page": page,
        "mitigations": mitigations,
        # Asked before the first HIT of the benchmark, with the answers (hits.services.guards.pledge_check).
        "pledge_needed": editable
        and assignment is not None
        and mitigations.pledge
        and not pledge_given(worker=assignment.worker_id, benchmark=page.benchmark_id),
        "pledge_text": PLEDGE_TEXT,
        "progress": progress,
        # The scheme's instructions open their examples for someone new to the batch.
        "first_hit": progress is None or progress.done_in_batch == 0,
        "preview": assignment is None,
        "editable": editable,
        "error": error,
        "flag_reasons": FLAG_REASONS,
        "flag_error": flag_error,
        # Named even when off: a name the page reads and the context lacks costs the template
        # engine an exception each time (a researcher's preview and a crowd's page set them).
        "researcher_preview": None,
        "flag_sent": False,
    }


def render_assignment(
    request: HttpRequest,
    assignment: Assignment,
    *,
    selected: Mapping[int, str] | None = None,
    missing: Iterable[int] = (),
    error: str = "",
    flag_error: str = "",
    status: int = 200,
    progress: WorkProgress | None = None,
    items: Sequence[Sequence[Any]] | None = None,
) -> HttpResponse:
    """Render the local queue's ``hits/assignment.html``."""
    context = hit_page_context(
        hit_id=assignment.hit_id,
        assignment=assignment,
        selected=selected,
        missing=missing,
        error=error,
        flag_error=flag_error,
        progress=progress,
        items=items,
    )
    context.update(
        {
            "form_action": assignment_url("work-assignment", assignment.pk),
            "flag_action": assignment_url("work-flag", assignment.pk),
            "return_action": assignment_url("work-return", assignment.pk)
            if assignment.status == AssignmentStatus.CLAIMED
            else "",
            "session_done": context["progress"].done_since if context["progress"] is not None else None,
        }
    )
    if context["editable"] and assignment.status == AssignmentStatus.CLAIMED:
        # Local work only: a crowd page knows its worker by the page's word (docs/design.md §4).
        context["draft_url"] = assignment_url("api-work-draft", assignment.pk)
        context["draft_seconds"] = settings.DRAFT_SAVE_SECONDS
        context["server_draft"] = own_work.assignment_draft(assignment=assignment)
    return render(request, "hits/assignment.html", context, status=status)


def local_preview_page(request: HttpRequest, hit: HIT, *, extra: Mapping[str, Any]) -> HttpResponse:
    """The local queue's page of ``hit`` before anyone claims it, read-only, for a researcher's
    preview; it claims nothing and writes nothing (docs/design.md §4.1)."""
    context = hit_page_context(hit_id=hit.pk, assignment=None)
    context.update({"form_action": "", "flag_action": "", "return_action": "", **extra})
    return render(request, "hits/assignment.html", context)


def saved_message(progress: HitPart | WorkProgress) -> str:
    """The confirmation after a submit; it names the part, so the next part of the same word
    does not look like the page that was just sent."""
    if progress.parts > 1:
        return f"Saved: part {progress.part} of {progress.parts} for “{progress.word}”. Thank you!"
    return f"Saved: your answers for “{progress.word}”. Thank you!"


def _go_to_next(request: HttpRequest, worker: Worker, *, savepoint: bool = True) -> HttpResponse:
    # Set only by a return: on the plain submit -> next cycle the key is absent and the session
    # is left unchanged (no write).
    avoid = request.session.pop(RETURNED_BATCH, None)
    assignment = assignment_claim_next(
        worker=worker, avoid_batch=avoid if isinstance(avoid, int) else None, savepoint=savepoint
    )
    if assignment is None:
        # The work left may be behind a qualification test this annotator has not taken yet.
        test = qualification_selectors.pending_test(worker=worker)
        if test is not None:
            return redirect("qualification-take", name=test.benchmark.name)
        return redirect("work-next")
    return HttpResponseRedirect(assignment_url("work-assignment", assignment.pk))


@retry_on_lost_connection
@annotator_required
def work_home(request: HttpRequest) -> HttpResponse:
    worker = _worker(request)
    projects = selectors.work_projects(worker=worker)
    context = {
        "worker": worker,
        "projects": [project for project in projects if project.qualification != selectors.Qualification.FAILED],
        "failed_projects": [project for project in projects if project.qualification == selectors.Qualification.FAILED],
        "counts": selectors.work_counts(worker=worker),
        "live": selectors.live_claim(worker=worker),
        # A test waiting in front of work on offer: named here, and "Start working" leads to it.
        "pending_test": qualification_selectors.pending_test(worker=worker),
        "history": list(selectors.work_history(worker=worker)[:HISTORY_LENGTH]),
        "history_length": HISTORY_LENGTH,
    }
    return render(request, "hits/work_home.html", context)


@retry_on_lost_connection
@annotator_required
def work_mine(request: HttpRequest) -> HttpResponse:
    """The annotator's own work, page by page: status and reason, earnings and bonuses, and accuracy
    on the check items where the batch shows it (docs/annotator.md, "Your work")."""
    worker = _worker(request)
    page = Paginator(own_work.own_assignments(worker=worker), settings.WORK_HISTORY_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    rows = own_work.own_work_rows(page.object_list)
    context = {
        "page": page,
        "rows": rows,
        "show_gold": own_work.gold_rows(rows),
        "summary": own_work.own_work_summary(worker=worker),
    }
    return render(request, "hits/work_mine.html", context)


@retry_on_lost_connection
@annotator_required
@require_http_methods(["GET", "POST"])
@throttled(ClaimThrottle)
def work_next(request: HttpRequest) -> HttpResponse:
    """POST claims the next HIT (or resumes the one in progress) and opens it; GET, where
    POST sends the annotator when there is nothing to claim, says so (it never claims)."""
    if request.method == "POST":
        return _go_to_next(request, _worker(request))
    # The annotator is told when work exists that a failed qualification test keeps from them.
    failed = qualification_selectors.failed_tests(worker=_worker(request))
    return render(request, "hits/no_work.html", {"failed_tests": failed})


@retry_on_lost_connection
@annotator_required
@require_POST
@throttled(ClaimThrottle)
def work_project_next(request: HttpRequest, batch_id: int) -> HttpResponse:
    """POST claims the next HIT of one project (a local batch), or resumes the claim in progress
    there, and opens it. A project with nothing left for the annotator sends them home, saying
    why; one behind a qualification test not yet taken sends them to the test."""
    batch = Batch.objects.filter(pk=batch_id, backend__in=queue_backend_names()).select_related("benchmark").first()
    if batch is None:
        raise Http404("No such project.")
    worker = _worker(request)
    # Chosen by name: the batch returned from last is not passed over here.
    request.session.pop(RETURNED_BATCH, None)
    assignment = assignment_claim_next(worker=worker, batch=batch)
    if assignment is not None:
        return redirect("work-assignment", assignment.pk)
    test = qualification_selectors.pending_test(worker=worker, batch_id=batch.pk)
    if test is not None:
        return redirect("qualification-take", name=test.benchmark.name)
    title = selectors.title_of_project(batch.title, batch.benchmark.title, batch.benchmark.name)
    messages.info(request, f"“{title}” has no HIT left for you right now.")
    return redirect("work-home")


def _own_assignment(request: HttpRequest, assignment_id: int) -> Assignment:
    assignment = selectors.assignment_for_page(assignment_id=assignment_id, user_id=request.user.pk)
    if assignment is None:
        # Someone else's assignment is indistinguishable from a missing one.
        raise Http404("No such assignment.")
    return assignment


# Never stored by a browser or a proxy: a page from a cache would show a claim that moved on.
# The account's read and the page's, or the submit and the claim of the next HIT: one transaction
# (crowdlex.transactions).
@never_cached
@retry_on_lost_connection
@in_one_transaction
@annotator_required
@require_http_methods(["GET", "POST"])
@throttled(SubmitThrottle)
def work_assignment(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """GET shows the HIT; POST submits it and moves on to the next HIT."""
    worker = _worker(request)
    if request.method == "GET":
        # The assignment, where the worker stands and the HIT's page: one statement.
        found = selectors.assignment_page(assignment_id=assignment_id, worker_id=worker.pk, since=signed_in_at(request))
        if found is None:
            # Someone else's assignment is indistinguishable from a missing one.
            raise Http404("No such assignment.")
        assignment, progress, items = found
        return render_assignment(request, assignment, progress=progress, items=items)

    answers = posted_answers(request.POST)
    now = timezone.now()
    try:
        # The service reads the assignment under its lock, this worker's only, and the HIT's part
        # for the line that says it was saved, in the same statement.
        submitted, part = assignment_submit_with_part(
            assignment=Assignment(pk=assignment_id),
            worker=worker,
            answers=answers,
            seconds_on_page=posted_seconds(request.POST),
            telemetry=posted_telemetry(request.POST),
            pledged=posted_pledge(request.POST),
            now=now,
            savepoint=False,
        )
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None
    except AnswersInvalid as error:
        # The page again, read once the refused submit is rolled back.
        missing, message = error.missing, str(error.message)
        raise AfterRollback(
            lambda: render_assignment(
                request,
                _own_assignment(request, assignment_id),
                selected=answers,
                missing=missing,
                error=message,
                status=400,
            )
        ) from None
    except (TelemetryInvalid, PledgeMissing) as error:
        message = str(error.message)
        raise AfterRollback(
            lambda: render_assignment(
                request, _own_assignment(request, assignment_id), selected=answers, error=message, status=400
            )
        ) from None
    except SubmissionRefused as error:
        messages.error(request, str(error.message))
        raise AfterRollback(lambda: redirect("work-home")) from None
    # A stale second tab: the service kept the first answers (it is idempotent); say so.
    if submitted.submitted_at != now:
        messages.info(request, ALREADY_SUBMITTED)
    else:
        messages.success(request, saved_message(part))
    return _go_to_next(request, worker, savepoint=False)


@retry_on_lost_connection
@annotator_required
@require_POST
def work_return(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = _own_assignment(request, assignment_id)
    try:
        assignment_return(assignment=assignment, telemetry=posted_telemetry(request.POST))
    except TelemetryInvalid as error:
        return render_assignment(request, assignment, error=str(error.message), status=400)
    except SubmissionRefused as error:
        messages.error(request, str(error.message))
    else:
        request.session[RETURNED_BATCH] = assignment.hit.batch_id
        messages.info(request, "You returned the HIT; it goes back to the pool for someone else.")
    return redirect("work-home")


@annotator_required
@require_POST
def work_flag(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Flag the HIT or one of its rows; the annotator goes back to the HIT, which keeps its answers
    (the page keeps a draft in the browser)."""
    assignment = _own_assignment(request, assignment_id)
    try:
        hit_flag_set(assignment=assignment, **posted_flag(request.POST))
    except FlagInvalid as error:
        return render_assignment(request, assignment, flag_error=str(error.message), status=400)
    messages.success(request, "Thank you: your flag was sent to the researchers. The HIT is still yours.")
    return redirect("work-assignment", assignment.pk)
