"""Researchers' decisions on the crowd's work (docs/design.md §17): a candidate's category set with
a reason, withdrawn, an item marked resolved, and whether the figures follow the decisions.

Each write locks the row it changes (the candidate's decision, the benchmark's review settings)
inside its transaction and records itself in the activity log in the same transaction, so the log
never claims a decision that was rolled back.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark, Candidate, CandidateStage, Target
from review.models import CandidateOverride, ItemResolution, OverrideDecision, ReviewSettings

#: The longest reason kept, in characters (docs/design.md §17).
OVERRIDE_REASON_MAX_CHARS = 2000


class OverrideRefused(ValueError):
    """The decision cannot be recorded as asked; the message says why, in words."""


def _actor(by: Any) -> Any:
    return by if by is not None and getattr(by, "pk", None) is not None else None


def candidate_override_set(*, candidate: Candidate, decision: str, reason: str, by: Any = None) -> CandidateOverride:
    """Decide ``candidate``'s category (``OverrideDecision``) for ``reason``, replacing an earlier
    decision. The crowd's labels are not touched. Locks the candidate's row, so two researchers
    deciding at once are applied one after the other, each logged with the decision it replaced."""
    reason = reason.strip()
    if decision not in OverrideDecision.values:
        raise OverrideRefused(f"“{decision}” is not a decision; choose one of {', '.join(OverrideDecision.values)}")
    if not reason:
        raise OverrideRefused("Give a reason for the decision: it is kept with it and shown in exports.")
    if len(reason) > OVERRIDE_REASON_MAX_CHARS:
        raise OverrideRefused(f"The reason is longer than {OVERRIDE_REASON_MAX_CHARS} characters.")
    with transaction.atomic():
        locked = Candidate.objects.select_for_update().select_related("target").get(pk=candidate.pk)
        if locked.stage == CandidateStage.EXCLUDED:
            raise OverrideRefused(f"“{locked.text}” is excluded; bring it back before deciding it.")
        benchmark_id = locked.target.benchmark_id
        previous = CandidateOverride.objects.filter(candidate=locked).first()
        before = None if previous is None else {"decision": previous.decision, "reason": previous.reason}
        override, _ = CandidateOverride.objects.update_or_create(
            candidate=locked,
            defaults={"benchmark_id": benchmark_id, "decision": decision, "reason": reason, "decided_by": _actor(by)},
        )
        activity_record(
            benchmark=benchmark_id,
            kind=ActivityKind.OVERRIDDEN,
            summary=f"decided “{locked.text}” of target {locked.target_id} {decision}: {reason}",
            by=by,
            result={
                "candidate": locked.pk,
                "target": locked.target_id,
                "decision": decision,
                "reason": reason,
                "previous": before,
            },
        )
    return override


def candidate_override_remove(*, candidate: Candidate, by: Any = None) -> bool:
    """Withdraw ``candidate``'s decision, so its figures follow the crowd alone; False when it had none."""
    with transaction.atomic():
        locked = Candidate.objects.select_for_update().get(pk=candidate.pk)
        previous = CandidateOverride.objects.filter(candidate=locked).first()
        if previous is None:
            return False
        previous.delete()
        activity_record(
            benchmark=previous.benchmark_id,
            kind=ActivityKind.OVERRIDE_REMOVED,
            summary=f"withdrew the decision “{previous.decision}” on “{locked.text}” of target {locked.target_id}",
            by=by,
            result={
                "candidate": locked.pk,
                "target": locked.target_id,
                "previous": {"decision": previous.decision, "reason": previous.reason},
            },
        )
    return True


def candidate_override_restore(*, candidate: Candidate, previous: dict[str, str] | None, by: Any = None) -> None:
    """Put back the decision ``previous`` (or none), as undoing a decision from the log does."""
    if previous is None:
        candidate_override_remove(candidate=candidate, by=by)
    else:
        candidate_override_set(candidate=candidate, decision=previous["decision"], reason=previous["reason"], by=by)


def item_resolve(*, target: Target, resolved: bool = True, by: Any = None) -> bool:
    """Mark the disagreement on ``target`` resolved (or open again); False when it already was so."""
    with transaction.atomic():
        if resolved:
            _, created = ItemResolution.objects.get_or_create(
                target=target, defaults={"benchmark_id": target.benchmark_id, "resolved_by": _actor(by)}
            )
            changed = created
        else:
            changed = ItemResolution.objects.filter(target=target).delete()[0] > 0
        if changed:
            activity_record(
                benchmark=target.benchmark_id,
                kind=ActivityKind.ITEM_RESOLVED,
                summary=f"marked target {target.pk} ({target.word}) {'resolved' if resolved else 'open again'}",
                by=by,
                result={"target": target.pk, "resolved": resolved},
            )
    return changed


def overrides_apply_set(*, benchmark: Benchmark, apply: bool, by: Any = None) -> bool:
    """Whether scores, categories, statistics and exports follow researchers' decisions (the review
    setting ``apply_overrides``); returns whether it changed. Locks the benchmark's review settings."""
    with transaction.atomic():
        settings, _ = ReviewSettings.objects.select_for_update().get_or_create(benchmark=benchmark)
        if settings.apply_overrides == apply:
            return False
        settings.apply_overrides = apply
        settings.updated_by = _actor(by)
        settings.save(update_fields=["apply_overrides", "updated_by", "updated_at"])
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.SETTING_CHANGED,
            summary=f"{'applied' if apply else 'stopped applying'} researchers' decisions to the figures",
            by=by,
            result={"changed": {"apply_overrides": [not apply, apply]}},
        )
    return True
