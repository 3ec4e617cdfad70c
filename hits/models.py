"""How judgments are collected: batches, HITs, their items, assignments and answers (docs/design.md §3, §4)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import Decimal
from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import Benchmark, Candidate, Target, Worker
from crowds.interface import BACKEND_NAME_MAX_LENGTH, backend_choices, default_backend_name


class BatchStatus(models.TextChoices):
    DRAFT = "draft", "draft"
    OPEN = "open", "open"
    CLOSED = "closed", "closed"


class FilteredPolicy(models.TextChoices):
    """What a remote crowd is told about work that spam filtering does not count (docs/design.md §5)."""

    APPROVE = "approve", "approve and pay it anyway"
    REJECT = "reject", "reject it with the batch's message"


DEFAULT_REJECTION_MESSAGE = (
    "Thank you for your work. We could not use it: some of the check questions in this task were answered "
    "in a way that shows the instructions were not followed."
)


def new_public_token() -> str:
    """The id of a HIT or batch in the public URLs a crowd opens (``/mturk/hit/<token>/``,
    ``/prolific/study/<token>/``): random, so no one finds a page by counting (docs/design.md §4)."""
    return secrets.token_urlsafe(16)


# Bounds of a batch's settings as entered: the seed is a 32-bit column, and a claim is kept a week at most.
MAX_BATCH_SEED = 2**31 - 1
MAX_ASSIGNMENT_MINUTES = 7 * 24 * 60


class Batch(models.Model):
    """The HITs of one pipeline step for a set of targets, on one crowd backend."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="batches")
    # One of the scheme's steps (schemes.base.Step), e.g. SWORDS's 2 (reduce) or 3 (score).
    step = models.PositiveSmallIntegerField()
    # The batch of an earlier step whose targets this one goes on collecting, e.g. the step-3 batch
    # the SWORDS pipeline makes for one step-2 batch (docs/design.md §3); None for batches a researcher made.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children", editable=False
    )
    # The crowd it is published to: a name of ``settings.CROWD_BACKENDS`` (crowds.interface).
    backend = models.CharField(
        max_length=BACKEND_NAME_MAX_LENGTH, choices=backend_choices, default=default_backend_name
    )
    status = models.CharField(max_length=8, choices=BatchStatus.choices, default=BatchStatus.OPEN)
    seed = models.IntegerField(default=0)
    assignments_per_hit = models.PositiveSmallIntegerField(default=3)
    reward = models.DecimalField(max_digits=6, decimal_places=2, default=Decimal("0.10"))
    assignment_duration = models.DurationField(default=timedelta(minutes=30))
    lifetime = models.DurationField(default=timedelta(days=7))
    auto_approval_delay = models.DurationField(default=timedelta(days=3))
    title = models.CharField(max_length=200, default="Judge substitutes for a word in context")
    description = models.TextField(
        default="Read a short text and say whether each word could replace the highlighted word."
    )
    keywords = models.CharField(max_length=200, default="language, words, synonyms, substitution")
    # Workers see how they did on this batch's check items on their own page (docs/design.md §11).
    gold_feedback = models.BooleanField(
        default=False, help_text="show each worker their own accuracy on the check items of this batch"
    )
    # MTurk qualification settings (docs/design.md §4),
    # e.g. {"approval_rate": 98, "locale": "US", "approved_hits": 10000}.
    qualifications = models.JSONField(default=dict, blank=True)
    # Crowd-backend bookkeeping such as the MTurk HITTypeId.
    external = models.JSONField(default=dict, blank=True)
    filtered_policy = models.CharField(
        max_length=8,
        choices=FilteredPolicy.choices,
        default=FilteredPolicy.APPROVE,
        help_text="on a paid crowd: approve or reject the assignments that spam filtering does not count",
    )
    rejection_message = models.TextField(default=DEFAULT_REJECTION_MESSAGE, blank=True)
    # The task design of the page (schemes.design.TaskDesign.page_part: instructions, examples, the
    # choices' labels and keys), checked when written; {} shows the scheme's page as it is.
    design = models.JSONField(default=dict, blank=True)
    # The batch's id in its public study URL (Prolific); database ids are never in a public URL.
    public_token = models.CharField(max_length=32, unique=True, default=new_public_token, editable=False)
    # Lease taken by a sync with a conditional UPDATE, so a beat task and a command never sync one batch at once.
    sync_lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    # Set while a researcher has paused the batch (docs/design.md §16): it hands out no new HIT (the
    # local queue's claim, a crowd's new visitors), work already taken may still be submitted.
    paused_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "batches"
        constraints = [
            models.CheckConstraint(condition=Q(step__gte=1), name="batch_step_positive"),
            models.CheckConstraint(condition=Q(assignments_per_hit__gte=1), name="batch_assignments_positive"),
            # One follow-up batch per batch collects at a time; a closed one may be followed by another.
            models.UniqueConstraint(
                fields=["parent"],
                condition=Q(parent__isnull=False) & ~Q(status="closed"),
                name="batch_one_open_step3_per_parent",
            ),
        ]

    def __str__(self) -> str:
        return f"batch {self.pk} ({self.benchmark.name}, step {self.step})"


