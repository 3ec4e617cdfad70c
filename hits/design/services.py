"""A batch's task design and its benchmark's template (docs/design.md §4.1): read, checked, written.

One function per operation, called by the design pages, the API and the ``create_batch`` command:
``batch_design_set`` (a batch's), ``design_template_set`` (a benchmark's, which new batches start
from) and ``design_options`` (the batch options a new batch takes from a design or the template).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark
from crowds.interface import get_backend
from hits.models import Assignment, Batch, DesignTemplate
from schemes import get_scheme
from schemes.base import Choice, Editable, Page
from schemes.design import LISTING_FIELDS, DesignInvalid, TaskDesign, design_from_json, design_stored


def step_page(*, benchmark: Benchmark, step: int) -> Page:
    """The page a batch of ``step`` shows (the scheme that runs the step's)."""
    return get_scheme(benchmark, step=step).page


def benchmark_pages(*, benchmark: Benchmark) -> list[Page]:
    """Every page the benchmark's batches may show, one per scheme that runs a step, in step order."""
    pages: list[Page] = []
    for step in get_scheme(benchmark).steps:
        page = step_page(benchmark=benchmark, step=step.number)
        if all(page is not known for known in pages):
            pages.append(page)
    return pages


def pages_editable(pages: list[Page]) -> Editable:
    """What a design may change on at least one of ``pages``."""
    return Editable(
        choice_labels=any(page.editable.choice_labels for page in pages),
        choice_keys=any(page.editable.choice_keys for page in pages),
    )


def pages_choices(pages: list[Page]) -> tuple[Choice, ...]:
    """The choices a design of ``pages`` may rename: those of the first page that lets it (the
    schemes' steps share one page of choices at most)."""
    return next((page.choices for page in pages if page.choices and page.editable != Editable()), ())


def batch_design(*, batch: Batch) -> TaskDesign:
    """The batch's design, its listing read from its columns (what the crowd is told)."""
    return design_stored(batch.design).with_listing(
        title=batch.title, description=batch.description, keywords=batch.keywords
    )


@dataclass(frozen=True)
class DesignLocks:
    """What of a batch's design may no longer change, and why (empty: nothing is locked)."""

    listing: str = ""
    keys: str = ""

    @property
    def fields(self) -> list[str]:
        """The design's fields that are locked, as the API names them."""
        return [*(LISTING_FIELDS if self.listing else ()), *(["keys"] if self.keys else [])]


def batch_design_locks(*, batch: Batch) -> DesignLocks:
    """A crowd that keeps its own record of the work (``remote``: MTurk's HIT type, Prolific's
    study) holds its own copy of the listing once the batch is published there, so the title,
    description and keywords stay as published. Once any worker has taken a HIT the keys stay
    too: a worker who learnt them must not press a key that now means another answer. Instructions,
    examples and labels may always change; a worker sees them on the next page they open."""
    listing = ""
    if get_backend(batch.backend).remote and "published_at" in batch.external:
        listing = (
            f"{batch.get_backend_display()} shows its own copy of the title, description and keywords since "
            "the batch was published there, so they cannot change"
        )
    keys = ""
    if Assignment.objects.filter(hit__batch=batch).exists():
        keys = (
            "workers have already taken HITs of this batch with these keys, so the keys stay "
            "(a key that came to mean another answer would record the wrong one)"
        )
    return DesignLocks(listing=listing, keys=keys)


def _locked_changes(*, current: TaskDesign, new: TaskDesign, page: Page, locks: DesignLocks) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if locks.listing:
        for name in LISTING_FIELDS:
            if getattr(new, name) and getattr(new, name) != getattr(current, name):
                errors[name] = [locks.listing]
    if locks.keys:
        before = {choice.value: choice.keys for choice in current.apply(page).choices}
        after = {choice.value: choice.keys for choice in new.for_page(page).apply(page).choices}
        for value, keys in after.items():
            if keys != before.get(value):
                errors[f"choices.{value}.keys"] = [locks.keys]
    return errors


def batch_design_set(*, batch: Batch, data: Mapping[str, Any], by: Any = None) -> Batch:
    """Give ``batch`` the design ``data`` (JSON, as ``design_from_json`` reads it) and return it.

    The page part (instructions, examples, choices) is replaced as a whole; an empty title,
    description or keywords keeps the batch's. Refused with ``DesignInvalid`` naming each field
    that does not fit the page of the batch's step or is locked (``batch_design_locks``).
    Concurrency: the batch's row is locked while the design is checked against it and written.
    """
    with transaction.atomic():
        batch = Batch.objects.select_for_update().select_related("benchmark").get(pk=batch.pk)
        page = step_page(benchmark=batch.benchmark, step=batch.step)
        design = design_from_json(dict(data), pages=[page])
        current = batch_design(batch=batch)
        errors = _locked_changes(current=current, new=design, page=page, locks=batch_design_locks(batch=batch))
        if errors:
            raise DesignInvalid(errors)
        batch.design = design.for_page(page).page_part()
        changed = ["design"]
        for name in LISTING_FIELDS:
            if getattr(design, name):
                setattr(batch, name, getattr(design, name))
                changed.append(name)
        batch.save(update_fields=changed)
        activity_record(
            benchmark=batch.benchmark,
            kind=ActivityKind.SETTING_CHANGED,
            summary=f"task design of batch {batch.pk} changed",
            by=by,
            result={"batch": batch.pk, "design": batch_design(batch=batch).to_json()},
        )
    return batch


def design_template(*, benchmark: Benchmark) -> TaskDesign:
    """The design the benchmark's new batches start from (an empty one when none was set)."""
    template = DesignTemplate.objects.filter(benchmark=benchmark).first()
    return design_stored(template.design) if template is not None else design_stored(None)


def design_template_set(*, benchmark: Benchmark, data: Mapping[str, Any], by: Any = None) -> TaskDesign:
    """Make ``data`` the benchmark's design template, checked against the page of every step (the
    choices of a step with choices, the instructions of every step). Batches that exist keep their
    own design; new batches, their clones' sources aside, start from this one."""
    design = design_from_json(dict(data), pages=benchmark_pages(benchmark=benchmark))
    with transaction.atomic():
        DesignTemplate.objects.update_or_create(
            benchmark=benchmark,
            defaults={"design": design.to_json(), "updated_by": by if getattr(by, "pk", None) else None},
        )
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.SETTING_CHANGED,
            summary="task design template changed: new batches start from it",
            by=by,
            result={"design_template": design.to_json()},
        )
    return design


def design_options(
    *, benchmark: Benchmark, step: int, data: Mapping[str, Any] | None = None, given: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The batch options (``design`` and the listing) a new batch of ``step`` takes: from ``data``
    (a design, checked against the step's page; ``DesignInvalid`` when it does not fit) or else the
    benchmark's template, leaving alone the options a caller ``given`` already names."""
    page = step_page(benchmark=benchmark, step=step)
    design = design_template(benchmark=benchmark) if data is None else design_from_json(dict(data), pages=[page])
    given = given or {}
    options: dict[str, Any] = {}
    if "design" not in given:
        options["design"] = design.for_page(page).page_part()
    for name in LISTING_FIELDS:
        if getattr(design, name) and name not in given:
            options[name] = getattr(design, name)
    return options
