"""Researcher pages of task design (docs/batches.md, "Task design"): a batch's design, a benchmark's
template that new batches start from, and the preview of a batch as a worker sees it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.access import Role, benchmark_for, object_for, role_of, viewer_role
from annotation.models import Benchmark
from crowdlex.middleware import never_cached
from crowdlex.permissions import researcher_required
from crowds.interface import get_backend
from hits.design.forms import DesignForm, ExampleFormSet, example_initial
from hits.design.services import (
    batch_design,
    batch_design_locks,
    batch_design_set,
    benchmark_pages,
    design_template,
    design_template_set,
    pages_choices,
    pages_editable,
    step_page,
)
from hits.models import HIT, Batch
from schemes.base import Choice, Editable
from schemes.design import DesignInvalid, TaskDesign


def _design_forms(
    request: HttpRequest,
    *,
    choices: tuple[Choice, ...],
    editable: Editable,
    design: TaskDesign,
    locked: list[str],
) -> tuple[DesignForm, Any]:
    data = request.POST if request.method == "POST" else None
    form = DesignForm(data, choices=choices, editable=editable, design=design, locked=locked)
    examples = ExampleFormSet(data, initial=example_initial(design), prefix="example")
    return form, examples


def _save(form: DesignForm, examples: Any, write: Callable[[dict[str, Any]], object]) -> tuple[bool, list[str]]:
    """Check the forms, write the design; (saved, errors the fields do not show)."""
    if not (form.is_valid() and examples.is_valid()):
        return False, []
    filled = [(number, entry) for number, example in enumerate(examples, start=1) if (entry := example.example())]
    try:
        write(form.design_json([entry for _, entry in filled]))
    except DesignInvalid as invalid:
        loose: list[str] = []
        # The design numbers the examples it was given; the form, its rows (blank ones included).
        rows = [number for number, _ in filled]
        for path, errors in invalid.message_dict.items():
            field = path if path in form.fields else form.choice_field(path)
            for error in errors:
                if field is not None:
                    form.add_error(field, error)
                else:
                    loose.append(f"{_readable(path, rows)}: {error}")
        return False, loose
    return True, []


def _readable(path: str, rows: list[int]) -> str:
    """``examples[2].text`` as "Example 5, text" when the second example given is the form's fifth row."""
    if path.startswith("examples[") and "]" in path:
        given, _, rest = path.removeprefix("examples[").partition("]")
        number = rows[int(given) - 1] if given.isdigit() and 0 < int(given) <= len(rows) else given
        return f"Example {number}" + (f", {rest.lstrip('.')}" if rest else "")
    return path.replace("_", " ").capitalize()


@never_cached
@researcher_required
@require_http_methods(["GET", "POST"])
def batch_design_page(request: HttpRequest, pk: int) -> HttpResponse:
    """A batch's task design: viewers read it, editors change it (what the crowd allows once published)."""
    batch = object_for(
        request.user,
        Batch.objects.select_related("benchmark"),
        Role.EDITOR if request.method == "POST" else Role.VIEWER,
        pk=pk,
    )
    page = step_page(benchmark=batch.benchmark, step=batch.step)
    locks = batch_design_locks(batch=batch)
    form, examples = _design_forms(
        request, choices=page.choices, editable=page.editable, design=batch_design(batch=batch), locked=locks.fields
    )
    loose: list[str] = []
    if request.method == "POST":
        saved, loose = _save(form, examples, lambda data: batch_design_set(batch=batch, data=data, by=request.user))
        if saved:
            messages.success(request, f"The task design of batch {batch.pk} is saved: workers see it on the next page.")
            return redirect("batch-design", pk=batch.pk)
    context = {
        "batch": batch,
        "benchmark": batch.benchmark,
        "form": form,
        "examples": examples,
        "loose_errors": loose,
        "locks": locks,
        "may_edit": (role_of(request.user, batch.benchmark) or 0) >= Role.EDITOR,
        "preview_url": reverse("batch-worker-preview", args=[batch.pk]),
    }
    return render(request, "hits/design/batch_design.html", context)


@never_cached
@researcher_required
@require_http_methods(["GET", "POST"])
def design_template_page(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's task design template: what new batches (the batch form's, the API's, the
    command's and the pipeline's batches without a parent) start from."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR if request.method == "POST" else Role.VIEWER)
    pages = benchmark_pages(benchmark=benchmark)
    editable = pages_editable(pages)
    choices = pages_choices(pages)
    form, examples = _design_forms(
        request, choices=choices, editable=editable, design=design_template(benchmark=benchmark), locked=[]
    )
    loose: list[str] = []
    if request.method == "POST":
        saved, loose = _save(
            form, examples, lambda data: design_template_set(benchmark=benchmark, data=data, by=request.user)
        )
        if saved:
            messages.success(request, "The task design template is saved: new batches start from it.")
            return redirect("design-template", name=benchmark.name)
    context = {
        "benchmark": benchmark,
        "form": form,
        "examples": examples,
        "loose_errors": loose,
        "may_edit": (viewer_role(request.user, benchmark) or 0) >= Role.EDITOR,
        "batches": _latest_batches(benchmark),
    }
    return render(request, "hits/design/template_design.html", context)


def _latest_batches(benchmark: Benchmark) -> list[Batch]:
    return list(Batch.objects.filter(benchmark=benchmark).order_by("-pk")[:5])


@never_cached
@researcher_required
@require_GET
def batch_worker_preview(request: HttpRequest, pk: int) -> HttpResponse:
    """The page a worker of the batch's crowd sees before taking a HIT (``?hit=<id>``: that HIT of the
    batch, else its first), for researchers of the benchmark only, whatever the batch's state. It
    claims nothing, creates no assignment or binding, and records nothing: the page is read-only
    and its script sends no telemetry (docs/design.md §4.1)."""
    batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.VIEWER, pk=pk)
    hits = batch.hits.order_by("pk")
    wanted = request.GET.get("hit", "")
    found = hits.filter(pk=int(wanted)).first() if wanted.isascii() and wanted.isdigit() and len(wanted) < 19 else None
    found = found or hits.first()
    if found is None:
        raise Http404("This batch has no HIT to preview.")
    hit = HIT.objects.select_related("batch__benchmark", "target__context").get(pk=found.pk)
    previous = hits.filter(pk__lt=hit.pk).values_list("pk", flat=True).last()
    following = hits.filter(pk__gt=hit.pk).values_list("pk", flat=True).first()
    here = reverse("batch-worker-preview", args=[batch.pk])
    # Each crowd shows its own page (its backend's ``worker_preview``).
    crowd = get_backend(batch.backend).worker_preview()
    extra = {
        **crowd.viewer,
        "researcher_preview": {
            "batch": batch,
            "hit": hit,
            "number": hits.filter(pk__lte=hit.pk).count(),
            "count": hits.count(),
            "previous_url": f"{here}?hit={previous}" if previous is not None else "",
            "next_url": f"{here}?hit={following}" if following is not None else "",
            "public_url": crowd.public_url(batch, hit),
        },
    }
    return crowd.page(request, hit, extra)
