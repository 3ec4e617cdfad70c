"""Reads for the pipeline: the rows spam filtering and advancement decide on, and progress for researchers."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet

from annotation.models import Benchmark, CandidateStage, Target, TargetStage, Worker
from hits.models import HIT, SUBMITTED_STATUSES, Answer, Assignment, AssignmentStatus, AssignmentTelemetry, confirmed
from hits.selectors import OFFERED_HIT, open_batch_holdings
from hits.telemetry import Telemetry
from review.interaction import assignment_marks
from review.models import FlagReason, ReviewSettings, WorkerFlag
from review.signals import INTERACTION_REASONS, RowAnswer, SignalSettings, SubmittedWork
from review.spam import AssignmentControls
from schemes import get_scheme
from schemes.swords.pipeline import labels_missing
from schemes.swords.progress import STEP_CANDIDATE_STAGE, candidate_progress
from schemes.swords.settings import settings_of


def review_settings(*, benchmark: Benchmark) -> ReviewSettings:
    """The benchmark's review settings; an unsaved row with the defaults when the researcher never set any."""
    found = ReviewSettings.objects.filter(benchmark=benchmark).first()
    return found if found is not None else ReviewSettings(benchmark=benchmark)


def signal_settings(*, benchmark: Benchmark) -> SignalSettings:
    return SignalSettings.with_overrides(review_settings(benchmark=benchmark).signal_overrides)


def submitted_assignments(*, benchmark: Benchmark) -> QuerySet[Assignment]:
    """Submitted work the spam decisions see: only what its crowd confirmed (forged crowd ids count for nothing)."""
    return Assignment.objects.filter(confirmed(), hit__batch__benchmark=benchmark, status__in=SUBMITTED_STATUSES)


@dataclass(frozen=True)
class AssignmentState:
    controls: AssignmentControls
    status: str
    filtered: bool
    target_id: int | None = None


def assignment_states(*, benchmark: Benchmark, worker_ids: set[int] | None = None) -> list[AssignmentState]:
    """Every submitted assignment of the benchmark (of ``worker_ids`` only, if given) with its
    control outcome and its HIT's target: one query, no answers."""
    assignments = submitted_assignments(benchmark=benchmark)
    if worker_ids is not None:
        assignments = assignments.filter(worker_id__in=sorted(worker_ids))
    rows = assignments.values_list(
        "pk", "worker_id", "hit_id", "controls_correct", "controls_total", "status", "filtered", "hit__target_id"
    )
    return [
        AssignmentState(
            controls=AssignmentControls(
                assignment_id=pk,
                worker_id=worker_id,
                hit_id=hit_id,
                controls_correct=correct,
                controls_total=total,
            ),
            status=status,
            filtered=filtered,
            target_id=target_id,
        )
        for pk, worker_id, hit_id, correct, total, status, filtered, target_id in rows.order_by("pk")
    ]


def submitted_work(*, benchmark: Benchmark) -> list[SubmittedWork]:
    """Every submitted assignment with all its answers, for the bot signals (two queries)."""
    meta = {
        pk: (worker_id, hit_id, seconds, filtered)
        for pk, worker_id, hit_id, seconds, filtered in submitted_assignments(benchmark=benchmark).values_list(
            "pk", "worker_id", "hit_id", "seconds_on_page", "filtered"
        )
    }
    if not meta:
        return []
    rows: dict[int, list[RowAnswer]] = defaultdict(list)
    # Every answer of the benchmark: read with a plain cursor, as the ORM's rows cost more than the query.
    answers = Answer.objects.filter(assignment_id__in=list(meta)).values_list(
        "assignment_id", "item_id", "item__candidate_id", "value"
    )
    sql, params = answers.order_by("assignment_id", "item__position").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for assignment_id, item_id, candidate_id, value in cursor:
            rows[assignment_id].append(RowAnswer(item_id, candidate_id, value))
    telemetry = assignment_telemetry(assignment_ids=list(meta))
    return [
        SubmittedWork(
            assignment_id=pk,
            worker_id=worker_id,
            hit_id=hit_id,
            seconds_on_page=seconds,
            rows=tuple(rows[pk]),
            filtered=filtered,
            telemetry=telemetry.get(pk),
        )
        for pk, (worker_id, hit_id, seconds, filtered) in sorted(meta.items())
    ]


def assignment_telemetry(*, assignment_ids: list[int]) -> dict[int, Telemetry]:
    """The stored telemetry of these assignments, typed. Rows stored under an older shape that no longer
    reads are left out rather than stopping the review."""
    found: dict[int, Telemetry] = {}
    for pk, data in AssignmentTelemetry.objects.filter(assignment_id__in=assignment_ids).values_list(
        "assignment_id", "data"
    ):
        try:
            found[pk] = Telemetry.from_stored(data)
        except ValidationError:
            continue
    return found


