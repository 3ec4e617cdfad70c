"""The toy scheme's figures, a plug-in of the analysis room: how many sentences, how many answers
of each kind, and one plot of them. No template of its own: the statistics page lists the figures."""

from __future__ import annotations

from typing import Any

from analysis import plots
from analysis.figures import SchemeFigures, StatisticsOptions, register_figures
from annotation.models import Benchmark
from hits.models import Answer, AssignmentStatus
from tests.schemes.toy import TOY, ToyScheme

CHOICES = [choice.value for choice in ToyScheme.page.choices]


def answer_counts(benchmark: Benchmark) -> dict[str, int]:
    """Submitted answers by value, every choice named (0 when nobody chose it)."""
    answers = Answer.objects.filter(
        assignment__hit__batch__benchmark=benchmark, assignment__status=AssignmentStatus.SUBMITTED
    ).values_list("value", flat=True)
    counts = dict.fromkeys(CHOICES, 0)
    for value in answers:
        counts[value] += 1
    return counts


def statistics(benchmark: Benchmark, options: StatisticsOptions) -> dict[str, Any]:
    counts = answer_counts(benchmark)
    total = sum(counts.values())
    return {
        "benchmark": benchmark.name,
        "sentences": benchmark.targets.count(),
        "answers": counts,
        "literal_share": counts["yes"] / total if total else None,
    }


def answers_plot(benchmark: Benchmark) -> str:
    counts = answer_counts(benchmark)
    total = sum(counts.values())
    return plots.grouped_histogram(
        title="Answers",
        bins=CHOICES,
        series={"answers": [counts[choice] / total if total else 0.0 for choice in CHOICES]},
        counts={"answers": [counts[choice] for choice in CHOICES]},
        x_label="answer",
        y_label="share of the answers",
    )


register_figures(SchemeFigures(scheme=TOY, statistics=statistics, plots={"answers": answers_plot}))