class HIT(models.Model):
    """One page of work: up to ten candidates of one target plus two controls."""

    # Without an index of its own: (batch, assignments_active) and the unique part lead with it.
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="hits", db_index=False)
    target = models.ForeignKey(Target, on_delete=models.CASCADE, related_name="hits")
    part = models.PositiveSmallIntegerField(help_text="index of this part in the target's array_split")
    assignments_required = models.PositiveSmallIntegerField()
    # Counter maintained by the claim/submit/filter services, under row locks, so claiming
    # stays a single indexed query: claimed-and-live plus submitted-and-valid assignments.
    assignments_active = models.PositiveSmallIntegerField(default=0)
    external_id = models.CharField(max_length=64, blank=True, help_text="MTurk HITId")
    # The HIT's id in its public ExternalQuestion URL (MTurk); database ids are never in a public URL.
    public_token = models.CharField(max_length=32, unique=True, default=new_public_token, editable=False)
    # Set when the HIT goes only to the annotators it is reserved for (HITReservation), e.g. the
    # expert annotators a researcher assigned a ProLex target to; the claim query reads it first.
    reserved = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    benchmark_path: ClassVar[str] = "batch__benchmark"

    class Meta:
        ordering = ["id"]
        verbose_name = "HIT"
        constraints = [
            models.UniqueConstraint(fields=["batch", "target", "part"], name="hit_unique_part"),
            models.CheckConstraint(
                condition=Q(assignments_active__lte=models.F("assignments_required")),
                name="hit_never_over_assigned",
            ),
        ]
        indexes = [
            models.Index(fields=["batch", "assignments_active"]),
            # The claim query walks open HITs in exactly this order (older batches first, the
            # fullest HITs first so HITs fill before work spreads) and stops at the first row it
            # can lock; full HITs are left out of the index so that walk never steps over them.
            models.Index(
                fields=["batch", "-assignments_active", "id"],
                condition=Q(assignments_active__lt=models.F("assignments_required")),
                name="hit_claim_order",
            ),
        ]

    def __str__(self) -> str:
        return f"HIT {self.pk}"


class HITReservation(models.Model):
    """A named annotator a reserved HIT goes to: the local queue offers the HIT to them alone, and
    each of them takes one of its ``assignments_required`` slots (one per reserved annotator)."""

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="reservations")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="reservations")

    benchmark_path: ClassVar[str] = "hit__batch__benchmark"

    class Meta:
        ordering = ["hit", "worker"]
        constraints = [models.UniqueConstraint(fields=["hit", "worker"], name="hitreservation_once_per_worker")]
        indexes = [models.Index(fields=["worker", "hit"])]

    def __str__(self) -> str:
        return f"HIT {self.hit_id} for {self.worker_id}"