def failed_control_details(*, benchmark: Benchmark, assignment_ids: list[int]) -> dict[int, dict[str, Any]]:
    """For each failed assignment: its HIT, target, step and the control rows with the worker's answer
    and what the benchmark's scheme expected."""
    scheme = get_scheme(benchmark)
    details: dict[int, dict[str, Any]] = {}
    for pk, hit_id, word, step, submitted_at in Assignment.objects.filter(pk__in=assignment_ids).values_list(
        "pk", "hit_id", "hit__target__word", "hit__batch__step", "submitted_at"
    ):
        details[pk] = {
            "assignment": pk,
            "hit": hit_id,
            "target": word,
            "step": step,
            "submitted_at": submitted_at.isoformat() if submitted_at else None,
            "controls": [],
        }
    answers = Answer.objects.filter(assignment_id__in=assignment_ids, item__control=True).values_list(
        "assignment_id", "item__kind", "item__text", "value"
    )
    for assignment_id, kind, text, value in answers.order_by("assignment_id", "item__position"):
        correct, expected = scheme.control_check(kind=kind, value=value)
        details[assignment_id]["controls"].append(
            {"kind": kind, "text": text, "answer": value, "expected": expected, "correct": correct}
        )
    return details


# ---- progress, for the researcher's pages and the API ----


@dataclass
class StepProgress:
    step: int
    labels_collected: int = 0
    labels_needed: int = 0
    candidates: int = 0
    hits: int = 0
    open_slots: int = 0
    # Candidates of the step that lack labels and sit in no open batch of it: what a new batch would take.
    waiting: int = 0

    @property
    def percent(self) -> int:
        if not self.labels_needed:
            return 0
        return min(100, round(100 * self.labels_collected / self.labels_needed))


@dataclass
class TargetProgress:
    target_id: int
    word: str
    pos: str
    context: str
    stage: str
    candidates: int = 0
    dropped: int = 0
    surviving: int = 0
    step2_collected: int = 0
    step2_needed: int = 0
    step3_collected: int = 0
    step3_needed: int = 0
    open_slots: int = 0


@dataclass
class PipelineProgress:
    benchmark: Benchmark
    targets_by_stage: dict[str, int]
    candidates_by_stage: dict[str, int]
    steps: list[StepProgress]
    targets: list[TargetProgress] = field(default_factory=list)
    assignments: dict[str, int] = field(default_factory=dict)

    @property
    def targets_total(self) -> int:
        return sum(self.targets_by_stage.values())

    @property
    def finished(self) -> bool:
        return self.targets_total > 0 and self.targets_by_stage.get(TargetStage.DONE, 0) == self.targets_total


def pipeline_progress(*, benchmark: Benchmark, with_targets: bool = True) -> PipelineProgress:
    """Counts per stage, labels collected / needed per step, and one row per target.

    Labels count as HIT generation counts them (``labels_missing`` over ``candidate_progress``):
    collected labels are capped per candidate at what the step needs, so over-collection on one
    candidate never hides a shortfall on another, and ``waiting`` is exactly what a new batch of
    the step would take. Step 3 needs labels only for the survivors of decided targets. Open
    slots are those HITs still offer: in open batches, of targets not done.
    """
    settings = settings_of(benchmark)
    step2_labels, step3_labels = settings.step2_labels, settings.step3_labels
    targets = {
        pk: TargetProgress(target_id=pk, word=word, pos=pos, context=text, stage=stage)
        for pk, word, pos, text, stage in Target.objects.filter(benchmark=benchmark)
        .values_list("pk", "word", "pos", "context__text", "stage")
        .order_by("pk")
    }
    steps = {2: StepProgress(step=2), 3: StepProgress(step=3)}
    in_open_batch = {step: open_batch_holdings(benchmark=benchmark, step=step)[0] for step in steps}
    candidate_stages: Counter[str] = Counter()
    for target_id, rows in candidate_progress(benchmark=benchmark).items():
        target = targets[target_id]
        for candidate in rows:
            candidate_stages[candidate.stage] += 1
            if candidate.stage == CandidateStage.EXCLUDED:
                # A researcher took it out (docs/annotator.md): it needs no labels.
                continue
            target.candidates += 1
            missing = {
                step: labels_missing(candidate, step=step, step2_labels=step2_labels, step3_labels=step3_labels)
                for step in steps
            }
            target.step2_collected += step2_labels - missing[2]
            target.step2_needed += step2_labels
            if candidate.stage == CandidateStage.DROPPED:
                target.dropped += 1
            elif candidate.stage in (CandidateStage.SCORE, CandidateStage.FINAL):
                target.surviving += 1
                target.step3_collected += step3_labels - min(missing[3], step3_labels)
                target.step3_needed += step3_labels
            for step, stage in STEP_CANDIDATE_STAGE.items():
                if candidate.stage == stage and missing[step] and candidate.candidate_id not in in_open_batch[step]:
                    steps[step].waiting += 1
    for target in targets.values():
        steps[2].labels_collected += target.step2_collected
        steps[2].labels_needed += target.step2_needed
        steps[2].candidates += target.candidates
        steps[3].labels_collected += target.step3_collected
        steps[3].labels_needed += target.step3_needed
        steps[3].candidates += target.surviving

    slots = (
        HIT.objects.filter(batch__benchmark=benchmark)
        .annotate(offered=ExpressionWrapper(OFFERED_HIT, output_field=BooleanField()))
        .values_list("batch__step", "target_id", "assignments_required", "assignments_active", "offered")
        .order_by()
    )
    for step, target_id, required, active, offered in slots:
        if step not in steps:
            # A step another scheme runs for this one (generation) has no labels to count here.
            continue
        free = max(0, required - active) if offered else 0
        steps[step].hits += 1
        steps[step].open_slots += free
        if target_id in targets:
            targets[target_id].open_slots += free

    statuses = Counter(
        dict(
            Assignment.objects.filter(hit__batch__benchmark=benchmark)
            .values_list("status")
            .annotate(n=Count("pk"))
            .order_by()
        )
    )
    assignments = {status: statuses.get(status, 0) for status in AssignmentStatus.values}
    assignments["filtered"] = Assignment.objects.filter(hit__batch__benchmark=benchmark, filtered=True).count()
    return PipelineProgress(
        benchmark=benchmark,
        targets_by_stage={stage: sum(1 for t in targets.values() if t.stage == stage) for stage in TargetStage.values},
        candidates_by_stage={stage: candidate_stages.get(stage, 0) for stage in CandidateStage.values},
        steps=[steps[2], steps[3]],
        targets=list(targets.values()) if with_targets else [],
        assignments=assignments,
    )


