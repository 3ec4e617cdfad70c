"""Smart Word Suggestions' figures, merged suggestions and formats (Wang et al. 2023).

Each sentence of the benchmark carries the substitutes it was released with (an imported file,
kept as imported) followed by those merged here from the annotators' valid answers
(``schemes.sws.merge``: {suggestion: votes}, the majority type, targets marked by one annotator
dropped). Character spans from the page become token spans of the sentence's tokens. The
statistics count those substitutes; agreement (PA-det, PA-sug) compares the annotators of the
sentences marked here, and is not available on an imported release (it keeps no annotator's work).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.utils.safestring import mark_safe
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis import plots
from analysis.agreement import pairwise_jaccard
from analysis.figures import SchemeFigures, StatisticsOptions, register_figures, register_pages, stamped
from analysis.selectors import in_split
from analysis.serializers import InteractionSerializer
from annotation.access import Role, benchmark_for
from annotation.models import Benchmark, Context
from crowdlex.kept_pages import BY_NAME, kept_page
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher, researcher_required
from hits.selectors import structured_answers
from schemes.sws import SENTENCE
from schemes.sws.formats import NAME, SwsEntry, from_stored
from schemes.sws.merge import TYPE_CODES, TYPE_NAMES, Marked, MergedTarget, Span, merge
from schemes.sws.tokens import align, token_span, tokenize

# pandas is imported by the functions that use it: it takes about a second to import, which
# every command and web process paid at start-up (analysis registers its formats at start).
if TYPE_CHECKING:
    import pandas as pd

NOT_AVAILABLE = "not available"
CSV_FORMAT = "sws-csv"
SUGGESTION_COLUMNS = (
    "sentence_id",
    "start",
    "end",
    "target",
    "suggestion",
    "votes",
    "type",
    "origin",
    "annotators",
    "voting_index",
)


@dataclass
class SwsSentence:
    """A sentence with its released substitutes and what its annotators did here."""

    entry: SwsEntry
    # Where each token sits in the sentence.
    spans: list[tuple[int, int]]
    released: int
    merged: list[MergedTarget] = field(default_factory=list)
    annotators: int = 0
    discarded: list[str] = field(default_factory=list)
    # Annotator -> their targets (token span -> suggestions, compared without case), for agreement.
    marked_by: dict[int, dict[Span, frozenset[str]]] = field(default_factory=dict)

    def target_text(self, span: Sequence[int]) -> str:
        return self.entry.sentence[self.spans[span[0]][0] : self.spans[span[1] - 1][1]]

    def targets(self) -> list[SentenceTarget]:
        """The sentence's targets as released then merged here, with what the pages show of them."""
        found = []
        for index, (span, votes, code) in enumerate(self.entry.substitutes):
            merged = self.merged[index - self.released] if index >= self.released else None
            found.append(
                SentenceTarget(
                    span=(span[0], span[1]),
                    text=self.target_text(span),
                    votes=list(votes.items()),
                    code=code,
                    type=TYPE_NAMES[code],
                    origin="collected" if merged is not None else "released",
                    annotators=merged.annotators if merged is not None else None,
                    voting_index=merged.voting_index if merged is not None else None,
                )
            )
        return found


@dataclass(frozen=True)
class SentenceTarget:
    span: Span
    text: str
    votes: list[tuple[str, int]]
    code: int
    type: str
    origin: str
    annotators: int | None
    voting_index: float | None


