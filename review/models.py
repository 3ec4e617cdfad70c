"""What the review room stores: worker flags with their evidence and each benchmark's review settings
(docs/design.md §5)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from annotation.models import Benchmark, Candidate, Target, Worker
from review.signals import SignalSettings


class FlagReason(models.TextChoices):
    CONTROL_ACCURACY = "control_accuracy", "control accuracy below the threshold"
    FAST = "fast", "implausibly fast"
    STRAIGHT_LINE = "straight_line", "the same answer on every row"
    ABSTAIN = "abstain", "abstains far more than the crowd"
    IDENTICAL = "identical", "answers identical to another worker's"
    DISAGREEMENT = "disagreement", "low agreement with the majority"
    PASTED = "pasted", "answers pasted into the text fields"
    AWAY = "away", "left the page between reading and answering"
    NO_INPUT = "no_input", "answers without any pointer, touch or key input"
    UNIFORM_TIMING = "uniform_timing", "times per row more regular than a person's"


class WorkerFlag(models.Model):
    """A reason to review a worker's work in one benchmark, with its evidence."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="worker_flags")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="flags")
    reason = models.CharField(max_length=20, choices=FlagReason.choices)
    evidence = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    cleared_at = models.DateTimeField(null=True, blank=True)
    cleared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "worker", "reason"], name="workerflag_unique_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.worker} in {self.benchmark}: {self.reason}"

    @property
    def active(self) -> bool:
        return self.cleared_at is None


class ReviewSettings(models.Model):
    """How a benchmark's worker review runs: automatic blocking and the bot-signal thresholds.

    A row of the review app rather than fields on Benchmark: these settings are about what the
    judgments mean, change while a collection runs, and most benchmarks never need one (no row
    means the defaults: flag for review, block nobody automatically).
    """

    benchmark = models.OneToOneField(
        Benchmark, on_delete=models.CASCADE, primary_key=True, related_name="review_settings"
    )
    # docs/design.md §5: a worker below the control accuracy is flagged and, if the researcher chooses, blocked.
    auto_block_spammers = models.BooleanField(
        default=False, help_text="block workers whose control accuracy falls below the benchmark's threshold"
    )
    auto_block_signals = models.BooleanField(
        default=False,
        help_text="block workers flagged by a bot signal (fast, straight-lining, identical answers, pasted, away…)",
    )
    # docs/design.md §17: researchers' decisions on candidates count in scores only when chosen.
    apply_overrides = models.BooleanField(
        default=False,
        help_text="let researchers' decisions on candidates set their scores and categories in figures and exports",
    )
    # Overrides of review.signals.SignalSettings by field name, e.g. {"fast_factor": 5}.
    signal_overrides = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        verbose_name_plural = "review settings"

    def __str__(self) -> str:
        return f"review settings of {self.benchmark}"

    def clean(self) -> None:
        overrides: Any = self.signal_overrides
        if not isinstance(overrides, dict):
            raise ValidationError({"signal_overrides": "must be an object of setting names to numbers"})
        try:
            SignalSettings.with_overrides(overrides)
        except ValueError as error:
            raise ValidationError({"signal_overrides": str(error)}) from None


class SignalsState(models.Model):
    """Whether the bot signals of a benchmark are to be recomputed, and how their last run went.

    The signals read every answer of a benchmark, so they run in a task of their own
    (``review.services.signals``), apart from the refresh. Each request (a refresh that saw new
    work, a change of thresholds) adds one to ``requests``; a run notes the count it started from
    in ``computed_requests`` once it has committed, so a computation is pending while
    ``requests > computed_requests``, and a run that dies leaves it pending for the next. At most
    one run is queued per benchmark: ``queued_at`` is when its message was sent (None: held back
    until due), ``due_at`` when it may start.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.OneToOneField(
        Benchmark, on_delete=models.CASCADE, primary_key=True, related_name="signals_state"
    )
    requests = models.PositiveBigIntegerField(default=0)
    computed_requests = models.PositiveBigIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    # The last run: when it committed, how long it took (wall clock) and how much work it read.
    computed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(default=0.0)
    assignments = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"bot signals of benchmark {self.benchmark_id}"

    @property
    def pending(self) -> bool:
        return self.requests > self.computed_requests


class OverrideDecision(models.TextChoices):
    """What a researcher may decide of a candidate (docs/design.md §17): the categories of
    ``schemes.scores``, the same for every scheme whose items are a target's candidates."""

    ACCEPTABLE = "acceptable", "acceptable"
    CONCEIVABLE = "conceivable", "conceivable, not acceptable"
    INCONCEIVABLE = "inconceivable", "inconceivable"


class CandidateOverride(models.Model):
    """A researcher's decision about one candidate, with the reason for it (docs/design.md §17).

    Kept apart from the crowd's labels: it is never a ``Label``, so counts of labels, agreement and
    the workers' figures never see it. Scores and categories follow it only where the benchmark's
    review settings say so (``ReviewSettings.apply_overrides``). One per candidate: a new decision
    replaces the last, and the activity log keeps each.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="candidate_overrides")
    candidate = models.OneToOneField(Candidate, on_delete=models.CASCADE, related_name="override")
    decision = models.CharField(max_length=16, choices=OverrideDecision.choices)
    reason = models.TextField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~models.Q(reason=""), name="candidateoverride_reason_given"),
        ]

    def __str__(self) -> str:
        return f"candidate {self.candidate_id}: {self.decision}"


class ItemResolution(models.Model):
    """A researcher's mark that the disagreement on an item (a target, a sentence, an instance) is
    resolved, so that the queue of disagreements shows it as done (docs/design.md §17)."""

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="item_resolutions")
    target = models.OneToOneField(Target, on_delete=models.CASCADE, related_name="resolution")
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"target {self.target_id} resolved"
