"""Researcher pages of the pipeline: progress per step and target, flagged workers and their review."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.access import Role, benchmark_for, object_for, require
from annotation.changes import benchmark_cached, figures_key, one_figures_key
from annotation.fragments import later
from annotation.models import Activity, Benchmark
from crowdlex.confirm import confirmation_page, confirmed
from crowdlex.permissions import researcher_required
from hits.access import settings_role, worker_for
from hits.guards import benchmark_mitigations
from hits.services import SettingsState, benchmark_settings, benchmark_settings_update
from hits.templatetags.hits_tags import batch_table
from hits.views.confirmations import worker_block_confirmation
from review import selectors
from review.evidence import flags_evidence_html
from review.live import benchmark_live_figures
from review.models import WorkerFlag
from review.services import (
    UndoRefused,
    activity_undo,
    activity_undo_plan,
    review_settings_update,
    worker_block,
    worker_flag_clear,
    worker_unblock,
)
from review.signals import SIGNAL_WORDING, SignalSettings
from review.tasks import benchmark_refresh
from schemes import get_scheme

TARGETS_PER_PAGE = 200


@researcher_required
@one_figures_key
def pipeline_progress(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    return render(request, PIPELINE_TEMPLATE, pipeline_context(request, benchmark))


PIPELINE_TEMPLATE = "review/pipeline.html"


def pipeline_context(request: HttpRequest, benchmark: Benchmark) -> dict[str, Any]:
    """The pipeline page's context (also what ``review.warmers`` renders before the first reader)."""
    # Read only when the page's fragment is rendered: once per change of the benchmark and page of
    # targets, served from the cache in between (annotation.fragments).
    progress = later(lambda: selectors.pipeline_progress(benchmark=benchmark))
    page = later(lambda: Paginator(progress.targets, TARGETS_PER_PAGE).get_page(request.GET.get("page")))
    return {"benchmark": benchmark, "progress": progress, "page": page}


@researcher_required
def benchmark_live(request: HttpRequest, name: str) -> HttpResponse:
    """The figures the benchmark, pipeline and flagged-workers pages refresh by themselves (review.live).

    Polled every few seconds by every open tab: the answer is computed once per change of the
    benchmark and read from the cache (``annotation.changes``), and its ETag is that state, so a
    poll that sends it back while nothing changed gets a 304 after one small statement.
    """
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    # The benchmark page asks for its batches table too (``?part=batches``): a batch created since
    # the page loaded (a step-3 batch of the pipeline) appears, and each row's counts and costs move.
    parts = sorted(set(request.GET.getlist("part")) & LIVE_PARTS)
    key = figures_key(benchmark_id=benchmark.pk)
    tag = f'"{benchmark.pk}.{key}.{"+".join(parts)}"'
    response: HttpResponse
    if tag in (value.strip() for value in request.headers.get("If-None-Match", "").split(",")):
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(live_body(benchmark=benchmark, parts=parts, key=key), content_type="application/json")
    response["ETag"] = tag
    # The browser asks each time; the answer is the reader's own (their access was checked).
    response["Cache-Control"] = "private, no-cache"
    return response


# The parts of a page the live poll may render anew (``?part=``).
LIVE_PARTS = {"batches"}


def live_body(*, benchmark: Benchmark, parts: list[str], key: str | None = None) -> bytes:
    """The live poll's answer with ``parts`` (sorted), once per change of the benchmark: as of its
    figures key ``key`` (read now when not given)."""

    def compute() -> bytes:
        live = benchmark_live_figures(benchmark=benchmark)
        if "batches" in parts:
            # The table names no user and holds no form: the same for every reader. Only what the
            # table shows is read (not the flags' count nor the links below it on the page).
            live.parts["batches"] = render_to_string("hits/_batch_table.html", batch_table(benchmark))
        return json.dumps(live.as_dict()).encode()

    return benchmark_cached(benchmark=benchmark, name=f"live:{'+'.join(parts)}", compute=compute, key=key)


