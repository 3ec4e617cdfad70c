"""Reads for the crowd side: what a publish would do and cost, and how a crowd batch stands."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

from annotation.models import Benchmark
from crowds.interface import get_backend, remote_backend_names
from crowds.interface.costs import (
    CostEstimate,
    FeeRule,
    assignments_cost,
    bonus_cost,
    bonus_fee,
)
from hits.models import (
    HIT,
    Assignment,
    AssignmentStatus,
    Batch,
    Bonus,
    BonusStatus,
    CrowdLimits,
    RemoteHIT,
)
from hits.selectors import OFFERED_HIT
from hits.selectors.timing import batch_median_seconds


def batch_fees(*, batch: Batch) -> FeeRule:
    """The fee the batch's crowd takes on rewards and bonuses."""
    return get_backend(batch.backend).fees


def coming_work() -> Q:
    """Assignments whose work may still count: live claims from a crowd page, and work saved here
    that the crowd has not confirmed yet (neither known nor flagged unknown)."""
    return Q(status=AssignmentStatus.CLAIMED) | Q(
        status=AssignmentStatus.SUBMITTED, external_status="", external_unknown=False
    )


def study_places_needed(*, batch: Batch, now: Any = None) -> int:
    """Assignments a batch still needs from people not yet at work: for every HIT still offered,
    required less counted (``assignments_active``) less work still coming (live claims and saved
    work awaiting confirmation). A crowd that recruits for a whole batch (Prolific) compares it
    with its open places."""
    from django.utils import timezone

    now = now or timezone.now()
    hits = dict(HIT.objects.filter(OFFERED_HIT, batch=batch).values_list("pk", "assignments_required"))
    active = dict(HIT.objects.filter(pk__in=list(hits)).values_list("pk", "assignments_active"))
    coming = dict(
        Assignment.objects.filter(hit_id__in=list(hits))
        .filter(coming_work())
        .exclude(status=AssignmentStatus.CLAIMED, deadline__lte=now)
        .values("hit_id")
        .annotate(n=Count("pk"))
        .values_list("hit_id", "n")
    )
    return sum(max(0, required - active[pk] - coming.get(pk, 0)) for pk, required in hits.items())


def crowd_limits(*, benchmark: Benchmark) -> CrowdLimits:
    """The benchmark's spending limits, or the defaults when none were set (an unsaved row)."""
    return CrowdLimits.objects.filter(benchmark=benchmark).first() or CrowdLimits(benchmark=benchmark)


@dataclass
class PublishPlan:
    """Everything a publish would send and what it would cost; computed without calling the crowd."""

    batch: Batch
    backend: str
    environment: str = ""
    endpoint: str = ""
    hit_type: dict[str, Any] = field(default_factory=dict)
    qualifications: list[str] = field(default_factory=list)
    hits_to_publish: int = 0
    hits_published: int = 0
    assignments_per_hit: list[int] = field(default_factory=list)
    first_url: str = ""
    first_question: str = ""
    cost: CostEstimate | None = None
    warnings: list[str] = field(default_factory=list)
    # Prolific: the body of the study to create (``crowds.prolific.study_params``).
    study: dict[str, Any] = field(default_factory=dict)
    # What the crowd would be sent, as lines of text (its backend's ``publish_plan``), and its name.
    details: list[str] = field(default_factory=list)
    crowd_name: str = ""

    @property
    def assignments(self) -> int:
        return sum(self.assignments_per_hit)

    def lines(self) -> list[str]:
        """The plan as text, for the dry run and logs."""
        batch = self.batch
        out = [f"{batch} -> {self.backend}" + (f" {self.environment} ({self.endpoint})" if self.environment else "")]
        out += self.details
        sizes = sorted(set(self.assignments_per_hit))
        out.append(
            f"HITs: {self.hits_to_publish} to publish ({self.hits_published} already published), "
            f"{'/'.join(map(str, sizes)) or 0} assignments each, {self.assignments} assignments in all"
        )
        if self.first_url:
            out.append(f"ExternalQuestion URL of the first HIT: {self.first_url}")
        if self.cost is not None:
            cost = self.cost
            out.append(
                f"Cost: rewards ${cost.rewards_total} + fee ${cost.fees_total} = ${cost.total}"
                + (f" (${cost.cost_per_assignment} per assignment)" if cost.assignments else "")
                + (f"; {cost.large_hits} HITs with 10+ assignments pay the 40 % fee" if cost.large_hits else "")
            )
            if cost.hourly_wage is not None and cost.minimum_hourly_wage is not None:
                verdict = "under" if cost.below_minimum else "at least"
                out.append(
                    f"Pay rate: ${cost.hourly_wage}/h at {cost.median_seconds:.0f} s per HIT, {verdict} "
                    f"{self.crowd_name}'s minimum of ${cost.minimum_hourly_wage}/h "
                    f"(service fee {cost.fee_rate * 100:.1f} %)"
                )
            elif cost.hourly_wage is not None:
                out.append(
                    f"Hourly wage: ${cost.hourly_wage}/h at the measured median of {cost.median_seconds:.0f} s per "
                    f"assignment (for ${cost.target_hourly_wage}/h the reward would be ${cost.reward_for_target_wage})"
                )
            else:
                out.append("Hourly wage: unknown until assignments have been timed (pass --median-seconds to estimate)")
        out += [f"Warning: {warning}" for warning in self.warnings]
        return out