class RemoteHIT(models.Model):
    """One posting of a HIT on a remote crowd (an MTurk HIT).

    The first posting's id is also ``HIT.external_id``. Re-collection may add assignments to a
    posting or post the HIT again (a new round) when MTurk's rules make that the cheaper way.
    """

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="remote_hits")
    round = models.PositiveSmallIntegerField(default=0, help_text="0 for the first posting, then 1, 2, ...")
    external_id = models.CharField(max_length=64, unique=True, help_text="MTurk HITId")
    max_assignments = models.PositiveSmallIntegerField()
    # How many times create_additional_assignments_for_hit grew this posting (part of its request tokens).
    extensions = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    expired_at = models.DateTimeField(null=True, blank=True)

    benchmark_path: ClassVar[str] = "hit__batch__benchmark"

    class Meta:
        ordering = ["hit", "round"]
        verbose_name = "remote HIT"
        constraints = [
            models.UniqueConstraint(fields=["hit", "round"], name="remotehit_unique_round"),
            models.CheckConstraint(condition=Q(max_assignments__gte=1), name="remotehit_assignments_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} (HIT {self.hit_id}, round {self.round})"


class HITItem(models.Model):
    """One row of a HIT's page, in display order.

    ``kind`` is the scheme's own word for the row (schemes.base.PlannedItem); ``control`` marks a
    check whose expected answer the scheme knows. Neither is ever shown to the annotator.
    """

    # Without an index of its own: the unique (hit, position) index leads with it.
    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="items", db_index=False)
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=20)
    control = models.BooleanField(default=False)
    candidate = models.ForeignKey(Candidate, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    # A candidate (at most 500 characters) or a whole sentence to mark words in (IMPORT_MAX_TEXT_LENGTH).
    text = models.TextField()

    benchmark_path: ClassVar[str] = "hit__batch__benchmark"

    class Meta:
        ordering = ["hit", "position"]
        constraints = [
            models.UniqueConstraint(fields=["hit", "position"], name="hititem_unique_position"),
            models.CheckConstraint(
                condition=Q(control=False) | Q(candidate__isnull=True), name="hititem_control_has_no_candidate"
            ),
        ]

    def __str__(self) -> str:
        return self.text


class AssignmentStatus(models.TextChoices):
    CLAIMED = "claimed", "claimed, in progress"
    SUBMITTED = "submitted", "submitted"
    RETURNED = "returned", "returned by the worker"
    EXPIRED = "expired", "expired before submit"
    APPROVED = "approved", "approved"
    REJECTED = "rejected", "rejected"


# Work handed in: it may be judged, paid, rejected or filtered, but never claimed again.
SUBMITTED_STATUSES = frozenset({AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED, AssignmentStatus.REJECTED})
# Submitted work that counts while it is not filtered, and so holds one of its HIT's slots
# (HIT.assignments_active); rejected work never does.
VALID_STATUSES = frozenset({AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED})


def confirmed(prefix: str = "") -> Q:
    """Work that may count: local work at once; crowd work (it carries the crowd's assignment id, which
    anyone can forge in a URL) only once a sync found it in the crowd's own list under the same worker
    and HIT, which sets ``external_status`` (docs/design.md §4)."""
    return Q(**{f"{prefix}external_id": ""}) | ~Q(**{f"{prefix}external_status": ""})


# What HIT.assignments_active counts (hits.slots): live local claims (on a crowd, the crowd decides who
# takes a HIT, so a claim there holds nothing) and confirmed, valid, unfiltered work.
HOLDS_SLOT = Q(status=AssignmentStatus.CLAIMED, external_id="") | (
    Q(status__in=VALID_STATUSES, filtered=False) & confirmed()
)


class Assignment(models.Model):
    """One worker's work on one HIT. Nothing is ever deleted: state changes only."""

    # Without indexes of their own: the unique (hit, worker) and the (worker, status) indexes lead with them.
    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="assignments", db_index=False)
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="assignments", db_index=False)
    status = models.CharField(max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.CLAIMED)
    # Set by spam filtering (docs/design.md §5): the data stays, its labels do not count.
    filtered = models.BooleanField(default=False)
    external_id = models.CharField(max_length=64, blank=True, help_text="MTurk AssignmentId")
    claimed_at = models.DateTimeField()
    deadline = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    seconds_on_page = models.FloatField(null=True, blank=True)
    controls_correct = models.PositiveSmallIntegerField(default=0)
    controls_total = models.PositiveSmallIntegerField(default=0)
    feedback = models.TextField(blank=True)
    # The remote crowd's own state of this assignment as of the last sync (MTurk: Submitted, Approved, Rejected).
    external_status = models.CharField(max_length=16, blank=True)
    # Set by the sync when the crowd does not know this assignment: its query parameters were not
    # genuine, or it never reached the crowd. It is filtered and never paid.
    external_unknown = models.BooleanField(default=False)

    benchmark_path: ClassVar[str] = "hit__batch__benchmark"

    class Meta:
        ordering = ["id"]
        constraints = [
            # docs/design.md §3: one worker takes a given HIT at most once. On a crowd the worker is
            # known only once the crowd confirms the assignment (docs/design.md §4): bindings made on a
            # page's word alone may coexist, so a forged visit never keeps the real worker out.
            models.UniqueConstraint(
                fields=["hit", "worker"],
                condition=Q(external_id="") | ~Q(external_status=""),
                name="assignment_once_per_worker_per_hit",
            ),
            # A crowd assignment id names one confirmed assignment here.
            models.UniqueConstraint(
                fields=["external_id"],
                condition=~Q(external_id="") & ~Q(external_status=""),
                name="assignment_unique_external_id",
            ),
            models.CheckConstraint(
                condition=~(Q(external_unknown=True) & Q(status=AssignmentStatus.APPROVED)),
                name="assignment_unknown_to_crowd_never_approved",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "deadline"]),
            models.Index(fields=["worker", "status"]),
            # The unique constraints above are partial: these serve every lookup by HIT or crowd id.
            models.Index(fields=["hit", "worker"], name="assignment_hit_worker"),
            models.Index(fields=["external_id"], name="assignment_external_id"),
            # The throughput of the last hours (docs/design.md §16) reads a bounded window of submissions.
            models.Index(
                fields=["submitted_at"], condition=Q(submitted_at__isnull=False), name="assignment_submitted_at"
            ),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.worker}, HIT {self.hit_id})"

    @property
    def failed_controls(self) -> bool:
        return self.controls_correct < self.controls_total


