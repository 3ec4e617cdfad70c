"""Researcher pages of the analysis: a benchmark's statistics with plots, its exports, and systems
evaluated against it (its leaderboard)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST

from analysis import exports, plot_files, rows, services, targets
from analysis.api import direct_export_allowed, direct_export_response, export_job_download_response
from analysis.background import background_cache_key
from analysis.evaluation import COMPLETE_SETTINGS, BenchmarkVersion, Figure, ResultError, SystemEvaluator
from analysis.figures import scheme_figures
from analysis.forms import TargetSearchForm
from analysis.models import ExportJob, ExportStatus, JudgementStatus, UnscoredJudgement
from analysis.services.aggregation import candidate_posteriors, worker_rows_with_reliability
from analysis.statistics_page import STATISTICS_PAGE, statistics_page_context
from annotation.access import Role, benchmark_for, object_for
from annotation.changes import benchmark_figures_cache_key, one_figures_key, page_cache_read_ahead
from annotation.fragments import request_figures_key
from annotation.importers import validate_upload_size
from annotation.models import Candidate, Target
from crowdlex.confirm import confirmation_page, confirmed
from crowdlex.permissions import researcher_required
from crowds.interface import backend_choices, backend_label

ACTIVE = (ExportStatus.PENDING, ExportStatus.RUNNING)
# Sentences (or targets) on a page of merged suggestions (or of proposals).
TARGETS_PER_PAGE = 100


@researcher_required
def target_list(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's targets, searched by word, part of speech, stage and score range (GET), a page at a time."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    form = TargetSearchForm(request.GET or None, benchmark=benchmark)
    found = targets.target_search(benchmark=benchmark, **(form.search_arguments() if form.is_valid() else {}))
    # Only the values the page shows (analysis.rows.target_rows): no target or context is built.
    page = Paginator(found.values(*rows.TARGET_COLUMNS), TARGETS_PER_PAGE).get_page(request.GET.get("page"))
    # The search without its page number, for the pager's links.
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "benchmark": benchmark,
        "form": form,
        "page": page,
        "target_rows": rows.target_rows(page, benchmark=benchmark),
        "query": query.urlencode(),
    }
    return render(request, "analysis/target_list.html", context, status=400 if form.errors else 200)


@researcher_required
def target_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One target: its context, candidates with sources, labels, scores and categories, HITs, answers and flags."""
    target = object_for(request.user, Target.objects.select_related("benchmark", "context"), Role.VIEWER, pk=pk)
    posteriors = None
    if request.GET.get("posteriors") == "1":
        # A fit over the whole benchmark: computed when asked, so the page stays quick by default.
        candidate_ids = list(Candidate.objects.filter(target=target).values_list("pk", flat=True))
        posteriors = candidate_posteriors(benchmark=target.benchmark, candidate_ids=candidate_ids)
    page = targets.target_page(target=target, posteriors=posteriors)
    return render(request, "analysis/target_detail.html", {"benchmark": target.benchmark, "page": page})


@researcher_required
@one_figures_key
def benchmark_statistics(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's figures as its scheme reports them (its figures' template and context)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    figures = scheme_figures(benchmark)
    # One figures key for every part of the page and its fragment (one statement, not one a part).
    key = request_figures_key(request, benchmark.pk)
    # The kept figures the page reads first, in one round trip: its own (the scheme's, the
    # interactions and the source yield, one entry) and those computed in the background.
    page_cache_read_ahead(
        [
            benchmark_figures_cache_key(benchmark_id=benchmark.pk, key=key, name=STATISTICS_PAGE),
            *(background_cache_key(benchmark.pk, name) for name in figures.background),
        ]
    )
    context = statistics_page_context(benchmark, key=key)
    if request.GET.get("reliability") == "1" and "workers" in context:
        # Two fits over every label: computed when asked, so the page stays quick by default.
        context["workers"] = worker_rows_with_reliability(benchmark=benchmark, rows=context["workers"])
        context["with_reliability"] = True
        # Rendered by the page with them, not as kept without them.
        context["workers_html"] = None
    return render(request, figures.template, context)


