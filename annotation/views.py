from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.access import (
    AccessRefused,
    Role,
    access_grant,
    access_revoke,
    benchmark_for,
    benchmark_members,
    benchmark_to_share,
    can_manage_access,
    viewer_role,
)
from annotation.changes import one_figures_key
from annotation.forms import AccessGrantForm, BenchmarkCreateForm, BenchmarkImportForm, import_format_help
from annotation.importers.jobs import (
    candidates_job_create,
    import_job_create,
    import_job_for,
    import_job_progress,
)
from annotation.llm import LLM, ModelRequest
from annotation.models import ActivityKind, Benchmark, Import, ImportJob, ImportJobStatus
from annotation.services import (
    ImportRemovalRefused,
    benchmark_create,
    candidates_add,
    import_delete,
)
from crowdlex.confirm import confirmation_page, confirmed
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
        {"benchmarks": selectors.benchmark_list_rows(user=request.user), "form": form},
        status=400 if form.errors else 200,
    )


@researcher_required
@one_figures_key
def benchmark_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The researcher's home for one benchmark: pipeline, batches, workers, statistics, exports."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    counts = selectors.benchmark_counts(benchmark=benchmark)
    role = viewer_role(request.user, benchmark)
    context = {"benchmark": benchmark, "counts": counts, "role": role, "can_undo": (role or 0) >= Role.EDITOR}
    return render(request, "annotation/benchmark_detail.html", context)


ACTIVITY_PER_PAGE = 50