def duration_text(seconds: int) -> str:
    """A duration in its largest whole unit, with its seconds: ``2 hours (7200 s)``."""
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit} ({seconds} s)"
    return f"{seconds} s"


def batch_publish_plan(
    *, batch: Batch, sandbox: bool | None = None, median_seconds: float | None = None
) -> PublishPlan:
    """What ``batch_publish`` would send for this batch, and its cost; no call to the crowd, no
    credentials needed. ``sandbox``: the endpoint to plan for, on a crowd that has one."""
    seconds = median_seconds if median_seconds is not None else batch_median_seconds(batch=batch)
    published = set(RemoteHIT.objects.filter(hit__batch=batch, round=0).values_list("hit_id", flat=True))
    hits = list(HIT.objects.filter(batch=batch).order_by("id").only("id", "assignments_required", "batch_id"))
    pending = [hit for hit in hits if hit.pk not in published]
    backend = get_backend(batch.backend)
    plan = PublishPlan(batch=batch, backend=batch.backend, crowd_name=backend.short_label)
    plan.hits_to_publish = len(pending)
    plan.hits_published = len(hits) - len(pending)
    plan.assignments_per_hit = [hit.assignments_required for hit in pending]
    plan.cost = backend.price(
        assignments_per_hit=plan.assignments_per_hit, reward=batch.reward, seconds_per_assignment=seconds
    )
    if not hits:
        plan.warnings.append("the batch has no HITs")
    return backend.publish_plan(plan=plan, batch=batch, pending=pending, sandbox=sandbox, median_seconds=median_seconds)


@dataclass(frozen=True)
class CrowdBatchStatus:
    """How a crowd batch stands, for the researcher's batch page."""

    postings: int
    by_status: dict[str, int]
    awaiting_crowd: int
    awaiting_review: int
    flagged_unknown: int
    filtered: int
    bonuses_pending: int
    bonuses_sent: int
    synced_at: str
    environment: str
    # The batch's Prolific study, once made.
    study_id: str
    # Submitted on the crowd with no answers here, as the last syncs found them (assignment, worker, hit, status).
    orphans: list[dict[str, Any]]