@researcher_required
@require_POST
def pipeline_refresh(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    benchmark_refresh.delay(benchmark.pk, full=True)
    messages.success(request, "Spam filtering and advancement are being recomputed.")
    return redirect("pipeline-progress", name=benchmark.name)


class ReviewSettingsForm(forms.Form):
    # Shown as switches; the rest are the thresholds of review.signals.SignalSettings.
    fixed_fields = ("auto_block_spammers", "auto_block_signals", "pledge", "block_copy_paste", "notice")

    auto_block_spammers = forms.BooleanField(
        required=False,
        label="Block workers whose control accuracy is below the threshold",
        help_text="Blocked workers get no more HITs and their labels stop counting; unblock them on this page.",
    )
    auto_block_signals = forms.BooleanField(
        required=False,
        label="Block workers flagged by a bot signal (fast, straight-lining, identical answers, …)",
        help_text="Off: a flag only asks a researcher to look at the worker.",
    )
    pledge = forms.BooleanField(
        required=False,
        label="Ask for a pledge before the first HIT (“I will answer myself, without AI tools”)",
        help_text="Each annotator agrees once, before their first HIT of this benchmark.",
    )
    block_copy_paste = forms.BooleanField(
        required=False,
        label="Disable copying the text and pasting into answer fields",
        help_text="Makes answers harder to send to another tool; a determined worker can still type them.",
    )
    notice = forms.BooleanField(
        required=False,
        label="Say in the instructions that AI tools are not allowed",
        help_text="A line at the top of every HIT's instructions.",
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        defaults = SignalSettings()
        for setting in dataclasses.fields(SignalSettings):
            default = getattr(defaults, setting.name)
            field_class = forms.IntegerField if isinstance(default, int) else forms.FloatField
            label, explanation, unit = SIGNAL_WORDING[setting.name]
            self.fields[setting.name] = field_class(
                required=False,
                min_value=0,
                label=f"{label} ({unit})",
                help_text=f"{explanation[0].upper()}{explanation[1:]}; default {default}.",
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
    mitigations = benchmark_mitigations(benchmark=benchmark)
    initial: dict[str, object] = {
        "auto_block_spammers": current.auto_block_spammers,
        "auto_block_signals": current.auto_block_signals,
        "pledge": mitigations.pledge,
        "block_copy_paste": mitigations.block_copy_paste,
        "notice": mitigations.notice,
        **(current.signal_overrides or {}),
    }
    return ReviewSettingsForm(initial=initial)


def _control_threshold(benchmark: Benchmark) -> float | None:
    """The control accuracy below which the benchmark's scheme filters a worker; None without controls."""
    scheme = get_scheme(benchmark)
    return scheme.control_threshold(scheme.settings(benchmark))


@researcher_required
def flagged_workers(request: HttpRequest, name: str) -> HttpResponse:
    """Workers with flags, each flag with its evidence: the first ``FLAGGED_WORKERS_EVIDENCE_ROWS``
    rows of its table, rendered once per content and kept (``review.evidence``), and a link to this
    page with every row (``?all=1``; docs/design.md §9)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    show_cleared = request.GET.get("cleared") == "1"
    every_row = request.GET.get("all") == "1"
    workers = selectors.flagged_workers(benchmark=benchmark, include_cleared=show_cleared)
    query = "?cleared=1&all=1" if show_cleared else "?all=1"
    evidence = flags_evidence_html(
        flags=[flag for entry in workers for flag in entry.flags],
        worker_names={entry.worker.pk: entry.worker.external_id for entry in workers},
        rows=None if every_row else settings.FLAGGED_WORKERS_EVIDENCE_ROWS,
        all_rows_url=reverse("pipeline-workers", args=[benchmark.name]) + query,
    )
    return render(
        request,
        "review/workers.html",
        {
            "benchmark": benchmark,
            "workers": [(entry, [(flag, evidence[flag.pk]) for flag in entry.flags]) for entry in workers],
            "show_cleared": show_cleared,
            "every_row": every_row,
            "evidence_rows": settings.FLAGGED_WORKERS_EVIDENCE_ROWS,
            # The workers with an active flag, counted from the flags read above (the cleared ones too
            # when shown): the same as ``selectors.active_flag_counts``, without its statements.
            "flag_counts": {"workers": sum(entry.active for entry in workers)},
            "settings_form": _settings_form(benchmark),
            "control_threshold": _control_threshold(benchmark),
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
                pledge=form.cleaned_data["pledge"],
                block_copy_paste=form.cleaned_data["block_copy_paste"],
                notice=form.cleaned_data["notice"],
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
    if not confirmed(request):
        cancel = reverse("pipeline-workers", kwargs={"name": name})
        return worker_block_confirmation(request, worker=worker, cancel_url=cancel)
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


class CollectionSettingsForm(forms.Form):
    """The benchmark's collection settings: reward, seed, the distinct-workers rule and one field per
    setting of its scheme (typed by the setting's default). The fields check types only; the values
    are checked by the settings' own types in ``benchmark_settings_update``. Locked settings are
    disabled, so a post cannot change them (the service refuses it as well)."""

    reward = forms.DecimalField(
        label="Reward per assignment (dollars)", help_text="What one assignment pays, for batches created from now on."
    )
    seed = forms.IntegerField(
        label="Seed (a whole number)",
        help_text="The default seed of new batches: the same seed gives the same HITs.",
    )
    distinct_workers_per_candidate = forms.BooleanField(
        required=False,
        label="Never offer a worker a candidate they judged already",
        help_text="Small teams may relax it, so that one person may judge a candidate twice (docs/design.md §3).",
    )

    def __init__(
        self, *args: object, state: SettingsState, wording: dict[str, tuple[str, str]] | None = None, **kwargs: object
    ) -> None:
        """``wording``: (label, unit) of each scheme setting (``SchemeSettings.wording``)."""
        initial = {
            "reward": state.reward,
            "seed": state.seed,
            "distinct_workers_per_candidate": state.distinct_workers_per_candidate,
            **state.scheme_settings,
        }
        super().__init__(*args, initial=initial, **kwargs)  # type: ignore[arg-type, misc]
        self.scheme_names = [name for name, _, _ in state.scheme_fields]
        for name, default, help_text in state.scheme_fields:
            field: forms.Field
            if isinstance(default, bool):
                field = forms.BooleanField(required=False)
            elif isinstance(default, int):
                field = forms.IntegerField()
            elif isinstance(default, str):
                # A word among the setting's choices, which its help names (checked by the service).
                field = forms.CharField()
            else:
                field = forms.FloatField()
            label, unit = (wording or {}).get(name, (name.replace("_", " ").capitalize(), ""))
            field.label = f"{label} ({unit})" if unit else label
            explanation = f"{help_text[0].upper()}{help_text[1:]}; " if help_text else ""
            field.help_text = f"{explanation}default {default}."
            self.fields[name] = field
        for name in state.locked:
            self.fields[name].disabled = True

    def service_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "reward": data["reward"],
            "seed": data["seed"],
            "distinct_workers_per_candidate": data["distinct_workers_per_candidate"],
            "scheme_settings": {name: data[name] for name in self.scheme_names},
        }


def _review_form_initial(benchmark: Benchmark) -> dict[str, object]:
    current = selectors.review_settings(benchmark=benchmark)
    return {
        "auto_block_spammers": current.auto_block_spammers,
        "auto_block_signals": current.auto_block_signals,
        **(current.signal_overrides or {}),
    }


def _field_errors(form: forms.Form, error: ValidationError) -> None:
    """A service's ValidationError, each message under the field it names (the form's top otherwise)."""
    for name, problems in error.message_dict.items():
        for problem in problems:
            form.add_error(name if name in form.fields else None, problem)


@researcher_required
def benchmark_settings_page(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's collection settings (scheme, reward, seed) and review settings, each form
    saved on its own; settings that shape collected work are locked once collection started."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    posted = request.POST if request.method == "POST" else None
    section = request.POST.get("section") if posted is not None else None
    if posted is not None:
        require(request.user, benchmark, Role.EDITOR)
    state = benchmark_settings(benchmark=benchmark)
    wording = get_scheme(benchmark).settings_type.wording()
    collection = CollectionSettingsForm(posted if section == "collection" else None, state=state, wording=wording)
    review = ReviewSettingsForm(posted if section == "review" else None, initial=_review_form_initial(benchmark))
    if section == "collection" and collection.is_valid():
        # A new reward changes what a crowd costs: the owners' (docs/permissions.md).
        require(request.user, benchmark, settings_role(state, collection.cleaned_data["reward"]))
        try:
            benchmark_settings_update(benchmark=benchmark, by=request.user, **collection.service_arguments())
        except ValidationError as error:
            _field_errors(collection, error)
        else:
            messages.success(request, "Collection settings saved.")
            return redirect("benchmark-settings", name=benchmark.name)
    elif section == "review" and review.is_valid():
        try:
            review_settings_update(
                benchmark=benchmark,
                auto_block_spammers=review.cleaned_data["auto_block_spammers"],
                auto_block_signals=review.cleaned_data["auto_block_signals"],
                signal_overrides=review.signal_overrides(),
                by=request.user,  # type: ignore[arg-type]
            )
        except ValidationError as error:
            _field_errors(review, error)
        else:
            messages.success(request, "Review settings saved.")
            return redirect("benchmark-settings", name=benchmark.name)
    failed = collection.errors or review.errors
    context = {"benchmark": benchmark, "state": state, "collection": collection, "review": review}
    return render(request, "review/settings.html", context, status=400 if failed else 200)


@researcher_required
@require_POST
def activity_undo_view(request: HttpRequest, name: str, activity_id: int) -> HttpResponse:
    """Undo a closed batch, an excluded candidate or a block from the activity log, after a confirmation."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    activity = Activity.objects.filter(benchmark=benchmark, pk=activity_id).first()
    log = reverse("benchmark-activity", kwargs={"name": name})
    if activity is None:
        messages.error(request, "That entry is not in this benchmark's log.")
        return redirect(log)
    try:
        if not confirmed(request):
            plan = activity_undo_plan(activity=activity)
            undo = "The activity log records it, and the decision can be made again."
            return confirmation_page(
                request, title=plan.title, effects=plan.effects, button=plan.button, cancel_url=log, undo=undo
            )
        messages.success(request, activity_undo(activity=activity, by=request.user))
    except UndoRefused as error:
        messages.error(request, f"Nothing undone: {error}.")
    return redirect(log)
