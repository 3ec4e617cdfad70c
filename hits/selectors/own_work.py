"""What an annotator sees of their own work (docs/design.md §11, "The worker's own page"): each
assignment's status in plain words, the reason when it was rejected or not counted, what it earned
(reward and bonuses, as recorded here or as the crowd recorded it), and their accuracy on the check
items where the batch allows that feedback. Only the worker's own rows are ever read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Prefetch, QuerySet

from annotation.models import Worker
from crowds.interface import backend_choices, backend_names, get_backend, remote_backend_names
from hits.models import SUBMITTED_STATUSES, Assignment, AssignmentDraft, AssignmentStatus, Bonus, BonusStatus

# The statuses as a worker reads them.
STATUS_WORDS = {
    AssignmentStatus.CLAIMED: "in progress",
    AssignmentStatus.SUBMITTED: "submitted, awaiting review",
    AssignmentStatus.APPROVED: "approved",
    AssignmentStatus.REJECTED: "rejected",
    AssignmentStatus.RETURNED: "returned",
    AssignmentStatus.EXPIRED: "expired (time ran out)",
}
# Submitted work that the review did not count, told without naming any signal or other worker.
NOT_COUNTED = (
    "Not counted: the check questions of this HIT were answered in a way that shows the instructions were not followed."
)
NOT_COUNTED_PLAIN = "Not counted in the results after review."


@dataclass(frozen=True)
class BonusLine:
    amount: Decimal
    reason: str
    paid: bool


@dataclass(frozen=True)
class OwnWorkRow:
    """One of the worker's assignments as their page shows it."""

    assignment_id: int
    project: str
    word: str
    backend: str
    status: str
    status_words: str
    when: datetime
    seconds_on_page: float | None
    reason: str
    # The reward: earned (approved or, locally, counted), pending (awaiting review) or None (none due).
    reward: Decimal | None
    reward_paid: bool
    bonuses: tuple[BonusLine, ...] = ()
    # (correct, total) on the check items, only where the batch shows it.
    gold: tuple[int, int] | None = None

    @property
    def in_progress(self) -> bool:
        return self.status == AssignmentStatus.CLAIMED


@dataclass
class Earnings:
    """Totals per crowd backend: what was paid (or recorded as earned) and what awaits review."""

    backend: str
    label: str
    # The crowd pays the worker and keeps its own record ("earned" is what it recorded as approved).
    paid_by_crowd: bool = False
    earned: Decimal = Decimal("0.00")
    pending: Decimal = Decimal("0.00")
    bonuses: Decimal = Decimal("0.00")
    bonuses_pending: Decimal = Decimal("0.00")


@dataclass(frozen=True)
class GoldScore:
    project: str
    correct: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.correct / self.total) if self.total else 0


@dataclass(frozen=True)
class OwnWorkSummary:
    earnings: list[Earnings]
    gold: list[GoldScore] = field(default_factory=list)

    @property
    def paying_crowds(self) -> list[str]:
        """The labels of the crowds among the lines that pay the worker themselves."""
        return [line.label for line in self.earnings if line.paid_by_crowd]


def own_assignments(*, worker: Worker) -> QuerySet[Assignment]:
    """The worker's assignments, newest first, with what their page reads (for a paginator)."""
    return (
        Assignment.objects.filter(worker=worker)
        .select_related("hit__target", "hit__batch__benchmark")
        .prefetch_related(Prefetch("bonuses", queryset=Bonus.objects.order_by("created_at")))
        .order_by("-claimed_at", "-id")
    )


def _project(assignment: Assignment) -> str:
    batch = assignment.hit.batch
    return batch.title or batch.benchmark.title or batch.benchmark.name


def _reward(assignment: Assignment) -> tuple[Decimal | None, bool]:
    """(amount, paid): approved work earned the batch's reward (on a crowd, once the crowd recorded
    the approval); submitted work that counts awaits it; anything else earns nothing."""
    reward = assignment.hit.batch.reward
    remote = get_backend(assignment.hit.batch.backend).remote
    if assignment.status == AssignmentStatus.APPROVED:
        return reward, True
    if assignment.status == AssignmentStatus.SUBMITTED and not assignment.external_unknown:
        if not remote:
            # The local queue has no payment step: counted work is what the reward was recorded for.
            return (None, False) if assignment.filtered else (reward, True)
        return reward, False
    return None, False


