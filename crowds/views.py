"""Researcher pages for a batch on a paid crowd: publish (with the cost preview), sync, expire, review.

Each POST validates a small form, calls one service from ``hits.services`` and redirects back to
the batch's crowd page with a message; the crowd's own error messages are shown as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation.access import Role, object_for
from crowdlex.confirm import confirmation_page, confirmed
from crowdlex.permissions import researcher_required
from crowds import selectors as crowd_selectors
from crowds import services as crowd
from crowds import tasks
from crowds.confirmations import batch_notify_confirmation, sync_decide_confirmation
from crowds.forms import (
    BlockForm,
    BonusForm,
    MessageForm,
    NotifyForm,
    PolicyForm,
    SyncForm,
)
from crowds.interface import BLOCK, BONUS, NOTIFY, BackendError, backend_of_worker_kind, get_backend
from crowds.interface.costs import bonus_fee
from hits.access import worker_for
from hits.models import Assignment, AssignmentStatus, Batch, BonusStatus
from hits.views.confirmations import worker_block_confirmation

ASSIGNMENTS_PER_PAGE = 100


def _crowd_name(batch: Batch) -> str:
    """How the pages name a paid crowd ("MTurk"); "" for the local queue."""
    backend = get_backend(batch.backend)
    return backend.short_label if backend.remote else ""


def _user(request: HttpRequest) -> User | None:
    return request.user if isinstance(request.user, User) else None


def _crowd_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Show a refusal or the crowd's error as a message and go back to the batch's crowd page."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except (BackendError, crowd.CrowdActionRefused) as error:
            messages.error(request, str(error))
            return redirect(_next(request, _back(request, **kwargs)))

    return wrapper


def _next(request: HttpRequest, fallback: str) -> str:
    """The page to return to: a ``next`` on this site, else ``fallback`` (never another site)."""
    wanted = request.POST.get("next", "")
    if wanted and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()}):
        return wanted
    return fallback


def _back(request: HttpRequest, **kwargs: Any) -> str:
    if "pk" in kwargs:
        return reverse("batch-crowd", kwargs={"pk": kwargs["pk"]})
    if "assignment_id" in kwargs:
        assignment = object_for(request.user, Assignment.objects.all(), Role.VIEWER, pk=kwargs["assignment_id"])
        return reverse("batch-crowd", kwargs={"pk": assignment.hit.batch_id})
    return reverse("benchmark-list")


def _form_errors(request: HttpRequest, form: Any) -> None:
    for field, errors in form.errors.items():
        label = "" if field == "__all__" else f"{field}: "
        for error in errors:
            messages.error(request, f"{label}{error}")


@researcher_required
def batch_crowd(request: HttpRequest, pk: int) -> HttpResponse:
    """A crowd batch: what publishing would do and cost, its state on the crowd, and its work to review."""
    batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.VIEWER, pk=pk)
    backend = get_backend(batch.backend)
    if not backend.remote:
        messages.info(request, f"This batch is on the {backend.label}; it has no crowd page.")
        return redirect("batch-detail", pk=batch.pk)
    wanted = request.GET.get("environment")
    # A crowd with endpoints (MTurk's sandbox and production) plans for the one asked for.
    sandbox = None if wanted not in ("sandbox", "production") else wanted == "sandbox"
    plan = crowd_selectors.batch_publish_plan(batch=batch, sandbox=sandbox)
    page = Paginator(crowd_selectors.batch_crowd_assignments(batch=batch), ASSIGNMENTS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "batch": batch,
        "plan": plan,
        "status": crowd_selectors.batch_crowd_status(batch=batch),
        "spending": crowd_selectors.batch_spending(batch=batch),
        "recollection_due": crowd_selectors.batch_recollection_due(batch=batch),
        "limits": crowd_selectors.crowd_limits(benchmark=batch.benchmark),
        "page": page,
        "publish_form": backend.publish_form(batch=batch),
        "sync_form": SyncForm(),
        "policy_form": PolicyForm(
            initial={"filtered_policy": batch.filtered_policy, "rejection_message": batch.rejection_message}
        ),
        "notify_form": NotifyForm(),
        "hold_minutes": int(backend.approval_hold.total_seconds()) // 60,
        "bonus_sent": BonusStatus.SENT,
        "last_error": batch.external.get("last_error"),
        "crowd_name": backend.short_label,
        "blocks_on_crowd": BLOCK in backend.capabilities,
        "bonuses_on_crowd": BONUS in backend.capabilities,
        "messages_on_crowd": NOTIFY in backend.capabilities,
        **backend.crowd_page_context(batch=batch, environment=plan.environment),
    }
    return render(request, "crowds/batch_crowd.html", context)


def _report(request: HttpRequest, outcome: dict[str, Any] | None, success: Callable[[dict[str, Any]], str]) -> None:
    if outcome is None:
        messages.error(request, "The batch no longer exists.")
    elif "error" in outcome:
        messages.error(request, outcome["error"])
    else:
        messages.success(request, success(outcome))
        for line in outcome.get("messages", []):
            messages.info(request, line)


def _publish_confirmation(request: HttpRequest, *, batch: Batch, options: dict[str, Any]) -> HttpResponse:
    sandbox = options.get("sandbox")
    plan = crowd_selectors.batch_publish_plan(batch=batch, sandbox=None if sandbox is None else bool(sandbox))
    backend = get_backend(batch.backend)
    crowd_name = backend.short_label
    where = backend.publish_where(batch=batch, options=options)
    cost = plan.cost
    effects = [f"publish {plan.hits_to_publish} HITs of batch {batch.pk} on {where} ({plan.assignments} assignments)"]
    if cost is not None:
        effects.append(
            f"spend up to ${cost.total}: ${cost.rewards_total} in rewards and ${cost.fees_total} in {crowd_name}'s fees"
            + (" (play money in the sandbox)" if sandbox else "")
        )
    return confirmation_page(
        request,
        title=f"Publish batch {batch.pk} on {where}",
        effects=effects,
        button=f"Publish for ${cost.total}" if cost is not None else "Publish",
        cancel_url=reverse("batch-crowd", kwargs={"pk": batch.pk}),
    )


@researcher_required
@require_POST
@_crowd_errors
def batch_crowd_publish(request: HttpRequest, pk: int) -> HttpResponse:
    """Publishing hundreds of HITs outlasts a request: it runs as a task (inline on the embedded default).
    It spends money: owners only."""
    batch = object_for(request.user, Batch.objects.all(), Role.OWNER, pk=pk)
    backend = get_backend(batch.backend)
    form = backend.publish_form(batch=batch, data=request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect("batch-crowd", pk=batch.pk)
    options = backend.publish_options(form=form)
    if not confirmed(request):
        return _publish_confirmation(request, batch=batch, options=options)
    queued = tasks.batch_publish_task.delay(batch.pk, options, request.user.pk)
    crowd_name = backend.short_label
    if not queued.ready():
        messages.info(request, f"Publishing in the background: the HITs appear here as {crowd_name} takes them.")
        return redirect("batch-crowd", pk=batch.pk)
    _report(
        request,
        queued.get(),
        lambda done: (
            f"Published: {done['hits_created']} HITs created, {done['hits_existing']} already on {crowd_name} "
            f"({backend.posting_name} {done['hit_type_id']})."
        ),
    )
    return redirect("batch-crowd", pk=batch.pk)


@researcher_required
@require_POST
@_crowd_errors
def batch_crowd_sync(request: HttpRequest, pk: int) -> HttpResponse:
    batch = object_for(request.user, Batch.objects.all(), Role.OWNER, pk=pk)
    form = SyncForm(request.POST)
    decide_now = form.is_valid() and form.cleaned_data["decide_now"]
    if decide_now and not confirmed(request):
        return sync_decide_confirmation(
            request,
            batch=batch,
            crowd_name=get_backend(batch.backend).short_label,
            cancel_url=reverse("batch-crowd", kwargs={"pk": batch.pk}),
        )
    queued = tasks.batch_sync_task.delay(batch.pk, decide_now)
    if not queued.ready():
        messages.info(request, "Syncing in the background: reload the page in a minute.")
        return redirect("batch-crowd", pk=batch.pk)
    outcome = queued.get()
    if outcome is not None and outcome.get("errors"):
        messages.warning(request, outcome["summary"])
    else:
        _report(request, outcome, lambda done: str(done["summary"]))
    return redirect("batch-crowd", pk=batch.pk)


@researcher_required
@require_POST
@_crowd_errors
def batch_crowd_expire(request: HttpRequest, pk: int) -> HttpResponse:
    batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
    if not confirmed(request):
        status = crowd_selectors.batch_crowd_status(batch=batch)
        in_progress = status.by_status.get(AssignmentStatus.CLAIMED, 0)
        return confirmation_page(
            request,
            title=f"Expire every HIT of batch {batch.pk}",
            effects=[
                f"expire the {status.postings} postings of batch {batch.pk}'s {batch.hits.count()} HITs on the crowd: "
                "no worker can accept them any more",
                "close the batch",
                f"let the {in_progress} assignments in progress arrive, to be reviewed and paid as usual",
            ],
            button="Expire all HITs",
            cancel_url=reverse("batch-crowd", kwargs={"pk": batch.pk}),
        )
    expired = crowd.batch_expire(batch=batch, by=_user(request))
    messages.success(request, f"{expired} HITs expired; the batch is closed. Work in progress may still arrive.")
    return redirect("batch-crowd", pk=batch.pk)


@researcher_required
@require_POST
@_crowd_errors
def batch_crowd_policy(request: HttpRequest, pk: int) -> HttpResponse:
    batch = object_for(request.user, Batch.objects.all(), Role.OWNER, pk=pk)
    form = PolicyForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect("batch-crowd", pk=batch.pk)
    crowd.batch_review_policy_update(
        batch=batch,
        filtered_policy=form.cleaned_data["filtered_policy"],
        rejection_message=form.cleaned_data["rejection_message"],
    )
    messages.success(request, "Review policy saved.")
    return redirect("batch-crowd", pk=batch.pk)


@researcher_required
@require_POST
@_crowd_errors
def batch_crowd_notify(request: HttpRequest, pk: int) -> HttpResponse:
    batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
    form = NotifyForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect("batch-crowd", pk=batch.pk)
    if not confirmed(request):
        return batch_notify_confirmation(
            request,
            batch=batch,
            subject=form.cleaned_data["subject"],
            crowd_name=get_backend(batch.backend).short_label,
            cancel_url=reverse("batch-crowd", kwargs={"pk": batch.pk}),
        )
    result = crowd.batch_notify(batch=batch, subject=form.cleaned_data["subject"], text=form.cleaned_data["text"])
    messages.success(request, f"{result.notified} workers notified.")
    for worker_id, reason in sorted(result.failures.items()):
        messages.warning(request, f"{worker_id} was not notified: {reason}")
    return redirect("batch-crowd", pk=batch.pk)


def _assignment(request: HttpRequest, assignment_id: int, need: Role) -> Assignment:
    return object_for(request.user, Assignment.objects.select_related("hit__batch", "worker"), need, pk=assignment_id)


@researcher_required
@require_POST
@_crowd_errors
def assignment_crowd_approve(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = _assignment(request, assignment_id, Role.OWNER)
    if not confirmed(request):
        batch = assignment.hit.batch
        fee = crowd_selectors.batch_fees(batch=batch).reward_fee(batch.reward, assignment.hit.assignments_required)
        return confirmation_page(
            request,
            title=f"Approve assignment {assignment.pk}",
            effects=[
                f"approve the work of {assignment.worker.external_id} on HIT {assignment.hit_id}",
                f"pay them the reward of ${batch.reward} (${batch.reward + fee} with the crowd's fee)",
            ],
            button=f"Approve and pay ${batch.reward}",
            cancel_url=_back(request, assignment_id=assignment_id),
        )
    form = MessageForm(request.POST)
    message = form.cleaned_data["message"] if form.is_valid() else ""
    crowd.assignment_approve(assignment=assignment, message=message, by=_user(request))
    messages.success(request, f"Assignment {assignment.pk} approved.")
    return redirect(_back(request, assignment_id=assignment_id))


@researcher_required
@require_POST
@_crowd_errors
def assignment_crowd_reject(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = _assignment(request, assignment_id, Role.EDITOR)
    if not confirmed(request):
        return confirmation_page(
            request,
            title=f"Reject assignment {assignment.pk}",
            effects=[
                f"reject the work of {assignment.worker.external_id} on HIT {assignment.hit_id}: "
                f"they are not paid its reward of ${assignment.hit.batch.reward}, "
                "and the rejection counts against them",
                "re-collect the HIT from another worker",
            ],
            button="Reject the work",
            cancel_url=_back(request, assignment_id=assignment_id),
        )
    form = MessageForm(request.POST)
    message = form.cleaned_data["message"] if form.is_valid() else ""
    crowd.assignment_reject(assignment=assignment, message=message, by=_user(request))
    messages.success(request, f"Assignment {assignment.pk} rejected; its HIT will be re-collected.")
    return redirect(_back(request, assignment_id=assignment_id))


@researcher_required
@require_POST
@_crowd_errors
def assignment_crowd_bonus(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = _assignment(request, assignment_id, Role.OWNER)
    form = BonusForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect(_back(request, assignment_id=assignment_id))
    if not confirmed(request):
        amount = form.cleaned_data["amount"]
        fee = bonus_fee(amount, crowd_selectors.batch_fees(batch=assignment.hit.batch))
        return confirmation_page(
            request,
            title=f"Send a bonus to {assignment.worker.external_id}",
            effects=[f"pay {assignment.worker.external_id} a bonus of ${amount} (${amount + fee} with the fee)"],
            button=f"Pay ${amount}",
            cancel_url=_back(request, assignment_id=assignment_id),
        )
    bonus = crowd.worker_bonus(
        assignment=assignment,
        amount=form.cleaned_data["amount"],
        reason=form.cleaned_data["reason"],
        created_by=_user(request),
        above_limit_confirmed=form.cleaned_data["above_limit_confirmed"],
    )
    if bonus.status == BonusStatus.SENT:
        batch = assignment.hit.batch
        fee = bonus_fee(bonus.amount, crowd_selectors.batch_fees(batch=batch))
        crowd_name = _crowd_name(batch)
        messages.success(
            request, f"${bonus.amount} bonus (+ ${fee} {crowd_name} fee) sent to {bonus.worker.external_id}."
        )
    elif bonus.status == BonusStatus.PENDING:
        messages.warning(request, f"The bonus will be sent again by the next sync: {bonus.error}")
    else:
        messages.error(request, f"The bonus was refused: {bonus.error}")
    return redirect(_back(request, assignment_id=assignment_id))


@researcher_required
@require_POST
@_crowd_errors
def worker_crowd_block(request: HttpRequest, worker_id: int) -> HttpResponse:
    worker = worker_for(request.user, worker_id, Role.EDITOR)
    form = BlockForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
    elif not confirmed(request):
        return worker_block_confirmation(request, worker=worker, cancel_url=_next(request, reverse("benchmark-list")))
    else:
        crowd.worker_block_remote(worker=worker, reason=form.cleaned_data["reason"], by=_user(request))
        # A crowd without a block of its own: the platform's own block keeps its pages from giving them work.
        found = backend_of_worker_kind(worker.kind)
        where = f"here and on {found.short_label}" if found is not None and BLOCK in found.capabilities else "here"
        messages.success(request, f"{worker.external_id} is blocked {where}.")
    return redirect(_next(request, reverse("benchmark-list")))


# -- pausing and resuming a batch (docs/batches.md, "Operations"): what it means is its crowd's --


@researcher_required
@require_POST
def batch_pause(request: HttpRequest, pk: int) -> HttpResponse:
    """Pause a batch after saying what that means on its crowd; undone by resuming it."""
    batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.EDITOR, pk=pk)
    back = reverse("batch-detail", kwargs={"pk": batch.pk})
    if not confirmed(request):
        holding = batch.hits.filter(assignments__status=AssignmentStatus.CLAIMED).count()
        return confirmation_page(
            request,
            title=f"Pause batch {batch.pk}",
            effects=[
                get_backend(batch.backend).pause_meaning,
                f"{holding} assignments in progress may still be submitted, and are reviewed and paid as usual",
            ],
            button="Pause the batch",
            cancel_url=back,
            undo="Resume it from the batch's page, or undo the pause in the activity log.",
        )
    try:
        if crowd.batch_pause(batch=batch, by=_user(request)):
            messages.success(request, f"Batch {batch.pk} is paused: it hands out no new HITs.")
    except (crowd.CrowdActionRefused, BackendError) as error:
        messages.error(request, f"Batch {batch.pk} is not paused: {error}")
    return redirect(back)


@researcher_required
@require_POST
def batch_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """Resume a paused batch; on a paying crowd, after saying that its work is offered (and paid for) again."""
    batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.EDITOR, pk=pk)
    back = reverse("batch-detail", kwargs={"pk": batch.pk})
    backend = get_backend(batch.backend)
    if backend.remote and not confirmed(request):
        return confirmation_page(
            request,
            title=f"Resume batch {batch.pk}",
            effects=[
                f"offer the open HITs of batch {batch.pk} on {batch.get_backend_display()} again: "
                "workers may take and be paid for them",
            ],
            button="Resume the batch",
            cancel_url=back,
            undo="Pause it again from the batch's page.",
        )
    try:
        if crowd.batch_resume(batch=batch, by=_user(request)):
            messages.success(request, f"Batch {batch.pk} is resumed: it hands out its HITs again.")
    except (crowd.CrowdActionRefused, BackendError) as error:
        messages.error(request, f"Batch {batch.pk} is still paused: {error}")
    return redirect(back)