@researcher_required
@require_POST
def benchmark_reannotation(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    origin = request.POST.get("origin") or None
    try:
        services.benchmark_reannotation_set(benchmark=benchmark, origin=origin)
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Re-annotation: {origin}." if origin else "No re-annotation.")
    return redirect("analysis-statistics", name=benchmark.name)


@researcher_required
@require_http_methods(["GET", "POST"])
@one_figures_key
def benchmark_exports(request: HttpRequest, name: str) -> HttpResponse:
    """Export jobs of a benchmark (POST queues one) and direct downloads of the formats that allow it."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    if request.method == "POST":
        format = request.POST.get("format", "")
        problem = exports.unknown_format(format, benchmark)
        if problem is not None:
            messages.error(request, problem[0].upper() + problem[1:] + ".")
        else:
            job = services.export_job_create(
                benchmark=benchmark,
                format=format,
                compress=request.POST.get("compress") == "on",
                raw_workers=request.POST.get("raw_workers") == "on",
                license=request.POST.get("license", "").strip()[:50] or "unknown",
                created_by=request.user,  # type: ignore[arg-type]
            )
            messages.success(request, f"Export {job.pk} ({format}) queued.")
        return redirect("analysis-exports", name=benchmark.name)
    jobs = ExportJob.objects.filter(benchmark=benchmark).select_related("created_by")[:30]
    formats = [
        {
            "name": found.name,
            "description": found.title,
            "direct": direct_export_allowed(benchmark=benchmark, format=found.name),
        }
        for found in exports.export_formats(benchmark)
    ]
    return render(
        request,
        "analysis/exports.html",
        {
            "benchmark": benchmark,
            "jobs": jobs,
            "formats": formats,
            "active": [ExportStatus.PENDING, ExportStatus.RUNNING],
        },
    )


@researcher_required
def benchmark_export_download(request: HttpRequest, name: str, format: str) -> HttpResponseBase:
    """A streamed download straight from the request (409 when the benchmark is too large)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    return direct_export_response(benchmark=benchmark, format=format, by=request.user)


@researcher_required
def benchmark_plot(request: HttpRequest, name: str, plot: str, file_type: str) -> HttpResponse:
    """A plot of the statistics page as a file to save: SVG or PNG."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    try:
        content, media_type = plot_files.plot_file(benchmark=benchmark, plot=plot, file_type=file_type)
    except plot_files.PlotError as error:
        raise Http404(str(error)) from None
    response = HttpResponse(content, content_type=media_type)
    filename = plot_files.plot_filename(benchmark=benchmark, plot=plot, file_type=file_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@researcher_required
@require_POST
def export_job_restart(request: HttpRequest, job_id: int) -> HttpResponse:
    job = object_for(request.user, ExportJob.objects.select_related("benchmark"), Role.VIEWER, pk=job_id)
    if services.export_job_restart(job=job):
        messages.success(request, f"Export {job.pk} ({job.format}) queued again.")
    else:
        messages.error(request, f"Export {job.pk} is {job.status}: only a failed one restarts.")
    return redirect("analysis-exports", name=job.benchmark.name)


@researcher_required
def export_job_download(request: HttpRequest, job_id: int) -> HttpResponseBase:
    return export_job_download_response(object_for(request.user, ExportJob.objects.all(), Role.VIEWER, pk=job_id))


@researcher_required
@require_http_methods(["GET", "POST"])
@one_figures_key
def benchmark_evaluation(request: HttpRequest, name: str) -> HttpResponse:
    """Upload a system's result file and see its figures; the leaderboard of saved systems, each with
    the benchmark version it was scored on; the complete evaluations (docs/evaluation.md). The
    format, the figures and the leaderboard's columns are those of the scheme's evaluator; a
    benchmark whose scheme declares no evaluation has no such page (404, saying why).

    Asked to judge the system's unscored substitutes, the upload saves the system and proposes
    the judging with its cost, then comes back here, where the proposal's button asks first."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR if request.method == "POST" else Role.VIEWER)
    try:
        evaluator = services.evaluation_check(benchmark=benchmark)
    except services.EvaluationUnavailable as exc:
        raise Http404(str(exc)) from exc
    figures = None
    refused = False
    if request.method == "POST":
        upload = request.FILES.get("result")
        system = request.POST.get("system", "").strip()
        split = request.POST.get("split") or None
        judge = request.POST.get("judge") == "on"
        try:
            if upload is None:
                raise ResultError("Choose a result file.")
            if judge and not system:
                raise ResultError("Name the system: its substitutes are added under system:<name>.")
            validate_upload_size(upload)
            services.split_check(benchmark=benchmark, split=split)
            if judge:
                services.judging_check(benchmark=benchmark)
                top_k = _whole_number(request.POST.get("top_k", "10"), "top-k")
            result = services.result_load(benchmark=benchmark, source=upload, keep=bool(system))
            evaluated = services.system_evaluate(benchmark=benchmark, result=result, split=split)
            proposal = None
            if judge:
                try:
                    proposal = services.system_judge_unscored(
                        benchmark=benchmark,
                        system=system,
                        result=result,
                        figures=evaluated,
                        split=split,
                        top_k=top_k,
                        backend=request.POST.get("backend", "local"),
                        by=request.user,  # type: ignore[arg-type]
                        start=False,
                    )
                except services.JudgingError as exc:
                    # The figures stand (and the system is saved): only the judging is refused.
                    messages.warning(request, f"{system} is on the leaderboard; nothing is sent to be judged: {exc}")
            if proposal is not None:
                messages.success(
                    request,
                    f"{system} is on the leaderboard; {proposal.substitute_count:,} of its substitutes are unscored: "
                    f"judging them costs ${proposal.cost['total']}. Nothing is added until you judge them.",
                )
                return redirect(f"{reverse('analysis-evaluation', args=[benchmark.name])}#judging")
            if system and not judge:
                services.system_evaluation_save(
                    benchmark=benchmark,
                    system=system,
                    figures=evaluated,
                    split=split,
                    created_by=request.user,  # type: ignore[arg-type]
                    result=result,
                )
                messages.success(request, f"{system} is on the leaderboard.")
            figures = [(figure, evaluated.get(figure.name)) for figure in evaluator.figures]
        except (ResultError, ValueError, ValidationError) as exc:
            messages.error(request, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))
            refused = True
    columns = [evaluator.figure(column) for column in evaluator.leaderboard]
    splits = services.benchmark_splits(benchmark=benchmark)
    now = services.benchmark_version_now(benchmark=benchmark)
    leaderboards = [
        (
            split_name,
            [
                (row, leaderboard_cells(columns, row), _version_words(row.get("version"), now))
                for row in services.benchmark_leaderboard(benchmark=benchmark, split=split_name)
            ],
        )
        for split_name in [None, *splits]
    ]
    judgements = [
        (judgement, services.judgement_progress(judgement=judgement), _report_rows(evaluator, judgement.report))
        for judgement in services.judgements_refresh(benchmark=benchmark)
    ]
    judging = evaluator.judges_unscored
    return render(
        request,
        "analysis/evaluation.html",
        {
            "benchmark": benchmark,
            "evaluator": evaluator,
            "figures": figures,
            "splits": splits,
            "columns": columns,
            "leaderboards": leaderboards,
            "version": now,
            "judging": judging,
            "judging_refusal": "" if judging else evaluator.judging_refusal,
            "judgements": judgements,
            "backends": backend_choices(),
            "settings_names": COMPLETE_SETTINGS,
            "max_top_k": settings.EVALUATION_JUDGE_MAX_TOP_K,
            "level": settings.EVALUATION_BOOTSTRAP_LEVEL_PERCENT,
        },
        status=400 if refused else 200,
    )