# ---- flagged workers ----


@dataclass
class FlaggedWorker:
    worker: Worker
    flags: list[WorkerFlag]
    active: bool
    assignments: int = 0
    filtered: int = 0


def benchmark_flags(*, benchmark: Benchmark, include_cleared: bool = True) -> QuerySet[WorkerFlag]:
    flags = WorkerFlag.objects.filter(benchmark=benchmark).select_related("worker", "cleared_by")
    if not include_cleared:
        flags = flags.filter(cleared_at__isnull=True)
    return flags.order_by("worker_id", "reason")


def flagged_workers(*, benchmark: Benchmark, include_cleared: bool = True) -> list[FlaggedWorker]:
    """Workers with flags in the benchmark, active ones first, each with their flags and work counts."""
    by_worker: dict[int, FlaggedWorker] = {}
    for flag in benchmark_flags(benchmark=benchmark, include_cleared=include_cleared):
        entry = by_worker.setdefault(flag.worker_id, FlaggedWorker(worker=flag.worker, flags=[], active=False))
        entry.flags.append(flag)
        entry.active = entry.active or flag.active
    counts = (
        submitted_assignments(benchmark=benchmark)
        .filter(worker_id__in=list(by_worker))
        .values("worker_id")
        .annotate(n=Count("pk"), filtered=Count("pk", filter=Q(filtered=True)))
        .order_by()
    )
    for row in counts:
        by_worker[row["worker_id"]].assignments = row["n"]
        by_worker[row["worker_id"]].filtered = row["filtered"]
    return sorted(by_worker.values(), key=lambda entry: (not entry.active, entry.worker.external_id))


def active_flag_counts(*, benchmark: Benchmark) -> dict[str, int]:
    """How many workers carry an active flag, in all and for control accuracy."""
    active = WorkerFlag.objects.filter(benchmark=benchmark, cleared_at__isnull=True)
    return {
        "workers": active.values("worker_id").distinct().count(),
        "control_accuracy": active.filter(reason=FlagReason.CONTROL_ACCURACY).count(),
    }


def interaction_summary(*, benchmark: Benchmark) -> dict[str, Any]:
    """Per benchmark, the share of submitted (and confirmed) assignments whose telemetry shows each signal by
    itself (``review.interaction.assignment_marks`` under the benchmark's thresholds), for the statistics."""
    settings = signal_settings(benchmark=benchmark)
    ids = list(submitted_assignments(benchmark=benchmark).values_list("pk", flat=True))
    recorded = assignment_telemetry(assignment_ids=ids)
    counts: Counter[str] = Counter()
    for telemetry in recorded.values():
        counts.update(assignment_marks(telemetry, settings))
    return {
        "assignments": len(ids),
        "with_telemetry": len(recorded),
        "signals": {
            reason: {
                "assignments": counts[reason],
                "share": round(counts[reason] / len(recorded), 4) if recorded else None,
            }
            for reason in INTERACTION_REASONS
        },
    }
