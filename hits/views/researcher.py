"""Researcher pages for batches and HITs: lists, progress, a HIT's items and answers, annotators' flags."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST

from annotation.access import Role, benchmark_for, object_for
from annotation.models import Candidate
from crowdlex.confirm import confirmed
from crowdlex.kept_pages import resumable
from crowdlex.permissions import researcher_required
from crowds.interface import get_backend
from hits import selectors, services
from hits.exports import hits_csv_chunks
from hits.forms import BatchCloneForm, BatchCreateForm, batch_clone_fields, batch_form_fields
from hits.models import HIT, Batch
from hits.preview import PreviewPanel, batch_preview, preview_panels
from hits.rows import batch_hit_rows, duration
from hits.views.confirmations import batch_close_confirmation, candidate_exclude_confirmation
from hits.views.operations import batch_operations_context
from schemes import get_scheme

HITS_PER_PAGE = 100
FLAGS_PER_PAGE = 100


@researcher_required
def batch_list(request: HttpRequest, name: str) -> HttpResponse:
    """A benchmark's batches with their progress, and the form that creates one (editors)."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR if request.method == "POST" else Role.VIEWER)
    scheme = get_scheme(benchmark)
    preview = None
    panels: list[PreviewPanel] = []
    form: BatchCreateForm | None
    form_fields: SafeString | None = None
    if request.method == "POST":
        form = BatchCreateForm(request.POST, steps=scheme.steps)
        if form.is_valid() and "preview" in request.POST:
            # What the batch would be and cost, planned by the code that creates it; nothing is written.
            try:
                preview = batch_preview(benchmark=benchmark, **form.service_arguments())
                panels = preview_panels(benchmark=benchmark, preview=preview)
            except services.HitsGenerationError as error:
                form.add_error(None, str(error))
        elif form.is_valid():
            try:
                batch = services.hits_generate(
                    benchmark=benchmark,
                    created_by=request.user if isinstance(request.user, User) else None,
                    **form.service_arguments(),
                )
            except services.HitsGenerationError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, f"Batch {batch.pk} created with {batch.hits.count()} HITs.")
                return redirect("batch-detail", pk=batch.pk)
    else:
        # Unbound: its fields as kept by what they show (hits.forms.batch_form_fields).
        form = None
        form_fields = batch_form_fields(benchmark=benchmark, steps=scheme.steps)
    batches = selectors.benchmark_batch_list(benchmark=benchmark)
    progress = selectors.batches_progress(batches=batches)
    throughput = selectors.batches_throughput(batches=batches, progress=progress)
    rows = [(batch, progress[batch.pk], throughput[batch.pk]) for batch in batches]
    context = {
        "benchmark": benchmark,
        "rows": rows,
        "form": form,
        "form_fields": form_fields,
        "batch_help": scheme.describe_batches(scheme.settings(benchmark)),
        "preview": preview,
        "preview_panels": panels,
    }
    return render(request, "hits/batch_list.html", context)


@researcher_required
def benchmark_assignments(request: HttpRequest, name: str) -> HttpResponse:
    """Work assigned to named annotators (ProLex's experts): who has which share, how far they are,
    and the form that assigns more (it posts to the batch list, which generates the batch)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    scheme = get_scheme(benchmark)
    context = {
        "benchmark": benchmark,
        "annotators": selectors.benchmark_assignments(benchmark=benchmark),
        "form": BatchCreateForm(initial={"seed": benchmark.seed}, steps=scheme.steps),
        "batch_help": scheme.describe_batches(scheme.settings(benchmark)),
    }
    return render(request, "hits/benchmark_assignments.html", context)


@researcher_required
def batch_detail(request: HttpRequest, pk: int) -> HttpResponse:
    batch = object_for(request.user, Batch.objects.select_related("benchmark", "created_by"), Role.VIEWER, pk=pk)
    page = selectors.batch_hits_page(batch=batch, number=request.GET.get("page"), per_page=HITS_PER_PAGE)
    progress, throughput = selectors.batch_live(batch=batch)
    context = {
        "batch": batch,
        "progress": progress,
        "page": page,
        "hit_rows": batch_hit_rows(page.object_list),
        # The clone form's fields as kept unbound (hits.forms.batch_clone_fields).
        "clone_fields": batch_clone_fields(batch=batch),
        # The batch's crowd: its fees in the costs, and whether it has a crowd page.
        "crowd": get_backend(batch.backend),
        **batch_operations_context(batch=batch, throughput=throughput),
    }
    return render(request, "hits/batch_detail.html", context)


@researcher_required
def batch_live(request: HttpRequest, pk: int) -> JsonResponse:
    """The batch page's figures, as the page shows them, for static/crowdlex/live.js to refresh."""
    batch = object_for(request.user, Batch.objects.all(), Role.VIEWER, pk=pk)
    progress, throughput = selectors.batch_live(batch=batch)
    figures = {
        "batch.status": batch.get_status_display(),
        "batch.hits": f"{progress.hits_complete} / {progress.hits_total}",
        "batch.assignments": f"{progress.assignments_valid} / {progress.assignments_required}",
        "batch.filtered": str(progress.assignments_filtered),
        "batch.in_flight": str(progress.assignments_in_flight),
        "batch.median": duration(progress.median_seconds),
        "batch.cost": f"${progress.cost_so_far:.2f} / ${progress.cost_projected:.2f}",
        "batch.last_hour": str(throughput.last_hour),
        "batch.eta": throughput.eta_words,
        "batch.eta_basis": throughput.basis,
    }
    bars = {"batch.hits": round(progress.percent_complete), "batch.assignments": round(progress.percent_assignments)}
    return JsonResponse({"figures": figures, "bars": bars})


