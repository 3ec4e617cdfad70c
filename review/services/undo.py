"""Undoing a reversible decision from the activity log (docs/design.md §11): closing or pausing a
batch, excluding a candidate, blocking a worker, deciding a candidate (docs/design.md §17). Each undo
calls the inverse service, which writes its own entry in the log (batch reopened or resumed,
candidate brought back, worker unblocked, the earlier decision put back)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.models import Activity, ActivityKind, Candidate, CandidateStage, Worker
from crowds.interface import BackendError, get_backend
from crowds.services import CrowdActionRefused, batch_resume
from hits.models import Batch, BatchStatus
from hits.services import BatchStateError, batch_reopen, candidate_include
from review.adjudication import candidate_override_restore
from review.models import CandidateOverride
from review.services.workers import worker_unblock

UNDOABLE = (
    ActivityKind.BATCH_CLOSED,
    ActivityKind.BATCH_PAUSED,
    ActivityKind.CANDIDATE_EXCLUDED,
    ActivityKind.BLOCKED,
    ActivityKind.OVERRIDDEN,
)


class UndoRefused(ValueError):
    """The entry cannot be undone (not a reversible kind, already undone, or its row is gone)."""


@dataclass(frozen=True)
class UndoPlan:
    """What undoing an entry would do, in words, before it is done."""

    title: str
    effects: list[str]
    button: str


def _batch(activity: Activity) -> Batch:
    batch = Batch.objects.filter(pk=activity.result.get("batch"), benchmark_id=activity.benchmark_id).first()
    if batch is None:
        raise UndoRefused("the batch of this entry no longer exists")
    return batch


def _candidate(activity: Activity) -> Candidate:
    candidate = (
        Candidate.objects.select_related("target")
        .filter(pk=activity.result.get("candidate"), target__benchmark_id=activity.benchmark_id)
        .first()
    )
    if candidate is None:
        raise UndoRefused("the candidate of this entry no longer exists")
    return candidate


def _worker(activity: Activity) -> Worker:
    worker = Worker.objects.filter(kind=activity.result.get("kind"), external_id=activity.result.get("worker")).first()
    if worker is None:
        raise UndoRefused("the worker of this entry no longer exists")
    return worker


def _stage(activity: Activity) -> str:
    stage = activity.result.get("stage")
    # An exclusion logged before the stage was kept: the candidate is collected from the start.
    return stage if stage in CandidateStage.values and stage != CandidateStage.EXCLUDED else CandidateStage.REDUCE


def activity_undo_plan(*, activity: Activity) -> UndoPlan:
    """What ``activity_undo`` would do now; ``UndoRefused`` when there is nothing to undo."""
    if activity.kind == ActivityKind.BATCH_CLOSED:
        batch = _batch(activity)
        if batch.status != BatchStatus.CLOSED:
            raise UndoRefused(f"batch {batch.pk} is open already")
        return UndoPlan(
            title=f"Reopen batch {batch.pk}",
            effects=[f"offer the {batch.hits.count()} HITs of batch {batch.pk} to annotators again"],
            button="Reopen the batch",
        )
    if activity.kind == ActivityKind.BATCH_PAUSED:
        batch = _batch(activity)
        if batch.paused_at is None:
            raise UndoRefused(f"batch {batch.pk} is not paused any more")
        return UndoPlan(
            title=f"Resume batch {batch.pk}",
            effects=[
                f"hand out the HITs of batch {batch.pk} again on {batch.get_backend_display()}",
                get_backend(batch.backend).pause_meaning,
            ],
            button="Resume the batch",
        )
    if activity.kind == ActivityKind.CANDIDATE_EXCLUDED:
        candidate = _candidate(activity)
        if candidate.stage != CandidateStage.EXCLUDED:
            raise UndoRefused(f"“{candidate.text}” is not excluded any more")
        labels = candidate.labels.count()
        return UndoPlan(
            title=f"Bring back “{candidate.text}”",
            effects=[
                f"count “{candidate.text}” of target {candidate.target_id} and its {labels} labels "
                "in statistics, scores and exports again",
                "collect it again where it stood when it was excluded",
            ],
            button="Bring the candidate back",
        )
    if activity.kind == ActivityKind.BLOCKED:
        worker = _worker(activity)
        if not worker.blocked:
            raise UndoRefused(f"{worker.external_id} is not blocked any more")
        return UndoPlan(
            title=f"Unblock {worker.external_id}",
            effects=[
                f"offer {worker.external_id} HITs again, in every benchmark",
                f"count their {worker.labels.count()} labels again, unless a flag still says otherwise",
            ],
            button=f"Unblock {worker.external_id}",
        )
    if activity.kind == ActivityKind.OVERRIDDEN:
        candidate = _candidate(activity)
        _check_decision_current(activity, candidate)
        previous = activity.result.get("previous")
        return UndoPlan(
            title=f"Undo the decision on “{candidate.text}”",
            effects=[
                f"decide “{candidate.text}” {previous['decision']} again, for the earlier reason"
                if previous
                else f"leave “{candidate.text}” to the crowd's labels alone"
            ],
            button="Undo the decision",
        )
    raise UndoRefused(f"“{activity.get_kind_display()}” cannot be undone from the log")


def _check_decision_current(activity: Activity, candidate: Candidate) -> None:
    """A decision is undone only while it is still the candidate's: a later one is undone first."""
    current = CandidateOverride.objects.filter(candidate=candidate).values_list("decision", "reason").first()
    if current != (activity.result.get("decision"), activity.result.get("reason")):
        raise UndoRefused(f"“{candidate.text}” has been decided otherwise since")


def activity_undo(*, activity: Activity, by: Any = None) -> str:
    """Undo the entry's decision with the inverse service; returns what was done, in words.

    ``UndoRefused`` when the entry is of another kind or is undone already (each inverse is
    idempotent and locks as its service says, so two undos at once undo it once)."""
    activity_undo_plan(activity=activity)
    if activity.kind == ActivityKind.BATCH_CLOSED:
        batch = _batch(activity)
        try:
            reopened = batch_reopen(batch=batch, by=by)
        except BatchStateError as error:
            raise UndoRefused(str(error)) from error
        if not reopened:
            raise UndoRefused(f"batch {batch.pk} is open already")
        return f"Batch {batch.pk} is open again."
    if activity.kind == ActivityKind.BATCH_PAUSED:
        batch = _batch(activity)
        try:
            resumed = batch_resume(batch=batch, by=by)
        except (CrowdActionRefused, BackendError) as error:
            raise UndoRefused(str(error)) from error
        if not resumed:
            raise UndoRefused(f"batch {batch.pk} is not paused any more")
        return f"Batch {batch.pk} hands out its HITs again."
    if activity.kind == ActivityKind.CANDIDATE_EXCLUDED:
        candidate = _candidate(activity)
        if not candidate_include(candidate=candidate, stage=_stage(activity), by=by):
            raise UndoRefused(f"“{candidate.text}” is not excluded any more")
        return f"“{candidate.text}” is back in the benchmark."
    if activity.kind == ActivityKind.OVERRIDDEN:
        candidate = _candidate(activity)
        candidate_override_restore(candidate=candidate, previous=activity.result.get("previous"), by=by)
        return f"The decision on “{candidate.text}” is undone."
    worker = _worker(activity)
    worker_unblock(worker=worker, by=by)
    return f"{worker.external_id} is unblocked."
