"""Running a collection (docs/batches.md, "Operations"): a benchmark's operations page, its budget
cap and burn-down, and its notifications. Pausing and resuming a batch is its crowd's (``crowds.views``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.access import Role, benchmark_for, viewer_role
from crowdlex.confirm import confirmation_page, confirmed
from crowdlex.permissions import researcher_required
from crowds.interface import get_backend
from hits import selectors
from hits.access import budget_cap_role
from hits.budget import budget_status
from hits.forms import NotificationSettingsForm
from hits.models import Batch, Notification
from hits.notifications import notification_settings, notification_settings_update, webhook_secret_rotate
from hits.services import benchmark_settings, benchmark_settings_update

EVENTS_SHOWN = 50


def _user(request: HttpRequest) -> User | None:
    return request.user if isinstance(request.user, User) else None


@researcher_required
def benchmark_operations(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's budget cap with its burn-down, and its notifications: where they go and what was sent."""
    editing = request.method == "POST"
    benchmark = benchmark_for(request.user, name, Role.EDITOR if editing else Role.VIEWER)
    found = notification_settings(benchmark=benchmark)
    user = _user(request)
    subscribed = bool(found.pk and user is not None and found.email_to.filter(pk=user.pk).exists())
    initial = {
        "budget_cap": benchmark_settings(benchmark=benchmark).budget_cap,
        "webhook_url": found.webhook_url,
        "email_me": subscribed,
    }
    form = NotificationSettingsForm(request.POST if editing else None, initial=initial)
    if editing and user is not None and form.is_valid():
        data = form.cleaned_data
        cap = "" if data["budget_cap"] is None else data["budget_cap"]
        role = viewer_role(request.user, benchmark) or 0
        if budget_cap_role(benchmark_settings(benchmark=benchmark), cap) > role:
            form.add_error("budget_cap", "Only the benchmark's owners change its budget cap.")
    if editing and user is not None and form.is_valid():
        data = form.cleaned_data
        try:
            benchmark_settings_update(benchmark=benchmark, budget_cap=cap, by=user)
        except ValidationError as error:
            for text in error.message_dict.get("budget_cap", []):
                form.add_error("budget_cap", text)
        secret = ""
        if form.is_valid():
            try:
                _, secret = notification_settings_update(
                    benchmark=benchmark, webhook_url=data["webhook_url"], email_me=data["email_me"], user=user, by=user
                )
            except ValidationError as error:
                for text in error.message_dict.get("webhook_url", []):
                    form.add_error("webhook_url", text)
        if form.is_valid():
            messages.success(request, "Budget and notifications saved.")
            if secret:
                messages.warning(request, _secret_message(secret))
            return redirect("benchmark-operations", name=benchmark.name)
    events = list(
        Notification.objects.filter(benchmark=benchmark)
        .prefetch_related("deliveries")
        .order_by("-created_at")[:EVENTS_SHOWN]
    )
    context = {
        "benchmark": benchmark,
        "budget": budget_status(benchmark=benchmark),
        "form": form,
        "settings": found,
        "events": events,
        "can_edit": (viewer_role(request.user, benchmark) or 0) >= Role.EDITOR,
        "email_address": user.email if user is not None else "",
    }
    return render(request, "hits/benchmark_operations.html", context)


def _secret_message(secret: str) -> str:
    return (
        f"The webhook's signing secret, shown this once: {secret} — keep it with your receiver; "
        "it verifies the Crowdlex-Signature header (docs/notifications.md)."
    )


@researcher_required
@require_POST
def benchmark_webhook_secret(request: HttpRequest, name: str) -> HttpResponse:
    """A new signing secret for the webhook, shown once, after a confirmation (the old one stops signing)."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    back = reverse("benchmark-operations", kwargs={"name": benchmark.name})
    if not confirmed(request):
        return confirmation_page(
            request,
            title=f"Make a new webhook secret for {benchmark.name}",
            effects=[
                "notifications are signed with the new secret from now on: a receiver holding the old one "
                "refuses them until it has the new one"
            ],
            button="Make a new secret",
            cancel_url=back,
        )
    secret = webhook_secret_rotate(benchmark=benchmark, by=_user(request))
    messages.warning(request, _secret_message(secret))
    return redirect(back)


def batch_operations_context(*, batch: Batch, throughput: selectors.Throughput) -> dict[str, object]:
    """What the batch page shows of operations: throughput and ETA, and what pausing means on its crowd."""
    return {
        "throughput": throughput,
        "pause_meaning": get_backend(batch.backend).pause_meaning,
    }