def _answers(benchmark: Benchmark) -> dict[int, list[tuple[int, dict[str, Any]]]]:
    """Context id -> (annotator, answer data) of the valid answers to its sentence, in submission order."""
    found: dict[int, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for _, context_id, worker_id, data in structured_answers(benchmark=benchmark, kind_prefix=SENTENCE):
        found[context_id].append((worker_id, data))
    return found


def _sentence(pk: int, external_id: str, text: str, extra: dict[str, Any], answers: list[Any]) -> SwsSentence:
    kept = extra.get(NAME, {})
    tokens = kept.get("tokens") or [token.text for token in tokenize(text)]
    spans = align(text, tokens)
    substitutes = from_stored(kept.get("substitutes", []))
    sentence = SwsSentence(
        entry=SwsEntry(id=external_id or str(pk), sentence=text, tokens=tokens, substitutes=substitutes),
        spans=spans,
        released=len(substitutes),
        annotators=len({worker for worker, _ in answers}),
    )
    marked: list[Marked] = []
    for worker, data in answers:
        if data["discard"]:
            sentence.discarded.append(data["discard"])
            continue
        mine: dict[Span, frozenset[str]] = {}
        for target in data["targets"]:
            span = token_span(spans, target["start"], target["end"])
            if span is None:
                continue
            marked.append(Marked(worker, span, tuple(target["suggestions"]), target["type"]))
            mine[span] = frozenset(suggestion.casefold() for suggestion in target["suggestions"])
        sentence.marked_by[worker] = mine
    sentence.merged = merge(marked, annotators=sentence.annotators)
    sentence.entry.substitutes += [target.as_release() for target in sentence.merged]
    return sentence


def sws_sentences(*, benchmark: Benchmark, split: str | None = None) -> Iterator[SwsSentence]:
    """The benchmark's sentences in context order (the file's order for an imported file); those
    of ``split`` only, when one is named."""
    answers = _answers(benchmark)
    contexts = in_split(Context.objects.filter(benchmark=benchmark), split, "targets__").distinct().order_by("pk")
    for pk, external_id, text, extra in contexts.values_list("pk", "external_id", "text", "extra").iterator(500):
        yield _sentence(pk, external_id, text, extra, answers.get(pk, []))


# --- statistics (pure) -----------------------------------------------------------------------


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


def sws_statistics(entries: Sequence[SwsEntry]) -> dict[str, Any]:
    """Counts of sentences, targets (spans), suggestions, votes, types and multi-word targets."""
    substitutes = [substitute for entry in entries for substitute in entry.substitutes]
    suggestions = sum(len(votes) for _, votes, _ in substitutes)
    votes = sum(sum(votes.values()) for _, votes, _ in substitutes)
    return {
        "contexts": len(entries),
        "targets": len(substitutes),
        "suggestions": suggestions,
        "votes": votes,
        "types": {name: sum(kind == code for _, _, kind in substitutes) for name, code in TYPE_CODES.items()},
        "multiword_targets": sum(end - start > 1 for (start, end), _, _ in substitutes),
        "per_target": {"suggestions": _mean(suggestions, len(substitutes)), "votes": _mean(votes, len(substitutes))},
        "per_suggestion": {"votes": _mean(votes, suggestions)},
    }


def sws_agreement(sentences: Sequence[SwsSentence]) -> dict[str, Any]:
    found = pairwise_jaccard(sentence.marked_by for sentence in sentences)
    available = found["pairs"] > 0
    note = "" if available else f"{NOT_AVAILABLE}: no sentence was marked here by two annotators"
    return {"available": available, "note": note, **found}


def sws_collected(sentences: Sequence[SwsSentence]) -> dict[str, Any]:
    """What the annotators did here: sentences marked, discarded, targets merged and their voting index."""
    merged = [target for sentence in sentences for target in sentence.merged]
    return {
        "sentences_marked": sum(bool(sentence.annotators) for sentence in sentences),
        "discarded": sum(len(sentence.discarded) for sentence in sentences),
        "merged_targets": len(merged),
        "voting_index": _mean(sum(target.voting_index for target in merged), len(merged)),
    }


def statistics(benchmark: Benchmark, options: StatisticsOptions | None = None) -> dict[str, Any]:
    sentences = list(sws_sentences(benchmark=benchmark))
    return {
        "benchmark": benchmark.name,
        **sws_statistics([sentence.entry for sentence in sentences]),
        "collected": sws_collected(sentences),
        "agreement": sws_agreement(sentences),
    }


def page_context(benchmark: Benchmark) -> dict[str, Any]:
    sentences = list(sws_sentences(benchmark=benchmark))
    return {
        "benchmark": benchmark,
        "statistics": statistics(benchmark),
        # analysis.plots escapes every piece of text it writes.
        "charts": [(name, mark_safe(chart(sentences))) for name, chart in CHARTS.items()],
    }


# --- plots -------------------------------------------------------------------------------------

#: The plots' last bin gathers this many and more (targets in a sentence, votes on a suggestion).
PLOT_BINS = 10
ORIGINS = ("released", "collected")
EMPTY_NOTE = "No sentence has targets yet: import a Smart Word Suggestions file, or collect marks."


def _bin_names(top: int) -> list[str]:
    return [str(number) for number in range(top)] + [f"{top}+"]


def _binned(values: Sequence[int], top: int) -> list[int]:
    counts = [0] * (top + 1)
    for value in values:
        counts[min(value, top)] += 1
    return counts


def _shares(counts: dict[str, list[int]]) -> dict[str, list[float]]:
    return {name: [count / sum(row) for count in row] for name, row in counts.items()}


def _series(values: dict[str, list[int]], top: int, *, first: int) -> tuple[list[str], dict[str, list[int]]]:
    """Bins from ``first`` to ``top`` and more, and each origin's counts in them (origins without values left out)."""
    counts = {origin: _binned(found, top)[first:] for origin, found in values.items() if found}
    return _bin_names(top)[first:], counts


def targets_chart(sentences: Sequence[SwsSentence]) -> str:
    """Targets per sentence: the share of sentences with 0, 1, 2... targets, as released and as merged here."""
    title = "Targets per sentence"
    released = [sentence.released for sentence in sentences if sentence.released]
    # A sentence marked here counts even when the merge kept none of its targets.
    collected = [len(sentence.merged) for sentence in sentences if sentence.annotators]
    if not released and not collected:
        return plots.empty_chart(title, EMPTY_NOTE)
    bins, counts = _series({"released": released, "collected": collected}, PLOT_BINS, first=0)
    return plots.grouped_histogram(
        title=title, bins=bins, series=_shares(counts), counts=counts, x_label="targets in a sentence",
        y_label="share of sentences",
    )  # fmt: skip


def votes_chart(sentences: Sequence[SwsSentence]) -> str:
    """Votes per suggestion: the share of suggestions with 1, 2, 3... votes, released and merged here."""
    title = "Votes per suggestion"
    values: dict[str, list[int]] = {origin: [] for origin in ORIGINS}
    for sentence in sentences:
        for target in sentence.targets():
            values[target.origin] += [votes for _, votes in target.votes]
    if not any(values.values()):
        return plots.empty_chart(title, EMPTY_NOTE)
    bins, counts = _series(values, PLOT_BINS, first=1)
    return plots.grouped_histogram(
        title=title, bins=bins, series=_shares(counts), counts=counts, x_label="votes on a suggestion",
        y_label="share of suggestions",
    )  # fmt: skip


def types_chart(sentences: Sequence[SwsSentence]) -> str:
    """The share of targets of each type (refine-usage, diversify-expression), released and merged here."""
    title = "Targets by type"
    types = list(TYPE_CODES)
    counts: dict[str, list[int]] = {origin: [0] * len(types) for origin in ORIGINS}
    for sentence in sentences:
        for target in sentence.targets():
            counts[target.origin][types.index(target.type)] += 1
    counts = {origin: row for origin, row in counts.items() if sum(row)}
    if not counts:
        return plots.empty_chart(title, EMPTY_NOTE)
    return plots.grouped_histogram(
        title=title, bins=types, series=_shares(counts), counts=counts, x_label="type", y_label="share of targets"
    )


CHARTS: dict[str, Callable[[Sequence[SwsSentence]], str]] = {
    "targets": targets_chart,
    "votes": votes_chart,
    "types": types_chart,
}


def _plot(chart: Callable[[Sequence[SwsSentence]], str]) -> Callable[[Benchmark], str]:
    return lambda benchmark: chart(list(sws_sentences(benchmark=benchmark)))


PLOTS: dict[str, Callable[[Benchmark], str]] = {name: _plot(chart) for name, chart in CHARTS.items()}


# --- the merged suggestions, as rows ----------------------------------------------------------


def suggestion_rows(*, benchmark: Benchmark) -> Iterator[tuple[Any, ...]]:
    """One row per suggestion (SUGGESTION_COLUMNS): released ones, then those merged here."""
    for sentence in sws_sentences(benchmark=benchmark):
        for target in sentence.targets():
            for suggestion, votes in target.votes:
                yield (
                    sentence.entry.id,
                    *target.span,
                    target.text,
                    suggestion,
                    votes,
                    target.code,
                    target.origin,
                    target.annotators,
                    target.voting_index,
                )


def sws_frame(*, benchmark: Benchmark) -> pd.DataFrame:
    """The merged suggestions as a pandas DataFrame, the rows of the ``sws-csv`` export."""
    import pandas as pd

    return pd.DataFrame.from_records(list(suggestion_rows(benchmark=benchmark)), columns=list(SUGGESTION_COLUMNS))


# --- the API's shape of the statistics ------------------------------------------------------


class SwsTypesSerializer(serializers.Serializer[Any]):
    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # Named as the types are: "refine-usage" and "diversify-expression".
        return {name: serializers.IntegerField() for name in ("refine-usage", "diversify-expression")}


class SwsPerTargetSerializer(serializers.Serializer[Any]):
    suggestions = serializers.FloatField(allow_null=True)
    votes = serializers.FloatField(allow_null=True)


class SwsPerSuggestionSerializer(serializers.Serializer[Any]):
    votes = serializers.FloatField(allow_null=True)


class SwsCollectedSerializer(serializers.Serializer[Any]):
    sentences_marked = serializers.IntegerField()
    discarded = serializers.IntegerField(help_text="answers that set the sentence aside")
    merged_targets = serializers.IntegerField()
    voting_index = serializers.FloatField(allow_null=True, help_text="mean share of a sentence's annotators per target")


class SwsAgreementSerializer(serializers.Serializer[Any]):
    available = serializers.BooleanField()
    note = serializers.CharField(help_text='"not available: ..." when not available')
    pa_det = serializers.FloatField(allow_null=True, help_text="mean pairwise Jaccard of target sets")
    pa_sug = serializers.FloatField(allow_null=True, help_text="mean pairwise Jaccard of suggestions on shared targets")
    pairs = serializers.IntegerField()
    shared_targets = serializers.IntegerField()


class SwsStatisticsSerializer(serializers.Serializer[Any]):
    scheme = serializers.CharField()
    benchmark = serializers.CharField()
    interaction = InteractionSerializer()
    contexts = serializers.IntegerField(help_text="sentences")
    targets = serializers.IntegerField(help_text="spans")
    suggestions = serializers.IntegerField()
    votes = serializers.IntegerField()
    types = SwsTypesSerializer()
    multiword_targets = serializers.IntegerField()
    per_target = SwsPerTargetSerializer()
    per_suggestion = SwsPerSuggestionSerializer()
    collected = SwsCollectedSerializer()
    agreement = SwsAgreementSerializer()


# --- the merged suggestions: a page and its API ---------------------------------------------

SENTENCES_PER_PAGE = 50


@researcher_required
def suggestions_page(request: HttpRequest, name: str) -> HttpResponse:
    """The benchmark's sentences with their merged suggestions, a page at a time."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER, scheme=NAME)
    page = Paginator(list(sws_sentences(benchmark=benchmark)), SENTENCES_PER_PAGE).get_page(request.GET.get("page"))
    context = {"benchmark": benchmark, "sentences": page.object_list, "page": page}
    return render(request, "schemes/sws/suggestions.html", context)


class SentenceTargetSerializer(serializers.Serializer[Any]):
    span = serializers.ListField(child=serializers.IntegerField(), help_text="[start, end) in tokens")
    text = serializers.CharField()
    votes = serializers.ListField(
        child=serializers.ListField(child=serializers.JSONField()), help_text="[suggestion, votes], most voted first"
    )
    type = serializers.CharField(help_text="refine-usage or diversify-expression")
    origin = serializers.CharField(help_text="released (imported) or collected (merged here)")
    annotators = serializers.IntegerField(allow_null=True)
    voting_index = serializers.FloatField(allow_null=True)


class SentenceSerializer(serializers.Serializer[Any]):
    id = serializers.CharField(source="entry.id")
    sentence = serializers.CharField(source="entry.sentence")
    tokens = serializers.ListField(child=serializers.CharField(), source="entry.tokens")
    annotators = serializers.IntegerField()
    discarded = serializers.ListField(child=serializers.CharField(), help_text="reasons given for setting it aside")
    targets = SentenceTargetSerializer(many=True)


class SuggestionsApi(PaginatedList, APIView):
    """A Smart Word Suggestions benchmark's sentences with their targets, released and merged here."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=SentenceSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER, scheme=NAME)
        sentences = [
            {
                "entry": sentence.entry,
                "annotators": sentence.annotators,
                "discarded": sentence.discarded,
                "targets": [vars(target) for target in sentence.targets()],
            }
            for sentence in sws_sentences(benchmark=benchmark)
        ]
        return self.paginated(request, sentences, SentenceSerializer)


register_figures(
    SchemeFigures(
        scheme=NAME,
        statistics=statistics,
        document=stamped(statistics),
        template="schemes/sws/statistics.html",
        page_context=page_context,
        pages=(("Merged suggestions", "analysis-sws-suggestions"),),
        plots=PLOTS,
        serializer=SwsStatisticsSerializer,
    )
)
register_pages(
    pages=[
        path(
            "benchmarks/<slug:name>/suggestions/",
            kept_page(benchmark=BY_NAME)(suggestions_page),
            name="analysis-sws-suggestions",
        )
    ],
    api=[path("benchmarks/<slug:name>/suggestions", SuggestionsApi.as_view(), name="api-benchmark-suggestions")],
)