def _whole_number(raw: str, field: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ResultError(f"{field} must be a whole number, got {raw!r}") from None


def leaderboard_cells(columns: list[Figure], row: dict[str, Any]) -> SafeString:
    """A leaderboard row's figure cells, as the template's loop showed them (each value by
    ``floatformat`` with its column's decimals, a dash for a figure not computed), built here: the
    loop's nodes cost more than the figures (docs/design.md §10)."""
    return mark_safe(
        "".join(
            _NO_FIGURE
            if (value := row.get(column.name)) is None
            else f'<td class="num">{conditional_escape(floatformat(value, column.decimals))}</td>'
            for column in columns
        )
    )


_NO_FIGURE = '<td class="num">\u2013</td>'


def _version_words(version: dict[str, int] | None, now: BenchmarkVersion) -> str:
    """How a saved system's benchmark version reads beside the benchmark now."""
    if not version:
        return "not recorded"
    then = BenchmarkVersion.from_dict(version)
    assert then is not None
    grown = now.candidates - then.candidates
    return str(then) + (f" (the benchmark has {grown:,} more candidates now)" if grown > 0 else "")


def _report_rows(
    evaluator: SystemEvaluator, report: dict[str, Any] | None
) -> list[tuple[Figure, list[tuple[float, float, float]]]]:
    """The complete evaluation's table: per figure, (value, low, high) in each setting."""
    if not report:
        return []
    return [
        (
            figure,
            [
                (report["figures"][setting][figure.name], *report["intervals"][setting][figure.name])
                for setting in COMPLETE_SETTINGS
            ],
        )
        for figure in evaluator.complete_figures
    ]


@researcher_required
@require_POST
def evaluation_judge(request: HttpRequest, name: str) -> HttpResponse:
    """Start a proposed complete evaluation: add the system's unscored substitutes as candidates and
    create the batch that judges them. Money is spent: the first post answers with what it will do
    and cost (crowdlex/confirm.py), the confirmed one acts."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    back = reverse("analysis-evaluation", args=[benchmark.name])
    judgement = (
        UnscoredJudgement.objects.filter(benchmark=benchmark, pk=request.POST.get("judgement") or 0)
        .select_related("evaluation")
        .first()
        if (request.POST.get("judgement") or "").isdigit()
        else None
    )
    if judgement is None:
        messages.error(request, "No such proposal to judge.")
        return redirect(back)
    if judgement.status != JudgementStatus.PROPOSED:
        messages.error(request, f"The substitutes of {judgement.evaluation.system} are being judged already.")
        return redirect(f"{back}#judging")
    cost = judgement.cost
    if not confirmed(request):
        return confirmation_page(
            request,
            title=f"Judge {judgement.substitute_count:,} substitutes of {judgement.evaluation.system}",
            effects=[
                f"add {judgement.substitute_count:,} substitutes of {len(judgement.substitutes):,} targets as "
                f"candidates (source system:{judgement.evaluation.system})",
                f"create a batch of {cost['hits']:,} HITs and {cost['assignments']:,} assignments on "
                f"{backend_label(judgement.backend)}, at ${cost['reward']} each",
                f"cost ${cost['total']} (${cost['rewards_total']} in rewards, ${cost['fees_total']} in fees) for "
                "the first step; the substitutes that pass it are judged further as the benchmark's rules say",
            ],
            button=f"Judge them for ${cost['total']}",
            cancel_url=f"{back}#judging",
            undo="The candidates can be removed again with their import (system:"
            f"{judgement.evaluation.system}); rewards already paid are not returned.",
        )
    try:
        started = services.judgement_start(judgement=judgement, by=request.user)
    except services.JudgingError as exc:
        messages.error(request, str(exc))
        return redirect(f"{back}#judging")
    messages.success(
        request,
        f"{len(started.candidate_ids):,} substitutes of {started.evaluation.system} added and sent to be judged "
        f"in batch {started.batch_id}.",
    )
    return redirect(f"{back}#judging")


@researcher_required
@require_POST
def evaluation_rescore(request: HttpRequest, name: str) -> HttpResponse:
    """Score a saved system again, from its kept result file, on the benchmark as it stands now."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    back = reverse("analysis-evaluation", args=[benchmark.name])
    try:
        evaluation = services.evaluation_find(
            benchmark=benchmark, system=request.POST.get("system", ""), split=request.POST.get("split") or None
        )
        rescored = services.system_evaluation_rescore(evaluation=evaluation, by=request.user)
    except (services.JudgingError, ResultError) as exc:
        messages.error(request, str(exc))
        return redirect(back)
    version = BenchmarkVersion.from_dict(rescored.version)
    messages.success(request, f"{rescored.system} scored again on the benchmark now ({version}).")
    return redirect(back)
