"""What the reporting room stores: export jobs (docs/design.md §7) and the key of worker pseudonyms."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q

from analysis.pseudonyms import new_secret
from annotation.models import Benchmark


class ExportStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ExportJob(models.Model):
    """A benchmark export written by a Celery task to a file under MEDIA_ROOT."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="exports")
    format = models.CharField(max_length=20)
    # Raw worker ids instead of pseudonyms, for internal use only: marked in the file name and logged.
    raw_workers = models.BooleanField(default=False)
    # The dataset format's license (a Hugging Face identifier such as cc-by-4.0), chosen by the researcher.
    license = models.CharField(max_length=50, blank=True)
    status = models.CharField(max_length=8, choices=ExportStatus.choices, default=ExportStatus.PENDING)
    progress = models.FloatField(default=0.0)
    path = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the worker writing the file last reported progress: a running job silent for long has lost its worker.
    heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__gte=0.0, progress__lte=1.0), name="exportjob_progress_share"),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} of {self.benchmark} as {self.format}"


class PseudonymKey(models.Model):
    """The secret a benchmark's worker pseudonyms are keyed with (``analysis.pseudonyms``).

    One per benchmark, made on its first export and never changed, so pseudonyms stay stable.
    """

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, related_name="pseudonym_key")
    secret = models.CharField(max_length=64, default=new_secret, editable=False)

    def __str__(self) -> str:
        return f"pseudonym key of {self.benchmark}"


class SystemEvaluation(models.Model):
    """A system's figures against a benchmark, saved for the benchmark's leaderboard (docs/evaluation.md)."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="system_evaluations")
    system = models.CharField(max_length=100)
    # The split its figures are of (analysis.models.TargetSplit); blank: the whole benchmark.
    split = models.CharField(max_length=50, blank=True)
    # analysis.evaluation.Figures.as_dict(), without per-target figures.
    figures = models.JSONField()
    # The benchmark version the figures are of (analysis.evaluation.BenchmarkVersion.as_dict());
    # empty for figures saved before versions were recorded.
    version = models.JSONField(default=dict, blank=True)
    # The result file, kept so the system can be scored again on the grown benchmark: its name,
    # the SHA-256 of its content (decompressed) and that content, gzipped. Empty: not kept.
    result_name = models.CharField(max_length=255, blank=True)
    result_sha256 = models.CharField(max_length=64, blank=True)
    result = models.BinaryField(null=True, blank=True, editable=False)
    # Earlier scores replaced by a re-score or a new save: [{"version", "figures", "at"}], oldest first.
    history = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["system"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "split", "system"], name="system_evaluation_unique_per_benchmark_split"
            )
        ]

    def __str__(self) -> str:
        return f"{self.system} on {self.benchmark}"


class JudgementStatus(models.TextChoices):
    PROPOSED = "proposed", "proposed (its cost shown, nothing added)"
    STARTED = "started", "being judged"
    DONE = "done", "judged"


class UnscoredJudgement(models.Model):
    """A complete evaluation (docs/evaluation.md, "Complete evaluation"): a saved system's top-k
    substitutes the benchmark never scored, proposed with their cost, then added as candidates
    (one import, ``system:<name>``) and judged by a batch under the benchmark's rules, and the
    lenient, strict and complete figures once every one of them is settled."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="unscored_judgements")
    evaluation = models.ForeignKey(SystemEvaluation, on_delete=models.CASCADE, related_name="judgements")
    top_k = models.PositiveSmallIntegerField()
    backend = models.CharField(max_length=10)
    status = models.CharField(max_length=8, choices=JudgementStatus.choices, default=JudgementStatus.PROPOSED)
    # What is judged, fixed when proposed so that what starts is what was priced: {target id: [text, ...]}.
    substitutes = models.JSONField(default=dict)
    substitute_count = models.PositiveIntegerField(default=0)
    # The batch's preview when proposed (crowds.services.BatchPreview.as_dict()).
    cost = models.JSONField(default=dict, blank=True)
    import_record = models.ForeignKey(
        "annotation.Import", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    batch = models.ForeignKey("hits.Batch", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    candidate_ids = models.JSONField(default=list, blank=True)
    # The benchmark's versions before the candidates were added and once they were all settled.
    version_before = models.JSONField(default=dict, blank=True)
    version_after = models.JSONField(default=dict, blank=True)
    # The lenient, strict and complete figures with their intervals, kept once done.
    report = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"unscored substitutes of {self.evaluation.system} on {self.benchmark}"


class TargetSplit(models.Model):
    """The named split (e.g. dev, test) a target belongs to; a target without one is in no split.

    Written by ``analysis.services.benchmark_split`` (a seeded rule or an imported list); the
    exports, statistics and evaluation take a split to honour it.
    """

    target = models.OneToOneField("annotation.Target", on_delete=models.CASCADE, related_name="split")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="target_splits")
    name = models.SlugField(max_length=50)

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        indexes = [models.Index(fields=["benchmark", "name"])]

    def __str__(self) -> str:
        return f"{self.target_id} in {self.name}"


class SavedView(models.Model):
    """A researcher's filters and sort of one table of the data browser, saved under a name per
    benchmark and shown to everyone who sees the benchmark (docs/analysis.md, "The data browser").

    ``query`` is the view's query string without its page position, so a saved view opens at its
    first page; saving under a name the table already has replaces that view.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="saved_views")
    table = models.CharField(max_length=20, help_text="the browser's table: items, candidates, labels, hits, workers")
    name = models.CharField(max_length=100)
    query = models.TextField(blank=True, help_text="the filters and sort as a query string")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now=True)

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["table", "name"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "table", "name"], name="savedview_unique_name_per_table"),
            models.CheckConstraint(condition=~Q(name=""), name="savedview_has_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.table} of {self.benchmark_id})"
