"""Writes of the guards against answers from language models: telemetry kept with an assignment, the
pledge, and a benchmark's mitigations (docs/design.md §9, docs/quality.md)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Benchmark
from hits.guards import pledge_given
from hits.models import Assignment, AssignmentTelemetry, Mitigations, Pledge
from hits.telemetry import Telemetry


class PledgeMissing(ValidationError):
    """The benchmark asks for a pledge before the first HIT and this worker has not made it."""

    def __init__(self) -> None:
        super().__init__(
            "Please confirm first that you will answer yourself, without AI tools (the box above the answers).",
            code="pledge_missing",
        )


def telemetry_store(*, assignment: Assignment, telemetry: Telemetry | None) -> None:
    """Keep the page's record of one assignment (replacing an earlier one: a return, then a late submit).
    Call in the transaction that changes the assignment's status."""
    if telemetry is None:
        return
    # One statement: an insert that replaces the row if there is one.
    AssignmentTelemetry.objects.bulk_create(
        [AssignmentTelemetry(assignment=assignment, data=telemetry.as_dict())],
        update_conflicts=True,
        unique_fields=["assignment"],
        update_fields=["data", "received_at"],
    )


def pledge_check(*, assignment: Assignment, benchmark: Benchmark, pledged: bool, required: bool) -> None:
    """Before answers are stored: refuse them (``PledgeMissing``) when the benchmark asks for a pledge that
    this worker has not made, and record the pledge given with them. Call inside the submit's transaction."""
    if not required or pledge_given(worker=assignment.worker_id, benchmark=benchmark):
        return
    if not pledged:
        raise PledgeMissing()
    Pledge.objects.get_or_create(
        assignment=assignment, defaults={"worker_id": assignment.worker_id, "benchmark": benchmark}
    )


def mitigations_update(
    *,
    benchmark: Benchmark,
    pledge: bool | None = None,
    block_copy_paste: bool | None = None,
    notice: bool | None = None,
) -> Mitigations:
    """Switch a benchmark's mitigations (only those given); pages opened from now on follow them."""
    with transaction.atomic():
        mitigations, _ = Mitigations.objects.select_for_update().get_or_create(benchmark=benchmark)
        for name, value in (("pledge", pledge), ("block_copy_paste", block_copy_paste), ("notice", notice)):
            if value is not None:
                setattr(mitigations, name, value)
        mitigations.save()
    return mitigations
