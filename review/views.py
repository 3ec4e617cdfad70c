"""Researcher pages of the pipeline: progress per step and target, flagged workers and their review."""

from __future__ import annotations

import dataclasses

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.access import Role, benchmark_for, object_for
from annotation.models import Benchmark
from crowdlex.permissions import researcher_required
from hits.access import worker_for
from review import selectors
from review.models import WorkerFlag
from review.services import review_settings_update, worker_block, worker_flag_clear, worker_unblock
from review.signals import SignalSettings
from review.tasks import benchmark_refresh
from schemes.swords.settings import settings_of

TARGETS_PER_PAGE = 200


@researcher_required
def pipeline_progress(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    progress = selectors.pipeline_progress(benchmark=benchmark)
    page = Paginator(progress.targets, TARGETS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"benchmark": benchmark, "progress": progress, "page": page, "scheme_settings": settings_of(benchmark)}
    return render(request, "review/pipeline.html", context)


@researcher_required
@require_POST
def pipeline_refresh(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    benchmark_refresh.delay(benchmark.pk, full=True)
    messages.success(request, "Spam filtering and advancement are being recomputed.")
    return redirect("pipeline-progress", name=benchmark.name)


class ReviewSettingsForm(forms.Form):
    auto_block_spammers = forms.BooleanField(
        required=False, label="Block workers whose control accuracy is below the threshold"
    )
    auto_block_signals = forms.BooleanField(
        required=False, label="Block workers flagged by a bot signal (fast, straight-lining, identical answers, …)"
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        defaults = SignalSettings()
        for setting in dataclasses.fields(SignalSettings):
            default = getattr(defaults, setting.name)
            field_class = forms.IntegerField if isinstance(default, int) else forms.FloatField
            self.fields[setting.name] = field_class(
                required=False,
                min_value=0,
                label=setting.name.replace("_", " "),
                help_text=f"default {default}",
            )

    def signal_overrides(self) -> dict[str, float | int]:
        defaults = SignalSettings()
        return {
            setting.name: self.cleaned_data[setting.name]
            for setting in dataclasses.fields(SignalSettings)
            if self.cleaned_data.get(setting.name) is not None
            and self.cleaned_data[setting.name] != getattr(defaults, setting.name)
        }


def _settings_form(benchmark: Benchmark) -> ReviewSettingsForm:
    current = selectors.review_settings(benchmark=benchmark)
    initial: dict[str, object] = {
        "auto_block_spammers": current.auto_block_spammers,
        "auto_block_signals": current.auto_block_signals,
        **(current.signal_overrides or {}),
    }
    return ReviewSettingsForm(initial=initial)


@researcher_required
def flagged_workers(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    show_cleared = request.GET.get("cleared") == "1"
    return render(
        request,
        "review/workers.html",
        {
            "benchmark": benchmark,
            "workers": selectors.flagged_workers(benchmark=benchmark, include_cleared=show_cleared),
            "show_cleared": show_cleared,
            "settings_form": _settings_form(benchmark),
            "signal_settings": selectors.signal_settings(benchmark=benchmark),
            "scheme_settings": settings_of(benchmark),
        },
    )


@researcher_required
@require_POST
def review_settings(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    form = ReviewSettingsForm(request.POST)
    if form.is_valid():
        try:
            review_settings_update(
                benchmark=benchmark,
                auto_block_spammers=form.cleaned_data["auto_block_spammers"],
                auto_block_signals=form.cleaned_data["auto_block_signals"],
                signal_overrides=form.signal_overrides(),
                by=request.user,  # type: ignore[arg-type]
            )
        except ValidationError as error:
            messages.error(request, "; ".join(error.messages))
        else:
            messages.success(request, "Review settings saved.")
    else:
        problems = [f"{field}: {' '.join(str(e) for e in errors)}" for field, errors in form.errors.items()]
        messages.error(request, "; ".join(problems))
    return redirect("pipeline-workers", name=benchmark.name)


@researcher_required
@require_POST
def flag_clear(request: HttpRequest, name: str, flag_id: int) -> HttpResponse:
    flag = object_for(
        request.user, WorkerFlag.objects.select_related("worker"), Role.EDITOR, pk=flag_id, benchmark__name=name
    )
    worker_flag_clear(flag=flag, by=request.user)  # type: ignore[arg-type]
    messages.success(request, f"Flag “{flag.get_reason_display()}” of {flag.worker.external_id} cleared.")
    return redirect("pipeline-workers", name=name)


@researcher_required
@require_POST
def worker_block_view(request: HttpRequest, name: str, worker_id: int) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    worker = worker_for(request.user, worker_id, Role.EDITOR, benchmark=benchmark)
    reason = request.POST.get("reason", "").strip()[:500] or f"flagged in benchmark {name}"
    worker_block(worker=worker, reason=reason, by=request.user)  # type: ignore[arg-type]
    messages.success(request, f"{worker.external_id} is blocked: no more HITs, and their labels no longer count.")
    return redirect("pipeline-workers", name=name)


@researcher_required
@require_POST
def worker_unblock_view(request: HttpRequest, name: str, worker_id: int) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    worker = worker_for(request.user, worker_id, Role.EDITOR, benchmark=benchmark)
    worker_unblock(worker=worker, by=request.user)  # type: ignore[arg-type]
    messages.success(request, f"{worker.external_id} is unblocked.")
    return redirect("pipeline-workers", name=name)
