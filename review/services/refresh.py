"""Writes of the pipeline: spam filtering with re-collection, worker review, and advancement (DESIGN §5, §6).

``benchmark_refresh`` is the one operation behind the Celery task queued after every submit,
the ``advance_pipeline`` command and the researcher's "refresh now" button. It recomputes the
spam decisions and bot signals from all submitted work, applies them (filtering, flags,
automatic blocks), and only then advances targets, so a step is always advanced from a state
in which filtering is current.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import Benchmark, Candidate, CandidateStage, Target, TargetStage, Worker
from hits.models import HIT, VALID_STATUSES, Assignment, AssignmentStatus
from hits.services.generation import followup_batches_extend
from hits.services.workers import AUTO_BLOCK_PREFIX
from hits.slots import slots_recount
from review import selectors
from review.models import FlagReason, ReviewSettings, WorkerFlag
from review.signals import SIGNAL_REASONS, SignalSettings, worker_signals
from review.spam import WorkerSpamDecision, assignments_to_filter, filtering_changes, spam_decisions
from schemes import get_scheme
from schemes.swords import SCORE_STEP
from schemes.swords.pipeline import advance_target, labels_missing, target_done
from schemes.swords.settings import settings_of

logger = logging.getLogger(__name__)

# Failed assignments listed in a control-accuracy flag's evidence (the counts cover all of them).
EVIDENCE_ASSIGNMENTS = 50


@dataclass
class RefreshResult:
    """What one refresh changed; all zeros and empty lists when the benchmark was already current."""

    filtered: int = 0
    unfiltered: int = 0
    flags_raised: int = 0
    flags_resolved: int = 0
    blocked: list[int] = field(default_factory=list)
    advanced_targets: list[int] = field(default_factory=list)
    step3_batches: list[int] = field(default_factory=list)
    done_targets: list[int] = field(default_factory=list)
    reopened_targets: list[int] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(
            (
                self.filtered,
                self.unfiltered,
                self.flags_raised,
                self.flags_resolved,
                self.blocked,
                self.advanced_targets,
                self.done_targets,
                self.reopened_targets,
            )
        )


def signals_due(*, assignments: int, computed_on: int) -> bool:
    """Whether the bot signals need recomputing: after every submission at first, then every 5 % (at most 200).

    The signals read all of a benchmark's answers; recomputing them on each of n submissions
    would cost O(n²) over a collection, this costs O(n). They flag for review, so a short delay
    is harmless; spam filtering itself is recomputed on every refresh.
    """
    if assignments < computed_on:
        return True
    return assignments - computed_on >= max(1, min(computed_on // 20, 200))


def benchmark_refresh(*, benchmark: Benchmark, now: datetime | None = None, full: bool = False) -> RefreshResult:
    """Bring a benchmark up to date: spam decisions, flags, filtering (re-collection), then advancement.

    Idempotent: a second call with no new work changes nothing. Concurrency: the whole refresh
    runs in one transaction holding the benchmark's row lock (``SELECT … FOR UPDATE``, which
    PostgreSQL honours and SQLite's single writer makes moot), so two refreshes of one benchmark
    run one after the other and the second sees the first's result. Rows are then locked in the
    queue's order (workers, then assignments, then HITs), so a refresh never deadlocks with a
    claim, a submit or the expiry task.

    ``full`` recomputes the bot signals whatever ``signals_due`` says (the command, the
    researcher's button and the end of a simulation ask for it).
    """
    now = now or timezone.now()
    result = RefreshResult()
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        settings, _ = ReviewSettings.objects.get_or_create(benchmark=benchmark)
        states = selectors.assignment_states(benchmark=benchmark)
        scheme = get_scheme(benchmark)
        # A scheme without controls filters nobody by them: no worker is below a threshold of 0.
        threshold = scheme.control_threshold(scheme.settings(benchmark)) or 0.0
        decisions = spam_decisions((s.controls for s in states), min_control_accuracy=threshold)
        _sync_control_flags(benchmark=benchmark, decisions=decisions, threshold=threshold, now=now, result=result)
        if full or signals_due(assignments=len(states), computed_on=settings.signals_computed_on):
            _sync_signal_flags(
                benchmark=benchmark,
                signal_settings=SignalSettings.with_overrides(settings.signal_overrides),
                now=now,
                result=result,
            )
            # A queryset update: bookkeeping, not a settings change (updated_at stays).
            ReviewSettings.objects.filter(pk=settings.pk).update(signals_computed_on=len(states))
        result.blocked = _auto_block(benchmark=benchmark, settings=settings)

        excluded = _excluded_workers(benchmark=benchmark, worker_ids={s.controls.worker_id for s in states})
        # Work rejected on the crowd never counts either, whoever did it.
        should_filter = assignments_to_filter((s.controls for s in states), excluded_worker_ids=excluded) | {
            s.controls.assignment_id for s in states if s.status == AssignmentStatus.REJECTED
        }
        result.filtered, result.unfiltered = _apply_filtering(states=states, should_filter=should_filter)

        advance = ADVANCEMENT.get(scheme.pipeline)
        if advance is not None:
            advance(benchmark=benchmark, result=result)
    if result.changed:
        logger.info("refreshed %s: %s", benchmark.name, result)
    return result


# ---- flags ----


def _control_evidence(decision: WorkerSpamDecision, *, benchmark: Benchmark, threshold: float) -> dict[str, Any]:
    failed = list(decision.failed_assignment_ids)[-EVIDENCE_ASSIGNMENTS:]
    details = selectors.failed_control_details(benchmark=benchmark, assignment_ids=failed)
    return {
        "accuracy": None if decision.accuracy is None else round(decision.accuracy, 4),
        "threshold": threshold,
        "controls_correct": decision.controls_correct,
        "controls_total": decision.controls_total,
        "assignments": decision.assignments,
        "failed_count": len(decision.failed_assignment_ids),
        "failed_hits": sorted(set(decision.failed_hit_ids)),
        "failed_assignments": [details[pk] for pk in failed if pk in details],
    }


def cleared_by_researcher(flag: WorkerFlag) -> bool:
    cleared = flag.evidence.get("cleared") if isinstance(flag.evidence, dict) else None
    return flag.cleared_at is not None and isinstance(cleared, dict) and cleared.get("by") == "researcher"


def _sync_flag(
    *,
    existing: WorkerFlag | None,
    benchmark: Benchmark,
    worker_id: int,
    reason: str,
    fires: bool,
    evidence: dict[str, Any] | None,
    reopen: bool,
    now: datetime,
    result: RefreshResult,
) -> None:
    """Create, update, re-open or resolve one flag so it matches what the evidence says now.

    A flag a researcher cleared stays cleared (its evidence still updates) unless ``reopen``
    says there is new evidence since; a flag resolved automatically (the worker recovered)
    re-opens as soon as the signal fires again.
    """
    if fires:
        assert evidence is not None
        if existing is None:
            WorkerFlag.objects.create(benchmark=benchmark, worker_id=worker_id, reason=reason, evidence=evidence)
            result.flags_raised += 1
            return
        if existing.cleared_at is None:
            if existing.evidence != evidence:
                existing.evidence = evidence
                existing.save(update_fields=["evidence", "updated_at"])
            return
        if cleared_by_researcher(existing) and not reopen:
            kept = {**evidence, "cleared": existing.evidence["cleared"]}
            if existing.evidence != kept:
                existing.evidence = kept
                existing.save(update_fields=["evidence", "updated_at"])
            return
        existing.evidence = evidence
        existing.cleared_at = None
        existing.cleared_by = None
        existing.save(update_fields=["evidence", "cleared_at", "cleared_by", "updated_at"])
        result.flags_raised += 1
        return
    if existing is not None and existing.cleared_at is None:
        existing.cleared_at = now
        existing.evidence = {**existing.evidence, "cleared": {"by": "recovered", "at": now.isoformat()}}
        existing.save(update_fields=["evidence", "cleared_at", "updated_at"])
        result.flags_resolved += 1


def _sync_control_flags(
    *,
    benchmark: Benchmark,
    decisions: dict[int, WorkerSpamDecision],
    threshold: float,
    now: datetime,
    result: RefreshResult,
) -> None:
    existing = {
        flag.worker_id: flag
        for flag in WorkerFlag.objects.filter(benchmark=benchmark, reason=FlagReason.CONTROL_ACCURACY)
    }
    for worker_id in sorted(set(decisions) | set(existing)):
        decision = decisions.get(worker_id)
        fires = decision is not None and decision.spammer
        flag = existing.get(worker_id)
        reopen = False
        if fires and flag is not None and cleared_by_researcher(flag):
            assert decision is not None
            # New failing work after the researcher's review brings the flag back.
            reopen = len(decision.failed_assignment_ids) > int(flag.evidence["cleared"].get("failed_count", 0))
        if not fires and flag is None:
            continue
        if fires and flag is not None and flag.cleared_at is None and decision is not None:
            unchanged = (
                flag.evidence.get("failed_count") == len(decision.failed_assignment_ids)
                and flag.evidence.get("controls_total") == decision.controls_total
            )
            if unchanged:
                continue  # the evidence query is the costly part; skip it when nothing moved
        _sync_flag(
            existing=flag,
            benchmark=benchmark,
            worker_id=worker_id,
            reason=FlagReason.CONTROL_ACCURACY,
            fires=fires,
            evidence=_control_evidence(decision, benchmark=benchmark, threshold=threshold)
            if fires and decision is not None
            else None,
            reopen=reopen,
            now=now,
            result=result,
        )


def _sync_signal_flags(
    *, benchmark: Benchmark, signal_settings: SignalSettings, now: datetime, result: RefreshResult
) -> None:
    work = selectors.submitted_work(benchmark=benchmark)
    signals = worker_signals(work, signal_settings)
    existing = {
        (flag.worker_id, flag.reason): flag
        for flag in WorkerFlag.objects.filter(benchmark=benchmark, reason__in=SIGNAL_REASONS)
    }
    firing = {
        (worker_id, signal.reason): signal.evidence
        for worker_id, figures in signals.items()
        for signal in figures.signals
    }
    others = {entry["worker"] for evidence in firing.values() for entry in evidence.get("others", [])}
    names = dict(Worker.objects.filter(pk__in=others).values_list("pk", "external_id")) if others else {}
    for key in sorted(set(firing) | set(existing)):
        worker_id, reason = key
        evidence = firing.get(key)
        if evidence is not None:
            evidence = {**evidence, "figures": signals[worker_id].metrics()}
            if "others" in evidence:
                evidence["others"] = [
                    {**entry, "worker_name": names.get(entry["worker"], "")} for entry in evidence["others"]
                ]
        _sync_flag(
            existing=existing.get(key),
            benchmark=benchmark,
            worker_id=worker_id,
            reason=reason,
            fires=evidence is not None,
            evidence=evidence,
            reopen=False,
            now=now,
            result=result,
        )


def _auto_block(*, benchmark: Benchmark, settings: ReviewSettings) -> list[int]:
    """Block the workers whose active flags the researcher chose to block on; returns their ids."""
    reasons: list[str] = []
    if settings.auto_block_spammers:
        reasons.append(FlagReason.CONTROL_ACCURACY)
    if settings.auto_block_signals:
        reasons.extend(SIGNAL_REASONS)
    if not reasons:
        return []
    flags = (
        WorkerFlag.objects.filter(
            benchmark=benchmark, reason__in=reasons, cleared_at__isnull=True, worker__blocked=False
        )
        .order_by("worker_id", "reason")
        .values_list("worker_id", "reason")
    )
    why: dict[int, list[str]] = defaultdict(list)
    for worker_id, reason in flags:
        why[worker_id].append(FlagReason(reason).label)
    if not why:
        return []
    # Locked in id order so two refreshes of different benchmarks cannot wait on each other's workers.
    locked = list(Worker.objects.select_for_update().filter(pk__in=list(why), blocked=False).order_by("pk"))
    for worker in locked:
        worker.blocked = True
        worker.blocked_reason = f"{AUTO_BLOCK_PREFIX}{'; '.join(why[worker.pk])} in benchmark {benchmark.name}"
        worker.save(update_fields=["blocked", "blocked_reason"])
    return [worker.pk for worker in locked]


def _excluded_workers(*, benchmark: Benchmark, worker_ids: set[int]) -> set[int]:
    """Workers whose labels must not count: an active control-accuracy flag, or blocked.

    Blocking is the researcher's verdict that a worker's work is not to be trusted (or the
    automatic one they asked for), so it weighs like failing the controls.
    """
    flagged = set(
        WorkerFlag.objects.filter(
            benchmark=benchmark, reason=FlagReason.CONTROL_ACCURACY, cleared_at__isnull=True
        ).values_list("worker_id", flat=True)
    )
    blocked = set(Worker.objects.filter(pk__in=worker_ids, blocked=True).values_list("pk", flat=True))
    return flagged | blocked


# ---- filtering and re-collection ----


def _slot_counts(hit_ids: Iterable[int]) -> dict[int, int]:
    """Recount HIT.assignments_active from the assignments themselves (live claims + valid submissions)."""
    rows = (
        Assignment.objects.filter(hit_id__in=list(hit_ids))
        .filter(Q(status=AssignmentStatus.CLAIMED) | Q(status__in=VALID_STATUSES, filtered=False))
        .values("hit_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {row["hit_id"]: row["n"] for row in rows}


def _apply_filtering(*, states: list[selectors.AssignmentState], should_filter: set[int]) -> tuple[int, int]:
    """Flip ``Assignment.filtered`` to match ``should_filter`` and give HITs their slots back.

    Filtering a submitted assignment frees its slot: the HIT is re-collected from other workers
    (the unique (hit, worker) constraint keeps the filtered worker out). Un-filtering takes a
    slot back only where the HIT still has room, earliest submission first; the rest stay
    filtered as surplus, so a HIT never holds more valid assignments than it requires.

    Locking: the assignments that change, then their HITs, each in id order
    (``SELECT … FOR UPDATE``); each locked HIT's counter is then recounted from its
    assignments, so it is exact whatever happened before. Returns (filtered, unfiltered).
    """
    current = {s.controls.assignment_id: s.filtered for s in states}
    to_filter, to_unfilter = filtering_changes(current, should_filter)
    if to_unfilter:
        # Surplus work waits for room; HITs that are full right now are not worth a lock.
        hit_of = {s.controls.assignment_id: s.controls.hit_id for s in states}
        filling = {hit_of[pk] for pk in to_filter}
        full = set(
            HIT.objects.filter(pk__in={hit_of[pk] for pk in to_unfilter} - filling)
            .filter(assignments_active__gte=F("assignments_required"))
            .values_list("pk", flat=True)
        )
        to_unfilter = {pk for pk in to_unfilter if hit_of[pk] not in full}
    if not to_filter and not to_unfilter:
        return 0, 0
    rows = list(
        Assignment.objects.select_for_update()
        .filter(pk__in=to_filter | to_unfilter)
        .order_by("pk")
        .values_list("pk", "hit_id", "status", "filtered", "submitted_at")
    )
    hit_ids = sorted({hit_id for _, hit_id, _, _, _ in rows})
    hits = {hit.pk: hit for hit in HIT.objects.select_for_update().filter(pk__in=hit_ids).order_by("pk")}
    before = _slot_counts(hit_ids)
    for hit_id, hit in hits.items():
        if hit.assignments_active != before.get(hit_id, 0):
            logger.warning(
                "HIT %s counted %s active assignments but holds %s; recounting",
                hit_id,
                hit.assignments_active,
                before.get(hit_id, 0),
            )

    filter_ids = [pk for pk, _, _, filtered, _ in rows if pk in to_filter and not filtered]
    filtered_count = Assignment.objects.filter(pk__in=filter_ids, filtered=False).update(filtered=True)
    after_filter = _slot_counts(hit_ids)

    unfilter_ids: list[int] = []
    by_hit: dict[int, list[tuple[Any, int, str]]] = defaultdict(list)
    for pk, hit_id, status, filtered, submitted_at in rows:
        if pk in to_unfilter and filtered:
            by_hit[hit_id].append((submitted_at, pk, status))
    for hit_id, waiting in by_hit.items():
        room = hits[hit_id].assignments_required - after_filter.get(hit_id, 0)
        for _, pk, status in sorted(waiting, key=lambda row: (row[0] is None, row[0], row[1])):
            if status in VALID_STATUSES:
                if room <= 0:
                    continue
                room -= 1
            unfilter_ids.append(pk)
    unfiltered_count = Assignment.objects.filter(pk__in=unfilter_ids, filtered=True).update(filtered=False)

    final = _slot_counts(hit_ids)
    for hit_id, hit in hits.items():
        count = final.get(hit_id, 0)
        if hit.assignments_active != count:
            slots_recount(hit_id=hit_id, count=count)
    return filtered_count, unfiltered_count


# ---- advancement ----


def _advance(*, benchmark: Benchmark, result: RefreshResult) -> None:
    """Move targets through the stages their valid labels allow (DESIGN §6).

    reduce → score when every candidate has its step-2 labels: survivors get step-3 HITs in the
    step-3 batch of their step-2 batch (``hits.services.generation.followup_batches_extend``), the
    rest are dropped. score →
    done when every candidate has the labels its stage needs; done → score again, at the same
    refresh, as soon as one lacks some: work filtered or rejected in this refresh or since the
    last one (a crowd's rejection, an assignment the crowd does not know), or imported labels
    removed. Pass decisions, once made, are not revisited.

    Every target is looked at, done ones too: that costs one aggregate over the benchmark's
    valid labels, which a refresh early in a collection pays anyway.
    """
    settings = settings_of(benchmark)
    step2, step3 = settings.step2_labels, settings.step3_labels
    stages = dict(Target.objects.filter(benchmark=benchmark).values_list("pk", "stage"))
    if not stages:
        return
    progress = selectors.candidate_progress(benchmark=benchmark, target_ids=list(stages))

    passed: list[int] = []
    dropped: list[int] = []
    needs_step3: list[int] = []
    for target_id, stage in sorted(stages.items()):
        if stage != TargetStage.REDUCE:
            continue
        candidates = progress.get(target_id, [])
        advancement = advance_target(
            [c for c in candidates if c.stage == CandidateStage.REDUCE],
            step2_labels=step2,
            pass_min_accepts=settings.pass_min_accepts,
        )
        if advancement is None:
            continue
        passed.extend(advancement.passed)
        dropped.extend(advancement.dropped)
        result.advanced_targets.append(target_id)
        stages[target_id] = TargetStage.SCORE
        new_stage = {pk: CandidateStage.SCORE for pk in advancement.passed} | {
            pk: CandidateStage.DROPPED for pk in advancement.dropped
        }
        progress[target_id] = [replace(c, stage=new_stage.get(c.candidate_id, c.stage)) for c in candidates]
        if any(
            labels_missing(c, step=3, step2_labels=step2, step3_labels=step3)
            for c in progress[target_id]
            if c.stage == CandidateStage.SCORE
        ):
            needs_step3.append(target_id)
    if result.advanced_targets:
        Candidate.objects.filter(pk__in=passed, stage=CandidateStage.REDUCE).update(stage=CandidateStage.SCORE)
        Candidate.objects.filter(pk__in=dropped, stage=CandidateStage.REDUCE).update(stage=CandidateStage.DROPPED)
        Target.objects.filter(pk__in=result.advanced_targets, stage=TargetStage.REDUCE).update(stage=TargetStage.SCORE)
    if needs_step3:
        result.step3_batches = [
            batch.pk for batch in followup_batches_extend(benchmark=benchmark, step=SCORE_STEP, targets=needs_step3)
        ]

    finished: list[int] = []
    reopened: list[int] = []
    for target_id, stage in sorted(stages.items()):
        if stage not in (TargetStage.SCORE, TargetStage.DONE):
            continue
        candidates = progress.get(target_id, [])
        complete = target_done(candidates, step2_labels=step2, step3_labels=step3)
        if stage == TargetStage.SCORE and complete:
            finished.append(target_id)
        elif stage == TargetStage.DONE and not complete:
            reopened.append(target_id)
    if finished:
        Candidate.objects.filter(target_id__in=finished, stage=CandidateStage.SCORE).update(stage=CandidateStage.FINAL)
        Target.objects.filter(pk__in=finished, stage=TargetStage.SCORE).update(stage=TargetStage.DONE)
    if reopened:
        Candidate.objects.filter(target_id__in=reopened, stage=CandidateStage.FINAL).update(stage=CandidateStage.SCORE)
        Target.objects.filter(pk__in=reopened, stage=TargetStage.DONE).update(stage=TargetStage.SCORE)
    result.done_targets = finished
    result.reopened_targets = reopened


# How targets move through a scheme's steps, by ``AnnotationScheme.pipeline``; a scheme whose
# targets need no moving (one step, or assigned experts) names none.
ADVANCEMENT: dict[str, Callable[..., None]] = {"reduce-score": _advance}