@researcher_required
@require_POST
def batch_clone(request: HttpRequest, pk: int) -> HttpResponse:
    """A new batch with this batch's settings, for other targets or on another backend."""
    batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.EDITOR, pk=pk)
    form = BatchCloneForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            text = " ".join(str(error) for error in errors)
            messages.error(request, f"{field}: {text}" if field != "__all__" else text)
        return redirect("batch-detail", pk=batch.pk)
    try:
        clone = services.batch_clone(
            batch=batch,
            created_by=request.user if isinstance(request.user, User) else None,
            **form.cleaned_data,
        )
    except services.HitsGenerationError as error:
        messages.error(request, f"No clone made: {error}.")
        return redirect("batch-detail", pk=batch.pk)
    messages.success(
        request, f"Batch {clone.pk} created as a clone of batch {batch.pk} with {clone.hits.count()} HITs."
    )
    return redirect("batch-detail", pk=clone.pk)


@researcher_required
@require_POST
def batch_close(request: HttpRequest, pk: int) -> HttpResponse:
    batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
    if not confirmed(request):
        cancel = reverse("batch-detail", kwargs={"pk": batch.pk})
        return batch_close_confirmation(request, batch=batch, cancel_url=cancel)
    if services.batch_close(batch=batch, by=request.user):
        messages.success(request, f"Batch {batch.pk} is closed: it offers no more HITs.")
    return redirect("batch-detail", pk=batch.pk)


@researcher_required
@require_POST
def batch_reopen(request: HttpRequest, pk: int) -> HttpResponse:
    batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
    try:
        if services.batch_reopen(batch=batch, by=request.user):
            messages.success(request, f"Batch {batch.pk} is open again.")
    except services.BatchStateError as error:
        messages.error(request, str(error))
    return redirect("batch-detail", pk=batch.pk)


# researcher_required is typed for HttpResponse; a streaming response is just as fine for it.
@researcher_required  # type: ignore[type-var]
def batch_export(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    """The batch as an MTurk-style input CSV, streamed a batch of rows at a time."""
    batch = object_for(request.user, Batch.objects.all(), Role.VIEWER, pk=pk)
    chunks = hits_csv_chunks(batch=batch)
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="batch-{batch.pk}-hits.csv"'
    # A body longer than the kept pages' cap keeps its head (docs/design.md §7, "Kept pages").
    return resumable(response, chunks)


@researcher_required
def hit_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A HIT's items in display order (controls marked) and each assignment's answers, as its scheme shows them."""
    object_for(request.user, HIT.objects.all(), Role.VIEWER, pk=pk)
    try:
        hit = selectors.hit_with_items(hit_id=pk)
    except HIT.DoesNotExist as error:
        raise Http404("No such HIT.") from error
    assignments = list(selectors.hit_assignments(hit=hit))
    table = selectors.hit_answer_table(hit=hit, assignments=assignments)
    text, start = hit.target.context.text, hit.target.offset
    # The scheme that runs the HIT's step shows its answers (schemes.base.Page.answers_template).
    scheme = get_scheme(hit.batch.benchmark, step=hit.batch.step)
    context = {
        "hit": hit,
        "assignments": assignments,
        "table": table,
        "before": text[:start],
        "after": text[start + len(hit.target.word) :],
        "kind_labels": scheme.item_kinds,
        "choices": scheme.page.choices,
        "answers_template": scheme.page.answers_template,
        "flags": list(selectors.hit_flags(hit=hit)),
    }
    return render(request, "hits/hit_detail.html", context)


@researcher_required
def benchmark_flags(request: HttpRequest, name: str) -> HttpResponse:
    """Every flag annotators raised in the benchmark's HITs, by target."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    page = Paginator(selectors.benchmark_flags(benchmark=benchmark), FLAGS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "hits/benchmark_flags.html", {"benchmark": benchmark, "page": page})


@researcher_required
@require_POST
def candidate_exclude(request: HttpRequest, pk: int) -> HttpResponse:
    """Exclude a (flagged) candidate from its benchmark, then go back to the page it was excluded from."""
    candidate = object_for(request.user, Candidate.objects.select_related("target__benchmark"), Role.EDITOR, pk=pk)
    if not confirmed(request):
        cancel = reverse("benchmark-flags", kwargs={"name": candidate.target.benchmark.name})
        return candidate_exclude_confirmation(request, candidate=candidate, cancel_url=cancel)
    if services.candidate_exclude(candidate=candidate, by=request.user):
        messages.success(request, f"“{candidate.text}” is excluded from {candidate.target.benchmark.name}.")
    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return redirect(back)
    return redirect("benchmark-flags", name=candidate.target.benchmark.name)
