"""Flags of the review: control accuracy and bot signals raised, updated and cleared with their
evidence, and the automatic blocks a researcher may turn on (docs/design.md §5, §9)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark, Worker
from hits.notifications import worker_flagged_notify
from hits.selectors.researcher import targets_worked_by
from hits.services.workers import AUTO_BLOCK_PREFIX
from review import selectors
from review.models import FlagReason, ReviewSettings, WorkerFlag
from review.services.result import RefreshResult, SignalsResult
from review.signals import SIGNAL_REASONS, WorkerSignals
from review.spam import WorkerSpamDecision

# Failed assignments listed in a control-accuracy flag's evidence (the counts cover all of them).
EVIDENCE_ASSIGNMENTS = 50


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


def _notify_raised(flag: WorkerFlag) -> None:
    """Tell the benchmark's researchers that a worker is flagged (docs/design.md §16), once per raising."""
    worker = Worker.objects.filter(pk=flag.worker_id).values_list("external_id", flat=True).first() or ""
    worker_flagged_notify(
        benchmark=flag.benchmark_id,
        flag_id=flag.pk,
        worker=worker,
        reason=flag.get_reason_display(),
        raised_at=flag.updated_at,
    )


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
    result: RefreshResult | SignalsResult,
) -> None:
    """Create, update, re-open or resolve one flag so it matches what the evidence says now.

    A flag a researcher cleared stays cleared (its evidence still updates) unless ``reopen``
    says there is new evidence since; a flag resolved automatically (the worker recovered)
    re-opens as soon as the signal fires again.
    """
    if fires:
        assert evidence is not None
        if existing is None:
            flag = WorkerFlag.objects.create(benchmark=benchmark, worker_id=worker_id, reason=reason, evidence=evidence)
            result.flags_raised += 1
            _notify_raised(flag)
            return
        if existing.cleared_at is None:
            if existing.evidence != evidence:
                existing.evidence = evidence
                existing.save(update_fields=["evidence", "updated_at"])
                result.flags_updated += 1
            return
        if cleared_by_researcher(existing) and not reopen:
            kept = {**evidence, "cleared": existing.evidence["cleared"]}
            if existing.evidence != kept:
                existing.evidence = kept
                existing.save(update_fields=["evidence", "updated_at"])
                result.flags_updated += 1
            return
        existing.evidence = evidence
        existing.cleared_at = None
        existing.cleared_by = None
        existing.save(update_fields=["evidence", "cleared_at", "cleared_by", "updated_at"])
        result.flags_raised += 1
        _notify_raised(existing)
        return
    if existing is not None and existing.cleared_at is None:
        existing.cleared_at = now
        existing.evidence = {**existing.evidence, "cleared": {"by": "recovered", "at": now.isoformat()}}
        existing.save(update_fields=["evidence", "cleared_at", "updated_at"])
        result.flags_resolved += 1


def sync_control_flags(
    *,
    benchmark: Benchmark,
    decisions: dict[int, WorkerSpamDecision],
    threshold: float,
    now: datetime,
    result: RefreshResult,
    worker_ids: set[int] | None = None,
) -> None:
    """Control-accuracy flags as ``decisions`` say; of ``worker_ids`` only when given (a refresh of
    touched work: ``decisions`` then covers those workers, and the others' flags stand)."""
    flags = WorkerFlag.objects.filter(benchmark=benchmark, reason=FlagReason.CONTROL_ACCURACY)
    if worker_ids is not None:
        flags = flags.filter(worker_id__in=sorted(worker_ids))
    existing = {flag.worker_id: flag for flag in flags}
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


def sync_signal_flags(
    *, benchmark: Benchmark, signals: dict[int, WorkerSignals], now: datetime, result: SignalsResult
) -> None:
    """The bot-signal flags of every worker as ``signals`` (over all the benchmark's work) say."""
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


def auto_block(*, benchmark: Benchmark, settings: ReviewSettings) -> list[int]:
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
        # The block moves the figures of the targets of this worker's work in the benchmark alone
        # (their labels stop counting), not every target's (docs/design.md §7, "Incremental figures").
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.BLOCKED,
            summary=f"worker {worker.external_id} blocked automatically: {'; '.join(why[worker.pk])}",
            result={"worker": worker.external_id, "kind": worker.kind, "reason": worker.blocked_reason},
            target_ids=targets_worked_by(benchmark.pk, {worker.pk}),
        )
    return [worker.pk for worker in locked]


def excluded_workers(*, benchmark: Benchmark, worker_ids: set[int]) -> set[int]:
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