class Answer(models.Model):
    """A worker's answer to one item, controls included, as the scheme checked it
    (schemes.base.CleanAnswer): ``value`` a short word, ``data`` anything richer (spans, typed
    suggestions). The scheme also turns answers into Labels."""

    # Without an index of its own: the unique (assignment, item) index leads with it.
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="answers", db_index=False)
    item = models.ForeignKey(HITItem, on_delete=models.CASCADE, related_name="answers")
    value = models.CharField(max_length=32)
    data = models.JSONField(null=True, blank=True)

    benchmark_path: ClassVar[str] = "assignment__hit__batch__benchmark"

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "item"], name="answer_once_per_item")]

    def __str__(self) -> str:
        return f"{self.value} on item {self.item_id}"


class BonusStatus(models.TextChoices):
    PENDING = "pending", "pending"
    SENT = "sent", "sent"
    FAILED = "failed", "failed"


class Bonus(models.Model):
    """A bonus payment to a worker for one assignment.

    The row is written before the crowd is asked to pay, with its request token, so a retry after a
    timeout sends the same token and the crowd pays at most once.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="bonuses")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="bonuses")
    amount = models.DecimalField(max_digits=6, decimal_places=2)
    reason = models.TextField()
    token = models.CharField(max_length=64, unique=True)
    # Prolific pays a bonus in two calls, the second one not idempotent: the bulk bonus payment it
    # made (recorded before paying) and when it was asked to pay it (recorded before asking, so no
    # retry ever asks twice).
    external_id = models.CharField(max_length=64, blank=True)
    pay_requested_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=BonusStatus.choices, default=BonusStatus.PENDING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "assignment__hit__batch__benchmark"

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "bonuses"
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="bonus_amount_positive"),
            models.CheckConstraint(condition=~Q(reason=""), name="bonus_has_reason"),
            # A re-run command or a double-posted form pays once.
            models.UniqueConstraint(fields=["assignment", "reason"], name="bonus_once_per_assignment_and_reason"),
        ]

    def __str__(self) -> str:
        return f"${self.amount} to {self.worker} for assignment {self.assignment_id}"


class HITFlagReason(models.TextChoices):
    """Why an annotator flags a HIT or one of its items (the fixed list the page offers)."""

    BROKEN = "broken", "The text is broken or garbled"
    OFFENSIVE = "offensive", "Offensive content"
    UNKNOWN_TARGET = "unknown_target", "I do not know the highlighted word"
    OTHER = "other", "Something else (please say what)"


class HITFlag(models.Model):
    """An annotator's flag on the HIT they work on, or on one of its items, with an optional note.

    Flagging does not return the HIT. One flag per item (or per whole HIT) per assignment: flagging
    again replaces the reason and the note. Researchers see flags on the HIT's page and in the
    benchmark's list, and may exclude a flagged candidate (``CandidateStage.EXCLUDED``).
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="flags")
    # None flags the whole HIT.
    item = models.ForeignKey(HITItem, null=True, blank=True, on_delete=models.CASCADE, related_name="flags")
    reason = models.CharField(max_length=16, choices=HITFlagReason.choices)
    note = models.TextField(blank=True, max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)

    benchmark_path: ClassVar[str] = "assignment__hit__batch__benchmark"

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "HIT flag"
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "item"], condition=Q(item__isnull=False), name="hitflag_once_per_item"
            ),
            models.UniqueConstraint(
                fields=["assignment"], condition=Q(item__isnull=True), name="hitflag_once_per_whole_hit"
            ),
        ]

    def __str__(self) -> str:
        where = f"item {self.item_id}" if self.item_id else "the whole HIT"
        return f"{self.reason} on {where} (assignment {self.assignment_id})"


