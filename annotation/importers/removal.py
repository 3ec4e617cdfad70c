"""``import_delete``: undoing an import by its origin, for the command, the API and the benchmark page."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.db.models import Model, QuerySet

from annotation.activity import activity_record
from annotation.models import (
    ActivityKind,
    Benchmark,
    Candidate,
    CandidateStage,
    Context,
    Import,
    Label,
    Target,
    TargetStage,
)
from annotation.tallies import tallies_targets_recount
from crowdlex.followup import benchmark_refresh_queue


class ImportRemovalRefused(Exception):
    """Crowd work was collected on the import's targets; ``str(error)`` says which and what to do."""


@dataclass
class ImportRemoval:
    """What removing an import took away (or would, on a dry run)."""

    benchmark: str
    origin: str
    dry_run: bool
    labels: int = 0
    candidates: int = 0
    targets: int = 0
    contexts: int = 0
    # Targets another import keeps whose labels went with this one: back to step 2, so that the
    # pipeline decides their stage again from the labels they still have.
    targets_reopened: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        verb = "would remove" if self.dry_run else "removed"
        line = (
            f"Import {self.origin} of {self.benchmark} {verb} {self.labels} labels, {self.candidates} candidates, "
            f"{self.targets} targets and {self.contexts} contexts"
        )
        if self.targets_reopened:
            line += f"; {self.targets_reopened} targets other imports keep go back to step 2"
        return line


def import_delete(*, benchmark: Benchmark, origin: str, dry_run: bool = False, by: Any = None) -> ImportRemoval:
    """Remove the import of ``origin`` from the benchmark in one transaction.

    Its labels go, and so do the candidates, targets and contexts that no other import brought
    and nothing else holds (labels of another origin, another candidate). Crowd work is never
    removed with an import: if any of its targets has HITs, the batches were planned from its rows
    and labels, and the removal is refused with :class:`ImportRemovalRefused`. An unknown origin
    raises :class:`Import.DoesNotExist` naming the benchmark's imports.

    ``dry_run`` does all of it and rolls back, so the report is exactly what a removal would do.
    The benchmark's row lock queues the removal behind imports and HIT generation.
    """
    with transaction.atomic():
        locked = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        record = Import.objects.filter(benchmark=locked, origin=origin).first()
        if record is None:
            known = ", ".join(repr(name) for name in locked.imports.values_list("origin", flat=True)) or "none"
            raise Import.DoesNotExist(f"benchmark {locked.name!r} has no import {origin!r} (its imports: {known})")
        _refuse_if_collected_on(record)
        removal = ImportRemoval(benchmark=locked.name, origin=origin, dry_run=dry_run)
        labels = Label.objects.filter(candidate__target__benchmark=locked, origin=origin, assignment__isnull=True)
        labelled_targets = set(labels.values_list("candidate__target_id", flat=True).distinct())
        removal.labels = _delete(labels, Label)

        others = Import.objects.filter(benchmark=locked).exclude(pk=record.pk)
        removal.candidates = _delete(
            Candidate.objects.filter(imports=record).exclude(imports__in=others).exclude(labels__isnull=False),
            Candidate,
        )
        removal.targets = _delete(
            Target.objects.filter(imports=record).exclude(imports__in=others).exclude(candidates__isnull=False),
            Target,
        )
        removal.contexts = _delete(
            Context.objects.filter(imports=record).exclude(imports__in=others).exclude(targets__isnull=False),
            Context,
        )
        reopened = Target.objects.filter(pk__in=labelled_targets).exclude(stage=TargetStage.REDUCE)
        # A researcher's exclusion stands whatever the labels say.
        Candidate.objects.filter(target__in=reopened).exclude(
            stage__in=[CandidateStage.REDUCE, CandidateStage.EXCLUDED]
        ).update(stage=CandidateStage.REDUCE)
        removal.targets_reopened = reopened.update(stage=TargetStage.REDUCE)
        tallies_targets_recount(target_ids=sorted(labelled_targets))
        record.delete()
        if dry_run:
            transaction.set_rollback(True)
        else:
            activity_record(
                benchmark=locked,
                kind=ActivityKind.IMPORT_REMOVED,
                summary=removal.summary(),
                by=by,
                result={
                    "origin": origin,
                    **{name: getattr(removal, name) for name in ("labels", "candidates", "targets", "contexts")},
                },
            )
        if not dry_run and removal.labels:
            # Targets that lost labels go back through the pipeline at the next refresh.
            benchmark_refresh_queue([locked.pk])
    return removal


def _refuse_if_collected_on(record: Import) -> None:
    # ``hits`` is the reverse name of HIT.target: annotation reads it without importing hits.
    batches = sorted(
        Target.objects.filter(imports=record, hits__isnull=False).values_list("hits__batch_id", flat=True).distinct()
    )
    if batches:
        raise ImportRemovalRefused(
            f"import {record.origin!r} cannot be removed: batches {', '.join(map(str, batches))} have HITs on its "
            "targets, planned from its rows and labels, and crowd work is never removed with an import"
        )


def _delete(rows: QuerySet[Any], model: type[Model]) -> int:
    """Delete the rows (and what cascades from them) and count those of ``model``."""
    _, per_model = rows.delete()
    return per_model.get(model._meta.label, 0)