def batch_crowd_status(*, batch: Batch) -> CrowdBatchStatus:
    assignments = Assignment.objects.filter(hit__batch=batch)
    by_status = dict(assignments.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    submitted = assignments.filter(status=AssignmentStatus.SUBMITTED, external_unknown=False)
    bonuses = Bonus.objects.filter(assignment__hit__batch=batch)
    return CrowdBatchStatus(
        postings=RemoteHIT.objects.filter(hit__batch=batch).count(),
        by_status=by_status,
        awaiting_crowd=submitted.filter(external_status="").count(),
        awaiting_review=submitted.exclude(external_status="").count(),
        flagged_unknown=assignments.filter(external_unknown=True).count(),
        filtered=assignments.filter(filtered=True).count(),
        bonuses_pending=bonuses.filter(status=BonusStatus.PENDING).count(),
        bonuses_sent=bonuses.filter(status=BonusStatus.SENT).count(),
        synced_at=str(batch.external.get("synced_at", "")),
        environment=str(batch.external.get("environment", "")),
        study_id=str(batch.external.get("study_id", "")),
        orphans=list(batch.external.get("orphans", [])),
    )


def batch_crowd_assignments(*, batch: Batch) -> QuerySet[Assignment]:
    """The batch's assignments that have work, newest first, for review."""
    return (
        Assignment.objects.filter(hit__batch=batch)
        .exclude(status__in=[AssignmentStatus.CLAIMED])
        .select_related("worker", "hit__target")
        .annotate(bonus_count=Count("bonuses", filter=Q(bonuses__status=BonusStatus.SENT)))
        .order_by("-submitted_at", "-id")
    )


def benchmark_crowd_batches(*, benchmark: Benchmark) -> QuerySet[Batch]:
    """The benchmark's batches on a paid crowd, newest first, with their HIT counts."""
    return (
        Batch.objects.filter(benchmark=benchmark)
        .filter(backend__in=remote_backend_names())
        .annotate(hit_count=Count("hits", distinct=True))
        .order_by("-created_at")
    )


@dataclass(frozen=True)
class CrowdSpending:
    """What a crowd batch has paid and may still pay, MTurk's fees included (``crowds.interface.costs``).

    Paid: the reward of every approved assignment, filtered or not, and of work approved on the
    crowd with no answers here (orphans), plus bonuses sent, each with its fee. Projected: every
    assignment posted on the crowd (the required ones for HITs not posted yet) paid, plus the
    bonuses sent. Re-collection: what the postings beyond each HIT's required assignments cost.
    """

    rewards_paid: Decimal
    bonuses_paid: Decimal
    fees_paid: Decimal
    projected: Decimal
    recollection: Decimal

    @property
    def paid(self) -> Decimal:
        return self.rewards_paid + self.bonuses_paid + self.fees_paid


def batch_spending(*, batch: Batch) -> CrowdSpending:
    reward = batch.reward
    fees = batch_fees(batch=batch)
    sizes = dict(batch.hits.values_list("pk", "assignments_required"))
    approved = list(
        Assignment.objects.filter(hit__batch=batch, status=AssignmentStatus.APPROVED).values_list("hit_id", flat=True)
    )
    approved += [int(orphan["hit"]) for orphan in batch.external.get("orphans", []) if orphan["status"] == "Approved"]
    bonuses = list(
        Bonus.objects.filter(assignment__hit__batch=batch, status=BonusStatus.SENT).values_list("amount", flat=True)
    )
    posted: dict[int, int] = defaultdict(int)
    for hit_id, count in RemoteHIT.objects.filter(hit__batch=batch).values_list("hit_id", "max_assignments"):
        posted[hit_id] += count
    projected = recollection = fees_paid = Decimal(0)
    for hit_id, size in sizes.items():
        offered = posted.get(hit_id, size)
        projected += assignments_cost(reward=reward, count=offered, hit_size=size, fees=fees)
        recollection += assignments_cost(reward=reward, count=max(0, offered - size), hit_size=size, fees=fees)
    # Places a crowd added to a whole study for re-collection (Prolific), not to one HIT's posting.
    added = int(batch.external.get("places_added", 0) or 0)
    projected += assignments_cost(reward=reward, count=added, hit_size=1, fees=fees)
    recollection += assignments_cost(reward=reward, count=added, hit_size=1, fees=fees)
    for hit_id in approved:
        fees_paid += assignments_cost(reward=reward, count=1, hit_size=sizes[hit_id], fees=fees) - reward
    for amount in bonuses:
        fees_paid += bonus_fee(amount, fees)
        projected += bonus_cost(amount, fees)
    return CrowdSpending(
        rewards_paid=reward * len(approved),
        bonuses_paid=sum(bonuses, Decimal(0)),
        fees_paid=fees_paid,
        projected=projected,
        recollection=recollection,
    )


def benchmark_recollection_left(*, benchmark: Benchmark) -> Decimal | None:
    """What re-collection may still spend on the benchmark (``CrowdLimits.recollection_budget``); None: no limit."""
    budget = crowd_limits(benchmark=benchmark).recollection_budget
    if budget is None:
        return None
    crowd_batches = Batch.objects.filter(benchmark=benchmark).filter(backend__in=remote_backend_names())
    return budget - sum((batch_spending(batch=batch).recollection for batch in crowd_batches), Decimal(0))


def hits_short_of_valid_work(*, batch: Batch) -> list[HIT]:
    """HITs still offered that lost counted work (to filtering, rejection, or a submission on the
    crowd with no answers here, an orphan) and have free slots again: what re-collection offers again."""
    lost = Assignment.objects.filter(hit=OuterRef("pk"), filtered=True)
    orphaned = [int(orphan["hit"]) for orphan in batch.external.get("orphans", [])]
    return list(
        HIT.objects.filter(OFFERED_HIT, batch=batch, assignments_active__lt=F("assignments_required"))
        .filter(Exists(lost) | Q(pk__in=orphaned))
        .select_related("batch")
        .order_by("id")
    )


def batch_recollection_due(*, batch: Batch) -> Decimal:
    """At most what the next sync's re-collection may buy, fees included: every missing assignment of
    the HITs short of valid work, before MTurk's still-offered and in-progress ones are subtracted."""
    fees = batch_fees(batch=batch)
    return sum(
        (
            assignments_cost(
                reward=batch.reward,
                count=hit.assignments_required - hit.assignments_active,
                hit_size=hit.assignments_required,
                fees=fees,
            )
            for hit in hits_short_of_valid_work(batch=batch)
        ),
        Decimal(0),
    )
