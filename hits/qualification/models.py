"""A benchmark's qualification test: gold items, and each person's one attempt (docs/design.md §9).

The items are copies (context, target, candidate, expected answer), never candidates of the
benchmark, and answers to them live on the attempt, never in ``Label``: a test answer is not a
judgment of the benchmark and counts in no score, statistic, export or spam decision. These
models belong to the ``hits`` app (``hits.models`` imports them): who may take a benchmark's HITs
is a question of collection.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Benchmark, Candidate, Worker


class GoldAnswer(models.TextChoices):
    """What a gold item expects, in label terms: accept, or not (reject; abstain also passes, as for
    the distractor control, docs/design.md §3)."""

    ACCEPT = "accept", "accept"
    REJECT = "reject", "reject"


class QualificationTest(models.Model):
    """The test a benchmark's annotators pass once before the queue offers them its HITs."""

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, related_name="qualification_test")
    # Items one attempt shows, drawn from the test's items (half expected accept, half reject, as far as
    # the items allow), so people see different sets and a shared answer sheet helps little.
    length = models.PositiveSmallIntegerField()
    # Share of correct answers needed to pass, 0 < pass_mark <= 1.
    pass_mark = models.FloatField()
    active = models.BooleanField(default=True, help_text="an inactive test gates nobody")
    seed = models.IntegerField(default=0)
    source = models.CharField(max_length=300, blank=True, help_text="where the items came from")
    # The crowd-side qualification type made for this test, per crowd endpoint (a backend with the
    # QUALIFICATION capability keeps it: MTurk's QualificationTypeId, {"sandbox": "3X…", "production": "…"}).
    crowd_types = models.JSONField(default=dict, blank=True, db_column="mturk_types")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(length__gte=1), name="qualificationtest_length_positive"),
            models.CheckConstraint(
                condition=Q(pass_mark__gt=0) & Q(pass_mark__lte=1), name="qualificationtest_pass_mark_share"
            ),
        ]

    def __str__(self) -> str:
        return f"qualification test of {self.benchmark.name}"


class QualificationItem(models.Model):
    """One gold item: a candidate for a target in a context, and the answer it expects."""

    benchmark_path: ClassVar[str] = "test__benchmark"

    test = models.ForeignKey(QualificationTest, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    context = models.TextField()
    word = models.CharField(max_length=600)
    offset = models.PositiveIntegerField()
    candidate = models.CharField(max_length=500)
    expected = models.CharField(max_length=8, choices=GoldAnswer.choices)
    # The finished benchmark's candidate it was picked from, with its score then; None when hand-written.
    source_candidate = models.ForeignKey(
        Candidate, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    source_score = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["test", "position"]
        constraints = [
            models.UniqueConstraint(fields=["test", "position"], name="qualificationitem_unique_position"),
            models.CheckConstraint(
                condition=Q(expected__in=["accept", "reject"]), name="qualificationitem_expected_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.candidate} for {self.word} ({self.expected})"


class QualificationAttempt(models.Model):
    """One person's one attempt. Started when the test is first shown (its items are drawn then), graded
    at submit; ``passed`` is None until then. Answers are the scheme's choice values by item id."""

    benchmark_path: ClassVar[str] = "test__benchmark"

    test = models.ForeignKey(QualificationTest, on_delete=models.CASCADE, related_name="attempts")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="qualification_attempts")
    items = models.JSONField(default=list, help_text="ids of the items shown, in order")
    answers = models.JSONField(default=dict, blank=True)
    correct = models.PositiveSmallIntegerField(default=0)
    total = models.PositiveSmallIntegerField(default=0)
    passed = models.BooleanField(null=True, blank=True)
    started_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    # MTurk endpoints where the test's qualification type was granted to this worker.
    granted_on = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            # Taken once (the "takes it once"); a researcher may reset an attempt by deleting it.
            models.UniqueConstraint(fields=["test", "worker"], name="qualificationattempt_once_per_worker"),
            models.CheckConstraint(
                condition=Q(passed__isnull=True) | Q(submitted_at__isnull=False),
                name="qualificationattempt_graded_when_submitted",
            ),
        ]
        indexes = [models.Index(fields=["worker", "passed"])]

    def __str__(self) -> str:
        return f"{self.worker} on {self.test}"