class CrowdLimits(models.Model):
    """What a benchmark's paid crowd work may spend without the researcher's say (docs/design.md §3).

    A benchmark without a row has the defaults (``crowd_limits`` in ``crowds.selectors``).
    """

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, related_name="crowd_limits")
    bonus_limit_rewards = models.PositiveSmallIntegerField(
        default=10, help_text="a bonus above this many times the batch's reward needs the researcher's confirmation"
    )
    recollection_budget = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="dollars re-collection may spend in all on this benchmark, MTurk's fees included; empty: no limit",
    )
    budget_cap = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="the most the benchmark's work may cost in all, spent and committed, the crowds' fees included "
        "(docs/design.md §16); empty: no cap",
    )
    # When the budget warning was last sent for this cap (docs/design.md §16): set as spent and committed
    # cross 80 % of it, cleared when they fall back below or the cap changes, so each crossing warns once.
    budget_warned_at = models.DateTimeField(null=True, blank=True, editable=False)

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        verbose_name = "crowd limits"
        verbose_name_plural = "crowd limits"

    def __str__(self) -> str:
        return f"crowd limits of {self.benchmark.name}"


class BudgetReservation(models.Model):
    """Money set aside under a benchmark's budget cap while a publish talks to its crowd (docs/design.md
    §16, ``hits.budget.budget_reserve``): written with the check, under the benchmark's lock, before the
    call, and deleted after it, when what was posted counts by itself. Counted as committed until
    then, or for ``BUDGET_RESERVATION_HOURS`` at most (a run that died leaves one behind)."""

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="budget_reservations")
    batch = models.ForeignKey("Batch", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    what = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["benchmark", "created_at"], name="budgetreservation_current")]

    def __str__(self) -> str:
        return f"${self.amount} reserved on {self.benchmark_id} for {self.what}"


class DesignTemplate(models.Model):
    """A benchmark's task design that its new batches start from (docs/design.md §4.1): the JSON of
    ``schemes.design.TaskDesign``, listing included, checked against every step of its scheme."""

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, related_name="design_template")
    design = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    def __str__(self) -> str:
        return f"task design template of {self.benchmark.name}"


class AssignmentTelemetry(models.Model):
    """How an assignment was worked on (``hits.telemetry.Telemetry``: timings and counts, never text),
    as the page sent it with the submission or the return. Checked by ``telemetry_parse`` before it is
    stored; the review's signals read it (docs/quality.md). Telemetry of crowd work that no sync has
    confirmed counts for nothing, as the work itself."""

    benchmark_path: ClassVar[str] = "assignment__hit__batch__benchmark"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, primary_key=True, related_name="telemetry")
    data = models.JSONField()
    received_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "assignment telemetry"
        verbose_name_plural = "assignment telemetry"

    def __str__(self) -> str:
        return f"telemetry of assignment {self.assignment_id}"


