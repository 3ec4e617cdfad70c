"""Lexical simplification's instances, gold and figures (a plug-in of the analysis room).

An instance's suggestions are those it was released with (an imported ``*_gold.tsv`` line, kept as
written) followed by those its annotators typed here (valid answers, in submission order). Its gold
counts them (``metrics.GoldInstance``: trimmed, the complex word left out) and ranks them by count.
The figures: instances, suggestions per instance, distinct substitutes per instance, and agreement
on the top suggestion (the share of an instance's suggestions that are its most frequent one),
with their plots.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from analysis import plots
from analysis.figures import SchemeFigures, StatisticsOptions, register_figures, stamped
from analysis.selectors import in_split
from analysis.serializers import InteractionSerializer
from annotation.models import Benchmark, Target
from hits.selectors import structured_answers
from schemes.tsar import SIMPLIFY
from schemes.tsar.formats import NAME, ROW, released_annotations
from schemes.tsar.metrics import GoldInstance


@dataclass(frozen=True)
class Instance:
    """A sentence and its complex word, with what was released (``row``: the imported line, or
    None) and what its annotators typed here (``collected``, in submission order; ``none``: the
    annotators to whom no simpler word came)."""

    target_id: int
    sentence: str
    complex_word: str
    offset: int
    row: str | None
    collected: tuple[str, ...]
    annotators: int
    none: int

    @property
    def released(self) -> tuple[str, ...]:
        return released_annotations(self.row) if self.row is not None else ()

    @property
    def gold(self) -> GoldInstance:
        return GoldInstance(self.sentence, self.complex_word, self.released + self.collected)

    def collected_ranked(self) -> list[str]:
        """The suggestions typed here, most frequent first (ties in the order first given), each
        repeated once per annotator who gave it: the columns the export adds to the line."""
        return [text for text, count in Counter(self.collected).most_common() for _ in range(count)]

    def tsv_line(self) -> str:
        """The instance as a line of the shared task's gold file: the imported line as written, then
        the suggestions typed here; or the sentence, the word and those suggestions."""
        head = self.row.rstrip("\t") if self.row is not None else f"{self.sentence}\t{self.complex_word}"
        if self.row is not None and not self.collected:
            return self.row
        return "\t".join([head, *self.collected_ranked()])


def _answers(benchmark: Benchmark) -> dict[int, list[tuple[int, dict[str, Any]]]]:
    found: dict[int, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for target_id, _, worker_id, data in structured_answers(benchmark=benchmark, kind_prefix=SIMPLIFY):
        found[target_id].append((worker_id, data))
    return found


def tsar_instances(*, benchmark: Benchmark, split: str | None = None) -> Iterator[Instance]:
    """The benchmark's instances in target order (an imported file's order), with their suggestions;
    those of ``split`` only, when one is named."""
    answers = _answers(benchmark)
    targets = in_split(Target.objects.filter(benchmark=benchmark), split, "").order_by("pk")
    rows = targets.values_list("pk", "context__text", "word", "offset", "extra")
    for pk, sentence, word, offset, extra in rows.iterator(chunk_size=500):
        given = answers.get(pk, [])
        row = ((extra or {}).get(NAME) or {}).get(ROW)
        if row is not None:
            # As the file wrote them: the context may hold another spelling of the same sentence.
            sentence, word = (field.strip() for field in row.split("\t")[:2])
        yield Instance(
            target_id=pk,
            sentence=sentence,
            complex_word=word,
            offset=offset,
            row=row,
            collected=tuple(data["substitute"] for _, data in given if data.get("substitute")),
            annotators=len({worker for worker, _ in given}),
            none=sum(1 for _, data in given if data.get("none")),
        )


# --- statistics (pure) -----------------------------------------------------------------------


def top_share(gold: GoldInstance) -> float | None:
    """The share of an instance's suggestions that are its most frequent one; None without any."""
    counts = gold.counts()
    total = sum(counts.values())
    return max(counts.values()) / total if total else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def tsar_statistics(instances: Sequence[Instance]) -> dict[str, Any]:
    """Counts and means over the instances (suggestions as ``metrics.GoldInstance.counts`` counts them)."""
    golds = [instance.gold for instance in instances]
    counted = [gold.counts() for gold in golds]
    suggestions = [sum(counts.values()) for counts in counted]
    shares = [share for share in (top_share(gold) for gold in golds) if share is not None]
    return {
        "instances": len(instances),
        "suggestions": sum(suggestions),
        "released_suggestions": sum(len(instance.released) for instance in instances),
        "collected_suggestions": sum(len(instance.collected) for instance in instances),
        "no_simpler_word": sum(instance.none for instance in instances),
        "instances_without_suggestions": sum(1 for total in suggestions if not total),
        "per_instance": {
            "suggestions": _mean(suggestions),
            "distinct_substitutes": _mean([len(counts) for counts in counted]),
        },
        "agreement": {"top_share": _mean(shares), "instances": len(shares)},
    }


