"""Researcher pages of the analysis: a benchmark's statistics with plots, its exports, and systems
evaluated against it (its leaderboard)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from analysis import exports, plot_files, services, targets
from analysis.api import direct_export_allowed, direct_export_response, export_job_download_response
from analysis.evaluation import ResultError
from analysis.figures import scheme_figures, statistics_page_context
from analysis.forms import TargetSearchForm
from analysis.models import ExportJob, ExportStatus
from analysis.services.aggregation import candidate_posteriors, worker_rows_with_reliability
from annotation.access import Role, benchmark_for, object_for
from annotation.changes import benchmark_cached
from annotation.importers import validate_upload_size
from annotation.models import Candidate, Target
from crowdlex.permissions import researcher_required
from review.selectors import interaction_summary

ACTIVE = (ExportStatus.PENDING, ExportStatus.RUNNING)
# Sentences (or targets) on a page of merged suggestions (or of proposals).
TARGETS_PER_PAGE = 100


@researcher_required
def target_list(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's targets, searched by word, part of speech, stage and score range (GET), a page at a time."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    form = TargetSearchForm(request.GET or None, benchmark=benchmark)
    found = targets.target_search(benchmark=benchmark, **(form.search_arguments() if form.is_valid() else {}))
    page = Paginator(found, TARGETS_PER_PAGE).get_page(request.GET.get("page"))
    # The search without its page number, for the pager's links.
    query = request.GET.copy()
    query.pop("page", None)
    context = {"benchmark": benchmark, "form": form, "page": page, "query": query.urlencode()}
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
def benchmark_statistics(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's figures as its scheme reports them (its figures' template and context)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    figures = scheme_figures(benchmark)
    interaction = benchmark_cached(
        benchmark=benchmark, name="interaction", compute=lambda: interaction_summary(benchmark=benchmark)
    )
    source_yield = benchmark_cached(
        benchmark=benchmark, name="source_yield", compute=lambda: services.benchmark_source_yield(benchmark=benchmark)
    )
    context = {**statistics_page_context(benchmark), "interaction": interaction, "source_yield": source_yield}
    if request.GET.get("reliability") == "1" and "workers" in context:
        # Two fits over every label: computed when asked, so the page stays quick by default.
        context["workers"] = worker_rows_with_reliability(benchmark=benchmark, rows=context["workers"])
        context["with_reliability"] = True
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
def benchmark_evaluation(request: HttpRequest, name: str) -> HttpResponse:
    """Upload a system's result file and see its figures; the leaderboard of saved systems. The
    format, the figures and the leaderboard's columns are those of the scheme's evaluator; a
    benchmark whose scheme declares no evaluation has no such page (404, saying why)."""
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
        try:
            if upload is None:
                raise ResultError("Choose a result file.")
            validate_upload_size(upload)
            services.split_check(benchmark=benchmark, split=split)
            result = services.result_load(benchmark=benchmark, source=upload)
            evaluated = services.system_evaluate(benchmark=benchmark, result=result, split=split)
            if system:
                services.system_evaluation_save(
                    benchmark=benchmark,
                    system=system,
                    figures=evaluated,
                    split=split,
                    created_by=request.user,  # type: ignore[arg-type]
                )
                messages.success(request, f"{system} is on the leaderboard.")
            figures = [(figure, evaluated.get(figure.name)) for figure in evaluator.figures]
        except (ResultError, ValueError, ValidationError) as exc:
            messages.error(request, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))
            refused = True
    columns = [evaluator.figure(column) for column in evaluator.leaderboard]
    splits = services.benchmark_splits(benchmark=benchmark)
    leaderboards = [
        (
            split_name,
            [
                (row, [(column, row.get(column.name)) for column in columns])
                for row in services.benchmark_leaderboard(benchmark=benchmark, split=split_name)
            ],
        )
        for split_name in [None, *splits]
    ]
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
        },
        status=400 if refused else 200,
    )
