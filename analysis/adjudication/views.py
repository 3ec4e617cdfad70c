"""The adjudication pages (docs/adjudication.md): the queue of disagreements, one item side by side,
and the researcher's decisions on it. Thin: each checks the role, calls one service, redirects."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from analysis.adjudication.selectors import disagreement_queue_page, item_page
from annotation.access import Role, benchmark_for
from annotation.models import Candidate, Target
from crowdlex.permissions import researcher_required
from review.adjudication import (
    OVERRIDE_REASON_MAX_CHARS,
    OverrideRefused,
    candidate_override_remove,
    candidate_override_set,
    item_resolve,
    overrides_applied,
    overrides_apply_set,
)


def _target(request: HttpRequest, name: str, target_id: int, need: Role) -> Target:
    benchmark = benchmark_for(request.user, name, need)
    target = Target.objects.select_related("benchmark", "context").filter(benchmark=benchmark, pk=target_id).first()
    if target is None:
        raise Http404("No such item in this benchmark.")
    return target


@researcher_required
def adjudication_queue(request: HttpRequest, name: str) -> HttpResponse:
    """The items the crowd disagrees on most, a page at a time, each linked to its item page."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    include_resolved = request.GET.get("resolved") == "1"
    page = disagreement_queue_page(
        benchmark=benchmark, include_resolved=include_resolved, number=request.GET.get("page")
    )
    context = {
        "benchmark": benchmark,
        "page": page,
        "include_resolved": include_resolved,
        "applied": overrides_applied(benchmark=benchmark),
    }
    return render(request, "analysis/adjudication_queue.html", context)


@researcher_required
def adjudication_item(request: HttpRequest, name: str, target_id: int) -> HttpResponse:
    """One item with every submission side by side, agreement, and the decisions taken on it."""
    target = _target(request, name, target_id, Role.VIEWER)
    page = item_page(target=target)
    context = {"benchmark": target.benchmark, "page": page, "reason_max": OVERRIDE_REASON_MAX_CHARS}
    return render(request, "analysis/adjudication_item.html", context)


@researcher_required
@require_POST
def adjudication_decide(request: HttpRequest, name: str, target_id: int) -> HttpResponse:
    """Decide a candidate of the item with a reason, or withdraw the decision (``decision`` empty)."""
    target = _target(request, name, target_id, Role.EDITOR)
    candidate_id = request.POST.get("candidate", "")
    candidate = (
        Candidate.objects.filter(target=target, pk=int(candidate_id)).first()
        if candidate_id.isdigit() and len(candidate_id) <= 12
        else None
    )
    status = 200
    if candidate is None:
        messages.error(request, "Choose a candidate of this item to decide.")
        status = 400
    else:
        decision = request.POST.get("decision", "")
        try:
            if decision:
                candidate_override_set(
                    candidate=candidate, decision=decision, reason=request.POST.get("reason", ""), by=request.user
                )
                messages.success(request, f"“{candidate.text}” is decided {decision}.")
            elif candidate_override_remove(candidate=candidate, by=request.user):
                messages.success(request, f"The decision on “{candidate.text}” is withdrawn.")
        except OverrideRefused as error:
            messages.error(request, str(error))
            status = 400
    if status == 400:
        context = {
            "benchmark": target.benchmark,
            "page": item_page(target=target),
            "reason_max": OVERRIDE_REASON_MAX_CHARS,
        }
        return render(request, "analysis/adjudication_item.html", context, status=400)
    return redirect("adjudication-item", name=target.benchmark.name, target_id=target.pk)


@researcher_required
@require_POST
def adjudication_resolve(request: HttpRequest, name: str, target_id: int) -> HttpResponse:
    """Mark the item resolved (``resolved=1``) or open again."""
    target = _target(request, name, target_id, Role.EDITOR)
    resolved = request.POST.get("resolved", "1") == "1"
    item_resolve(target=target, resolved=resolved, by=request.user)
    messages.success(request, f"Target {target.pk} is {'resolved' if resolved else 'open again'}.")
    return redirect("adjudication-item", name=target.benchmark.name, target_id=target.pk)


@researcher_required
@require_POST
def adjudication_apply(request: HttpRequest, name: str) -> HttpResponse:
    """Whether the figures follow researchers' decisions (``apply=1``) or the crowd alone."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    apply = request.POST.get("apply") == "1"
    overrides_apply_set(benchmark=benchmark, apply=apply, by=request.user)
    messages.success(
        request,
        "Scores, statistics and exports now follow researchers' decisions."
        if apply
        else "Scores, statistics and exports now follow the crowd's labels alone.",
    )
    return redirect("adjudication-queue", name=benchmark.name)
