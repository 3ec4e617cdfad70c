"""Reads of benchmarks and their contents."""

from django.db.models import Count, Q, QuerySet

from annotation.models import Benchmark, Candidate, Context, Label, Target


def benchmark_list() -> QuerySet[Benchmark]:
    return Benchmark.objects.annotate(target_count=Count("targets", distinct=True)).order_by("name")


def benchmark_counts(*, benchmark: Benchmark) -> dict[str, int]:
    """Counts of DESIGN §7 statistics: contexts, targets, candidates, labels (abstain included)."""
    return {
        "contexts": Context.objects.filter(benchmark=benchmark).count(),
        "targets": Target.objects.filter(benchmark=benchmark).count(),
        "candidates": Candidate.objects.filter(target__benchmark=benchmark).count(),
        "labels": Label.objects.filter(candidate__target__benchmark=benchmark).count(),
    }


def valid_labels() -> QuerySet[Label]:
    """Labels that count: imported ones, and collected ones whose assignment is not filtered (DESIGN §5)."""
    return Label.objects.filter(Q(assignment__isnull=True) | Q(assignment__filtered=False))