def _reason(assignment: Assignment) -> str:
    if assignment.status == AssignmentStatus.REJECTED:
        return assignment.feedback or assignment.hit.batch.rejection_message or NOT_COUNTED_PLAIN
    if assignment.status in (AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED) and assignment.filtered:
        return NOT_COUNTED if assignment.failed_controls else NOT_COUNTED_PLAIN
    return ""


def own_work_rows(assignments: Iterable[Assignment]) -> list[OwnWorkRow]:
    rows = []
    for assignment in assignments:
        reward, paid = _reward(assignment)
        batch = assignment.hit.batch
        rows.append(
            OwnWorkRow(
                assignment_id=assignment.pk,
                project=_project(assignment),
                word=assignment.hit.target.word,
                backend=batch.get_backend_display(),
                status=assignment.status,
                status_words=STATUS_WORDS.get(AssignmentStatus(assignment.status), assignment.status),
                when=assignment.submitted_at or assignment.claimed_at,
                seconds_on_page=assignment.seconds_on_page,
                reason=_reason(assignment),
                reward=reward,
                reward_paid=paid,
                bonuses=tuple(
                    BonusLine(amount=bonus.amount, reason=bonus.reason, paid=bonus.status == BonusStatus.SENT)
                    for bonus in assignment.bonuses.all()
                    if bonus.status != BonusStatus.FAILED
                ),
                gold=(assignment.controls_correct, assignment.controls_total)
                if batch.gold_feedback and assignment.controls_total and assignment.status != AssignmentStatus.CLAIMED
                else None,
            )
        )
    return rows


def own_work_summary(*, worker: Worker) -> OwnWorkSummary:
    """Earnings per backend over all of the worker's work, and accuracy on the check items of the
    batches that show it; a few aggregate reads, whatever the number of assignments."""
    labels = dict(backend_choices())
    remote = set(remote_backend_names())
    totals: dict[str, Earnings] = {}

    def line(backend: str) -> Earnings:
        if backend not in totals:
            totals[backend] = Earnings(
                backend=backend, label=labels.get(backend, backend), paid_by_crowd=backend in remote
            )
        return totals[backend]

    done = Assignment.objects.filter(worker=worker, status__in=SUBMITTED_STATUSES).values_list(
        "status",
        "filtered",
        "external_unknown",
        "hit__batch__backend",
        "hit__batch__reward",
        "hit__batch__gold_feedback",
        "hit__batch__title",
        "hit__batch__benchmark__name",
        "controls_correct",
        "controls_total",
    )
    gold: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for status, filtered, unknown, backend, reward, feedback, title, benchmark, correct, total in done:
        earned = status == AssignmentStatus.APPROVED or (
            status == AssignmentStatus.SUBMITTED and backend not in remote and not filtered and not unknown
        )
        if earned:
            line(backend).earned += reward
        elif status == AssignmentStatus.SUBMITTED and not unknown and backend in remote:
            line(backend).pending += reward
        if feedback and total:
            scores = gold[title or benchmark]
            scores[0] += correct
            scores[1] += total
    for backend, amount, status in Bonus.objects.filter(worker=worker).values_list(
        "assignment__hit__batch__backend", "amount", "status"
    ):
        if status == BonusStatus.SENT:
            line(backend).bonuses += amount
        elif status == BonusStatus.PENDING:
            line(backend).bonuses_pending += amount
    order = backend_names()
    earnings = sorted(totals.values(), key=lambda entry: order.index(entry.backend) if entry.backend in order else 99)
    return OwnWorkSummary(
        earnings=earnings,
        gold=[GoldScore(project=name, correct=scores[0], total=scores[1]) for name, scores in sorted(gold.items())],
    )


def assignment_draft(*, assignment: Assignment) -> dict[str, Any] | None:
    """The server's draft of a HIT in progress as the page reads it (``static/hits/hit_page.js``):
    answers, state, the time of each page view and when it was saved (milliseconds since the epoch).
    Read with the assignment where the page loaded it (``assignment_with_progress``)."""
    try:
        draft = assignment.draft
    except AssignmentDraft.DoesNotExist:
        return None
    return {
        "answers": draft.answers,
        "state": draft.state,
        "views": draft.views,
        "saved": int(draft.updated_at.timestamp() * 1000),
    }


def gold_rows(rows: Sequence[OwnWorkRow]) -> bool:
    """Whether any row on the page shows gold feedback (the column is left out otherwise)."""
    return any(row.gold is not None for row in rows)
