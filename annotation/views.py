from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.forms import BenchmarkCreateForm, BenchmarkImportForm
from annotation.models import ActivityKind, Benchmark, Import
from annotation.services import (
    ImportFailed,
    ImportRemovalRefused,
    benchmark_create,
    benchmark_import,
    candidates_add,
    import_delete,
)
from crowdlex.permissions import researcher_required


@researcher_required
def benchmark_list(request: HttpRequest) -> HttpResponse:
    """The benchmarks, and a form to start a new one."""
    form = BenchmarkCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            benchmark = benchmark_create(**form.cleaned_data, created_by=request.user)  # type: ignore[arg-type]
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Benchmark {benchmark.name} created. Import its data next.")
            return redirect("benchmark-import", name=benchmark.name)
    return render(
        request,
        "annotation/benchmark_list.html",
        {"benchmarks": selectors.benchmark_list(), "form": form},
        status=400 if form.errors else 200,
    )


@researcher_required
def benchmark_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The researcher's home for one benchmark: pipeline, batches, workers, statistics, exports."""
    benchmark = get_object_or_404(Benchmark, name=name)
    counts = selectors.benchmark_counts(benchmark=benchmark)
    return render(request, "annotation/benchmark_detail.html", {"benchmark": benchmark, "counts": counts})


ACTIVITY_PER_PAGE = 50


@researcher_required
def benchmark_activity(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's whole activity log, newest first, optionally of one kind, a page at a time."""
    benchmark = get_object_or_404(Benchmark, name=name)
    kind = request.GET.get("kind", "")
    if kind and kind not in ActivityKind.values:
        kind = ""
        messages.error(request, "Unknown kind of activity: showing all of it.")
    entries = selectors.activity_list(benchmark=benchmark, kind=kind or None).select_related("actor")
    page = Paginator(entries, ACTIVITY_PER_PAGE).get_page(request.GET.get("page"))
    context = {"benchmark": benchmark, "page": page, "kind": kind, "kinds": ActivityKind.choices}
    return render(request, "annotation/activity.html", context)


@researcher_required
def benchmark_import_upload(request: HttpRequest, name: str) -> HttpResponse:
    """Upload a file into the benchmark. Django keeps large uploads in a temporary file on disk,
    and the import streams from it."""
    benchmark = get_object_or_404(Benchmark, name=name)
    form = BenchmarkImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            report = benchmark_import(
                path_or_file=form.cleaned_data["file"],
                benchmark_name=benchmark.name,
                fmt=form.cleaned_data["format"],
                created_by=request.user,  # type: ignore[arg-type]
                origin=form.cleaned_data["origin"],
                new_label_set=form.cleaned_data["new_label_set"],
            )
        except ImportFailed as exc:
            form.add_error("file", str(exc))
        else:
            messages.success(
                request,
                f"Imported {report.origin}: {report.contexts.created} contexts, {report.targets.created} targets, "
                f"{report.candidates.created} candidates and {report.labels.created} labels created; "
                f"{report.candidates.merged} candidates merged, "
                f"{report.candidates.skipped + report.labels.skipped} rows already there.",
            )
            if report.new_label_set and report.label_overlaps:
                beside = report.overlapping_origins()
                messages.info(request, f"The labels were added as a new label set beside {beside}.")
            if report.id_mismatch_count:
                messages.warning(request, f"{report.id_mismatch_count} SWORDS ids do not match their fields.")
            for warning in report.warnings:
                messages.warning(request, warning)
            return redirect("benchmark-detail", name=benchmark.name)
    return render(
        request,
        "annotation/benchmark_import.html",
        {"benchmark": benchmark, "form": form},
        status=400 if form.errors else 200,
    )


@researcher_required
@require_POST
def benchmark_candidates_add(request: HttpRequest, name: str) -> HttpResponse:
    """Add candidates from a source (WordNet) to all targets, or to those named (ids or words)."""
    benchmark = get_object_or_404(Benchmark, name=name)
    source = request.POST.get("source", "")
    targets = request.POST.get("targets", "").replace(",", " ").split()
    try:
        report = candidates_add(
            benchmark=benchmark,
            source=source,
            targets=targets or None,
            created_by=request.user,  # type: ignore[arg-type]
        )
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"{report.candidates.created} new candidates from {source}; "
            f"{report.candidates.merged + report.candidates.skipped} the targets had already.",
        )
    return redirect("benchmark-detail", name=benchmark.name)


@researcher_required
def benchmark_import_delete(request: HttpRequest, name: str, origin: str) -> HttpResponse:
    """Remove an import by origin. The page first shows what would go (a dry run of the same
    service) or why it cannot, and removes on POST."""
    benchmark = get_object_or_404(Benchmark, name=name)
    dry_run = request.method != "POST"
    try:
        removal = import_delete(benchmark=benchmark, origin=origin, dry_run=dry_run, by=request.user)
    except Import.DoesNotExist as exc:
        raise Http404(str(exc)) from exc
    except ImportRemovalRefused as exc:
        context = {"benchmark": benchmark, "origin": origin, "refused": str(exc)}
        return render(request, "annotation/import_delete.html", context, status=409)
    if dry_run:
        return render(request, "annotation/import_delete.html", {"benchmark": benchmark, "removal": removal})
    messages.success(request, f"{removal.summary()}.")
    return redirect("benchmark-detail", name=benchmark.name)
