"""Researcher pages of the analysis: a benchmark's statistics with plots, and its exports."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST

from analysis import exports, plots, services
from analysis.api import direct_export_allowed, direct_export_response, export_job_download_response
from analysis.models import ExportJob, ExportStatus
from analysis.stats import SOURCE_GROUPS
from annotation.models import Benchmark
from crowdlex.permissions import researcher_required
from schemes.swords.settings import settings_of

FORMAT_NAMES = {
    exports.SWORDS: "SWORDS JSON (readable by the swords library)",
    exports.LABELS_CSV: "labels, one row per label (CSV)",
    exports.CANDIDATES_CSV: "candidates with scores, one row per candidate (CSV)",
    exports.STATS: "statistics, agreement and filter audit (JSON)",
}
TOP_PAIRS = 20
ACTIVE = (ExportStatus.PENDING, ExportStatus.RUNNING)


def _svg(text: str) -> SafeString:
    # analysis.plots escapes every piece of text it writes, worker names included.
    return mark_safe(text)


def _score_chart(statistics: dict[str, Any]) -> SafeString:
    series: dict[str, list[float]] = {}
    bins: list[str] = []
    for group in SOURCE_GROUPS:
        row = statistics["by_source"].get(group)
        if row is None:
            continue
        counts = row["score_histogram"]["counts"]
        bins = row["score_histogram"]["bins"]
        total = sum(counts)
        if total:
            series[group] = [count / total for count in counts]
    return _svg(
        plots.grouped_histogram(
            title="Score distribution by source",
            bins=bins,
            series=series,
            x_label="score (accepts / labels)",
            y_label="share of the source's candidates",
        )
    )


def _rbo_chart(agreement: dict[str, Any]) -> SafeString | None:
    rbo = agreement["rbo"]
    if rbo is None:
        return None
    points = [(point["k"], point["mean"], point["std"] or 0.0) for point in rbo["points"] if point["mean"] is not None]
    return _svg(
        plots.line_with_error(
            title=f"Rank-biased overlap against k labels (p = {rbo['p']})",
            points=points,
            x_label="labels drawn per candidate from the re-annotation (k)",
            y_label="RBO with the benchmark's ranking",
        )
    )


def _worker_chart(agreement: dict[str, Any], benchmark: Benchmark) -> SafeString:
    workers = agreement["worker_agreement"]
    controlled = [
        (row["control_accuracy"], row["agreement"], row["worker"])
        for row in workers
        if row["control_accuracy"] is not None and row["agreement"] is not None
    ]
    if controlled:
        return _svg(
            plots.scatter(
                title="Workers: control accuracy and agreement with the majority",
                points=controlled,
                x_label="control accuracy",
                y_label="agreement with the leave-one-out majority",
                x_threshold=settings_of(benchmark).min_control_accuracy,
            )
        )
    values = [row["agreement"] for row in workers if row["agreement"] is not None]
    if not values:
        return _svg(plots.empty_chart("Workers", "The labels name no workers (as in the public SWORDS files)."))
    counts = [0] * 10
    for value in values:
        counts[min(int(value * 10), 9)] += 1
    return _svg(
        plots.grouped_histogram(
            title="Workers: agreement with the leave-one-out majority (no control answers recorded)",
            bins=[f"{i / 10:g}-{(i + 1) / 10:g}" for i in range(10)],
            series={"workers": [count / len(values) for count in counts]},
            x_label="agreement",
            y_label="share of workers",
        )
    )


@researcher_required
def benchmark_statistics(request: HttpRequest, name: str) -> HttpResponse:
    """SWORDS Table 2 figures, score distribution by source, agreement, workers and the filter audit."""
    benchmark = get_object_or_404(Benchmark, name=name)
    data = services.benchmark_data(benchmark=benchmark)
    statistics = services.benchmark_statistics(benchmark=benchmark, data=data)
    agreement = services.benchmark_agreement(benchmark=benchmark, data=data)
    audit = services.benchmark_filter_audit(benchmark=benchmark, data=data)
    pairs = sorted(agreement["kappa"].get("pairs", []), key=lambda pair: -pair["items"])[:TOP_PAIRS]
    workers = sorted(agreement["worker_agreement"], key=lambda row: (row["agreement"] is None, row["agreement"] or 0))
    per_target = [
        {
            "name": key,
            "all": statistics["per_target"][key],
            "nonempty": statistics["per_target_nonempty"][key],
            "targets": statistics["per_target_nonempty"]["targets"][key],
        }
        for key in ("candidates", "inconceivable", "conceivable", "acceptable")
    ]
    context = {
        "benchmark": benchmark,
        "scheme_settings": settings_of(benchmark),
        "statistics": statistics,
        "per_target": per_target,
        "by_source": [
            (group, statistics["by_source"][group]) for group in SOURCE_GROUPS if group in statistics["by_source"]
        ],
        "by_pos": sorted(statistics["by_pos"].items()),
        "agreement": agreement,
        "pairs": pairs,
        "workers": workers[:50],
        "audit": audit,
        "origins": data.origins,
        "reannotation_origin": data.reannotation_origin,
        "score_chart": _score_chart(statistics),
        "rbo_chart": _rbo_chart(agreement),
        "worker_chart": _worker_chart(agreement, benchmark),
    }
    return render(request, "analysis/statistics.html", context)


@researcher_required
@require_POST
def benchmark_reannotation(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, name=name)
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
    benchmark = get_object_or_404(Benchmark, name=name)
    if request.method == "POST":
        format = request.POST.get("format", "")
        if format not in exports.FORMATS:
            messages.error(request, f"Unknown export format {format!r}.")
        else:
            job = services.export_job_create(
                benchmark=benchmark,
                format=format,
                compress=request.POST.get("compress") == "on",
                created_by=request.user,  # type: ignore[arg-type]
            )
            messages.success(request, f"Export {job.pk} ({format}) queued.")
        return redirect("analysis-exports", name=benchmark.name)
    jobs = ExportJob.objects.filter(benchmark=benchmark).select_related("created_by")[:30]
    formats = [
        {"name": key, "description": description, "direct": direct_export_allowed(benchmark=benchmark, format=key)}
        for key, description in FORMAT_NAMES.items()
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
    benchmark = get_object_or_404(Benchmark, name=name)
    return direct_export_response(benchmark=benchmark, format=format)


@researcher_required
@require_POST
def export_job_restart(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(ExportJob.objects.select_related("benchmark"), pk=job_id)
    if services.export_job_restart(job=job):
        messages.success(request, f"Export {job.pk} ({job.format}) queued again.")
    else:
        messages.error(request, f"Export {job.pk} is {job.status}: only a failed one restarts.")
    return redirect("analysis-exports", name=job.benchmark.name)


@researcher_required
def export_job_download(request: HttpRequest, job_id: int) -> HttpResponseBase:
    return export_job_download_response(get_object_or_404(ExportJob, pk=job_id))