class AssignmentDraft(models.Model):
    """A HIT in progress as its page last reported it, so another device resumes it (docs/design.md §4).

    ``answers`` are the page's answer fields as ``{name, value}`` objects, ``state`` what the page keeps
    beside them (its telemetry so far, checked as ``hits.telemetry`` does), ``views`` the active
    milliseconds each page view (a random id the page draws when it opens) reported, its largest
    report kept: the time on page is their sum (``hits.drafts``). Deleted when the assignment is
    submitted, returned or expires.
    """

    benchmark_path: ClassVar[str] = "assignment__hit__batch__benchmark"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, primary_key=True, related_name="draft")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="+")
    answers = models.JSONField(default=list)
    state = models.JSONField(default=dict)
    views = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"draft of assignment {self.assignment_id}"


class Mitigations(models.Model):
    """What a benchmark's annotator page does against answers from language models (docs/design.md §9).

    A benchmark without a row has none of them (``hits.selectors.benchmark_mitigations``). Published
    studies found asking not to and disabling copy and paste roughly halves such use; none ends it.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, related_name="mitigations")
    pledge = models.BooleanField(
        default=False,
        help_text="ask each worker to pledge to answer themselves, without AI tools, before their first HIT",
    )
    block_copy_paste = models.BooleanField(
        default=False, help_text="disable copying the text and pasting into the answer fields"
    )
    notice = models.BooleanField(default=False, help_text="say in the instructions that AI tools are not allowed")

    class Meta:
        verbose_name_plural = "mitigations"

    def __str__(self) -> str:
        return f"mitigations of {self.benchmark.name}"


PLEDGE_TEXT = "I will answer myself, without AI tools."


class Pledge(models.Model):
    """A worker's pledge, made with one of their assignments of a benchmark. A pledge made with crowd work
    counts only once the crowd confirms that work (``confirmed``), so nobody can pledge for another."""

    benchmark_path: ClassVar[str] = "benchmark"

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="pledges")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="pledges")
    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="pledge")
    text = models.CharField(max_length=200, default=PLEDGE_TEXT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["worker", "benchmark"])]

    def __str__(self) -> str:
        return f"pledge of {self.worker} in {self.benchmark.name}"


# The qualification test's models live with its package (hits/qualification/); imported here so
# Django finds them as models of this app.
from hits.notifications.models import Notification as Notification  # noqa: E402
from hits.notifications.models import NotificationKind as NotificationKind  # noqa: E402
from hits.notifications.models import NotificationSettings as NotificationSettings  # noqa: E402
from hits.notifications.models import WebhookDelivery as WebhookDelivery  # noqa: E402
from hits.qualification.models import GoldAnswer as GoldAnswer  # noqa: E402
from hits.qualification.models import QualificationAttempt as QualificationAttempt  # noqa: E402
from hits.qualification.models import QualificationItem as QualificationItem  # noqa: E402
from hits.qualification.models import QualificationTest as QualificationTest  # noqa: E402


class BatchWorkDone(models.Model):
    """How many HITs of a batch a worker has submitted (an assignment in ``SUBMITTED_STATUSES``): the
    "HITs done in this batch" of the annotator's page, read by key whatever the worker's history
    (docs/design.md §4, "HITs done").

    Kept by the database itself, never by a view: a trigger on the assignments' table adds one
    when an assignment enters those statuses (a submit, a crowd's submission), takes one away when
    it leaves them (the crowd withdraws it) and counts every writer alike, ``update()`` and raw SQL
    included (``hits.migrations.0024_batch_work_done``). The counter's row is locked as the
    assignment's row is written, after it and before the HIT's: the order every writer of an
    assignment already follows, so a submit and a crowd sync of the same worker never wait on each
    other in opposite orders.
    """

    benchmark_path: ClassVar[str] = "batch__benchmark"

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="+", db_index=False)
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="+")
    done = models.IntegerField(default=0)

    class Meta:
        verbose_name_plural = "batch work done"
        constraints = [models.UniqueConstraint(fields=["worker", "batch"], name="batch_work_done_once")]

    def __str__(self) -> str:
        return f"{self.done} HITs of batch {self.batch_id} by worker {self.worker_id}"