@researcher_required
def benchmark_activity(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's whole activity log, newest first, optionally of one kind, a page at a time."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    kind = request.GET.get("kind", "")
    if kind and kind not in ActivityKind.values:
        kind = ""
        messages.error(request, "Unknown kind of activity: showing all of it.")
    entries = selectors.activity_list(benchmark=benchmark, kind=kind or None).select_related("actor")
    page = Paginator(entries, ACTIVITY_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "benchmark": benchmark,
        "page": page,
        "kind": kind,
        "kinds": ActivityKind.choices,
        "can_undo": (viewer_role(request.user, benchmark) or 0) >= Role.EDITOR,
    }
    return render(request, "annotation/activity.html", context)


@researcher_required
def benchmark_import_upload(request: HttpRequest, name: str) -> HttpResponse:
    """Upload a file into the benchmark. Django keeps large uploads in a temporary file on disk;
    the upload is stored for an import job and the page goes on to the job's page at once."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    form = BenchmarkImportForm(request.POST or None, request.FILES or None, scheme=benchmark.scheme)
    if request.method == "POST" and form.is_valid():
        job = import_job_create(
            upload=form.cleaned_data["file"],
            benchmark_name=benchmark.name,
            fmt=form.cleaned_data["format"],
            origin=form.cleaned_data["origin"],
            new_label_set=form.cleaned_data["new_label_set"],
            created_by=request.user,  # type: ignore[arg-type]
        )
        return redirect("import-job", job_id=job.pk)
    jobs = ImportJob.objects.filter(benchmark=benchmark).select_related("created_by")[:JOBS_LISTED]
    return render(
        request,
        "annotation/benchmark_import.html",
        {"benchmark": benchmark, "form": form, "formats": import_format_help(benchmark.scheme), "jobs": jobs},
        status=400 if form.errors else 200,
    )


# The import page lists this many of the benchmark's latest import jobs.
JOBS_LISTED = 20
# A job's page reloads itself this often while the job is pending or running.
JOB_PAGE_REFRESH_SECONDS = 2


@researcher_required
def import_job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    """An import job: its progress while it runs, then its report or its error (file, line, field)."""
    job = import_job_for(request.user, job_id)
    progress = import_job_progress(job) if job.status == ImportJobStatus.RUNNING else None
    share = None
    if progress and progress.get("total"):
        share = min(progress["done"] / progress["total"], 1.0)
    context = {
        "job": job,
        "progress": progress,
        "share": share,
        "report": job.report,
        "error": job.error,
        "refresh": JOB_PAGE_REFRESH_SECONDS
        if job.status in (ImportJobStatus.PENDING, ImportJobStatus.RUNNING)
        else None,
    }
    return render(request, "annotation/import_job.html", context)


@researcher_required
@require_POST
def benchmark_candidates_add(request: HttpRequest, name: str) -> HttpResponse:
    """Add candidates from a source to all targets, or to those named (ids or words): WordNet at once;
    a language model as a job whose page follows it (docs/candidates.md), or, dry, its first prompt
    and its cost estimate at once."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    source = request.POST.get("source", "")
    targets = request.POST.get("targets", "").replace(",", " ").split()
    if source == LLM:
        return _model_candidates(request, benchmark, targets)
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


def _number(raw: str, kind: type[int] | type[float], name: str) -> int | float | None:
    if not raw.strip():
        return None
    try:
        return kind(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {raw!r}") from None


def _model_candidates(request: HttpRequest, benchmark: Benchmark, targets: list[str]) -> HttpResponse:
    """The model form's POST: a dry run answered at once, else a job, followed on its page."""
    try:
        asked = ModelRequest(
            model=request.POST.get("model", "").strip(),
            per_target=_number(request.POST.get("per_target", ""), int, "substitutes per target"),  # type: ignore[arg-type]
            temperature=_number(request.POST.get("temperature", ""), float, "the temperature"),
            prompt=request.POST.get("prompt", "").strip() or None,
            prompt_name="the prompt",
        )
        if request.POST.get("dry_run"):
            report = candidates_add(benchmark=benchmark, source=LLM, targets=targets or None, model=asked, dry_run=True)
            messages.info(request, report.summary())
            return redirect(f"{reverse('benchmark-detail', args=[benchmark.name])}#model-candidates")
        job = candidates_job_create(
            benchmark=benchmark,
            source=LLM,
            targets=targets or None,
            model=asked,
            created_by=request.user,
        )
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect(f"{reverse('benchmark-detail', args=[benchmark.name])}#model-candidates")
    return redirect("import-job", job_id=job.pk)


@researcher_required
def benchmark_import_delete(request: HttpRequest, name: str, origin: str) -> HttpResponse:
    """Remove an import by origin. The page first shows what would go (a dry run of the same
    service) or why it cannot, and removes on POST."""
    benchmark = benchmark_for(request.user, name, Role.OWNER)
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


@researcher_required
def benchmark_access(request: HttpRequest, name: str) -> HttpResponse:
    """Who has which role in the benchmark; its owners grant, change and revoke roles here."""
    if request.method == "POST":
        benchmark = benchmark_to_share(request.user, name)
        form = AccessGrantForm(request.POST)
        if form.is_valid():
            user, role = form.cleaned_data["username"], Role(form.cleaned_data["role"])
            try:
                access_grant(benchmark=benchmark, user=user, role=role, by=request.user)
            except AccessRefused as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"{user.get_username()} is {role.label} of {benchmark.name}.")
                return redirect("benchmark-access", name=benchmark.name)
    else:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        form = AccessGrantForm()
    context = {
        "benchmark": benchmark,
        "members": benchmark_members(benchmark=benchmark),
        "form": form,
        "manages": can_manage_access(request.user, benchmark),
        "can_undo": (viewer_role(request.user, benchmark) or 0) >= Role.EDITOR,
    }
    return render(request, "annotation/benchmark_access.html", context, status=400 if form.errors else 200)


@researcher_required
@require_POST
def benchmark_access_revoke(request: HttpRequest, name: str, user_id: int) -> HttpResponse:
    benchmark = benchmark_to_share(request.user, name)
    member = get_object_or_404(benchmark_members(benchmark=benchmark), user_id=user_id)
    if not confirmed(request):
        username = member.user.get_username()
        return confirmation_page(
            request,
            title=f"Remove {username}'s access to {benchmark.name}",
            effects=[
                f"take away {username}'s {Role(member.role).label} role in {benchmark.name}: they can no longer "
                "see or change it, on the pages or through the API",
                f"keep everything {username} did in it",
            ],
            button=f"Remove {username}",
            cancel_url=reverse("benchmark-access", kwargs={"name": benchmark.name}),
            undo="An owner can grant a role again on this page.",
        )
    try:
        access_revoke(benchmark=benchmark, user=member.user)
    except AccessRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{member.user.get_username()} no longer has access to {benchmark.name}.")
    return redirect("benchmark-access", name=benchmark.name)