def statistics(benchmark: Benchmark, options: StatisticsOptions | None = None) -> dict[str, Any]:
    split = options.split if options is not None else None
    return {
        "benchmark": benchmark.name,
        "language": benchmark.language,
        **tsar_statistics(list(tsar_instances(benchmark=benchmark, split=split))),
    }


# --- plots -------------------------------------------------------------------------------------

#: The last bin of the count plots gathers this many and more.
PLOT_BINS = 30
SHARE_BINS = 10
EMPTY_NOTE = "No instance has suggestions yet: import a TSAR-2022 gold file, or collect suggestions."


def _count_chart(title: str, values: list[int], x_label: str) -> str:
    if not values:
        return plots.empty_chart(title, EMPTY_NOTE)
    top = min(max(values), PLOT_BINS)
    counts = [0] * (top + 1)
    for value in values:
        counts[min(value, top)] += 1
    bins = [str(number) for number in range(top)] + [f"{top}+" if max(values) > top else str(top)]
    return plots.grouped_histogram(
        title=title,
        bins=bins,
        series={"instances": [count / len(values) for count in counts]},
        counts={"instances": counts},
        x_label=x_label,
        y_label="share of instances",
    )


def suggestions_chart(instances: Sequence[Instance]) -> str:
    """Suggestions per instance: the share of instances with 0, 1, 2... suggestions."""
    values = [sum(instance.gold.counts().values()) for instance in instances]
    return _count_chart("Suggestions per instance", values if any(values) else [], "suggestions of an instance")


def substitutes_chart(instances: Sequence[Instance]) -> str:
    """Distinct substitutes per instance."""
    values = [len(instance.gold.counts()) for instance in instances]
    return _count_chart("Distinct substitutes per instance", values if any(values) else [], "distinct substitutes")


def agreement_chart(instances: Sequence[Instance]) -> str:
    """Agreement on the top suggestion: the share of instances by the share of their suggestions
    that are the most frequent one, in tenths."""
    title = "Agreement on the top suggestion"
    shares = [share for share in (top_share(instance.gold) for instance in instances) if share is not None]
    if not shares:
        return plots.empty_chart(title, EMPTY_NOTE)
    counts = [0] * SHARE_BINS
    for share in shares:
        counts[min(int(share * SHARE_BINS), SHARE_BINS - 1)] += 1
    bins = [f"{10 * low}-{10 * (low + 1)} %" for low in range(SHARE_BINS)]
    return plots.grouped_histogram(
        title=title,
        bins=bins,
        series={"instances": [count / len(shares) for count in counts]},
        counts={"instances": counts},
        x_label="share of an instance's suggestions that are its top one",
        y_label="share of instances",
    )


CHARTS: dict[str, Callable[[Sequence[Instance]], str]] = {
    "suggestions": suggestions_chart,
    "substitutes": substitutes_chart,
    "agreement": agreement_chart,
}


def _plot(chart: Callable[[Sequence[Instance]], str]) -> Callable[[Benchmark], str]:
    return lambda benchmark: chart(list(tsar_instances(benchmark=benchmark)))


PLOTS: dict[str, Callable[[Benchmark], str]] = {name: _plot(chart) for name, chart in CHARTS.items()}


# --- the API's shape of the statistics ------------------------------------------------------


class TsarPerInstanceSerializer(serializers.Serializer[Any]):
    suggestions = serializers.FloatField(allow_null=True)
    distinct_substitutes = serializers.FloatField(allow_null=True)


class TsarAgreementSerializer(serializers.Serializer[Any]):
    top_share = serializers.FloatField(
        allow_null=True, help_text="mean share of an instance's suggestions that are its most frequent one"
    )
    instances = serializers.IntegerField(help_text="instances with suggestions, over which the mean runs")


class TsarStatisticsSerializer(serializers.Serializer[Any]):
    scheme = serializers.CharField()
    benchmark = serializers.CharField()
    language = serializers.CharField(help_text="the benchmark's language tag")
    interaction = InteractionSerializer()
    instances = serializers.IntegerField()
    suggestions = serializers.IntegerField(help_text="released and collected, the complex word left out")
    released_suggestions = serializers.IntegerField()
    collected_suggestions = serializers.IntegerField()
    no_simpler_word = serializers.IntegerField(help_text="answers saying no simpler word comes to mind")
    instances_without_suggestions = serializers.IntegerField()
    per_instance = TsarPerInstanceSerializer()
    agreement = TsarAgreementSerializer()


register_figures(
    SchemeFigures(
        scheme=NAME,
        statistics=statistics,
        document=stamped(statistics),
        plots=PLOTS,
        serializer=TsarStatisticsSerializer,
    )
)
