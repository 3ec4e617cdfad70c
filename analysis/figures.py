"""What each scheme reports, found by the benchmark's scheme: its statistics (``benchmark_stats``,
the API), the document of the ``stats`` export, and its statistics page.

Each scheme reports the figures of its own paper and registers a :class:`SchemeFigures` from its
``figures`` plug-in (``schemes/<name>/figures.py``, loaded by ``analysis.apps``), so the command,
the API, the page and the export call :func:`scheme_figures` and name no scheme.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone
from django.utils.safestring import SafeString

# Whether a scheme evaluates systems is its ``evaluation`` plug-in's (analysis.evaluation); said here too.
from analysis.evaluation import offers_evaluation as offers_evaluation
from analysis.pseudonyms import WorkerNames
from analysis.source_yield import SourceCategories
from annotation.models import Benchmark
from review.selectors import interaction_summary
from schemes.scores import DEFAULT_THRESHOLDS, ScoreThresholds, category_of


@dataclass(frozen=True)
class StatisticsOptions:
    """Choices a researcher may make about the figures; a scheme ignores those it has no use for
    (the score thresholds and the re-annotation are SWORDS's)."""

    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS
    reannotation: str | None = None
    # Only the targets of this split (``analysis.models.TargetSplit``); None: all.
    split: str | None = None
    # A worker-aware model (``analysis.aggregation.METHODS``) whose posteriors are summed up beside
    # the score's figures; None: none (docs/design.md §13).
    aggregation: str | None = None


def flat_summary(statistics: dict[str, Any], prefix: str = "") -> Iterator[str]:
    """One line per figure, nested keys joined by dots: the text form of a scheme's statistics."""
    for key, value in statistics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from flat_summary(value, f"{name}.")
        elif isinstance(value, float):
            yield f"{name:<48}{value:>14.4f}"
        else:
            yield f"{name:<48}{'-' if value is None else value!s:>14}"


Statistics = Callable[[Benchmark, StatisticsOptions], dict[str, Any]]


Verdict = Callable[[Mapping[str, int]], tuple[float | None, str]]


def share_verdict(counts: Mapping[str, int]) -> tuple[float | None, str]:
    """A candidate's score as docs/design.md §7 defines it, accepts over valid labels (abstain
    counts as not-accept), and its category by the default thresholds; None and "unscored" without
    labels."""
    total = sum(counts.values())
    score = counts.get("accept", 0) / total if total else None
    return score, category_of(score)


@dataclass(frozen=True)
class SchemeFigures:
    """``statistics`` for ``benchmark_stats`` and the API (``summary`` prints them as text),
    ``document`` for the ``stats`` export (default: the statistics with the time they were made),
    ``template`` and ``page_context`` for the statistics page (default: every figure in a table and
    the plots, ``analysis/scheme_statistics.html``), ``pages`` for the scheme's other pages."""

    scheme: str
    statistics: Statistics
    # The stats export: (benchmark, how workers are named, split) -> the document; None: ``stamped``.
    document: Callable[[Benchmark, WorkerNames, str | None], dict[str, Any]] | None = None
    template: str = "analysis/scheme_statistics.html"
    # The statistics page's context; None: the benchmark, its statistics as rows, its plots' names.
    page_context: Callable[[Benchmark], dict[str, Any]] | None = None
    summary: Callable[[dict[str, Any]], Iterator[str]] = field(default=flat_summary)
    # The scheme's other researcher pages, linked from the benchmark page: (title, URL name taking the
    # benchmark's name), e.g. ProLex's assignments, the merged suggestions of Smart Word Suggestions.
    pages: tuple[tuple[str, str], ...] = ()
    # A candidate's score and category from its valid labels counted by value, for the target page
    # and its search (the score there is always accepts over valid labels).
    verdict: Verdict = field(default=share_verdict)
    # The scheme's names of the stored label values where they differ from annotation.LabelValue's,
    # e.g. ProLex's {"accept": "1 acceptable"}.
    value_names: Mapping[str, str] = field(default_factory=dict)
    # The scheme's plots by name (``scores``, ``workers``...): benchmark -> one standalone SVG.
    # The statistics page shows them; analysis.plot_files serves them as SVG and PNG.
    plots: Mapping[str, Callable[[Benchmark], str]] = field(default_factory=dict)
    # The serializer of ``statistics`` for the API's schema (a DRF serializer class); None: an object.
    serializer: Any = None
    # The scheme's acceptable and conceivable, in its words, for the table of which candidate source
    # pays off (analysis.source_yield, docs/design.md §14); None: its candidates are not judged one by one.
    source_categories: SourceCategories | None = None
    # The names of the figures its page reads as last computed in the background
    # (analysis.background), read on each request beside the page's figures kept for the change.
    background: tuple[str, ...] = ()
    # The statistics page's context drawn from them: (benchmark, the page's kept context, the
    # benchmark's change key) -> what the page adds to it on each request; None: nothing.
    background_context: Callable[[Benchmark, dict[str, Any], str], dict[str, Any]] | None = None
    # The statistics page's tables built from its context (the ``statistics_tables`` tag its template
    # names); None: the template shows them itself.
    page_tables: Callable[[Mapping[str, Any]], SafeString] | None = None


_FIGURES: dict[str, SchemeFigures] = {}


def register_figures(figures: SchemeFigures) -> SchemeFigures:
    _FIGURES[figures.scheme] = figures
    return figures


def scheme_figures(benchmark: Benchmark) -> SchemeFigures:
    try:
        return _FIGURES[benchmark.scheme]
    except KeyError:
        raise LookupError(f"no figures are registered for the {benchmark.scheme!r} scheme") from None


# A scheme's own pages and their API (e.g. the merged suggestions of a scheme of spans): URL
# patterns its figures plug-in registers, served under the analysis pages and under /api/.
_PAGE_URLS: dict[str, list[Any]] = {"pages": [], "api": []}


def register_pages(*, pages: Sequence[Any] = (), api: Sequence[Any] = ()) -> None:
    """Serve a scheme's own pages (``django.urls.path`` patterns, under the analysis pages) and
    their API (under ``/api/``). Its figures' ``pages`` link them from the benchmark page by the
    patterns' names. The URLs are read when the first request is resolved, after every plug-in
    has registered."""
    _PAGE_URLS["pages"].extend(pages)
    _PAGE_URLS["api"].extend(api)


def page_urls() -> list[Any]:
    return list(_PAGE_URLS["pages"])


def api_page_urls() -> list[Any]:
    return list(_PAGE_URLS["api"])


def registered_figures() -> list[SchemeFigures]:
    """Every scheme's figures, by scheme name."""
    return [_FIGURES[name] for name in sorted(_FIGURES)]


def stamped(
    statistics: Callable[[Benchmark, StatisticsOptions], dict[str, Any]],
) -> Callable[[Benchmark, WorkerNames, str | None], dict[str, Any]]:
    """A ``stats`` export document: the statistics with the time they were made (they name no
    workers, and cover the whole benchmark)."""

    def document(benchmark: Benchmark, workers: WorkerNames, split: str | None) -> dict[str, Any]:
        return {"generated_at": timezone.now().isoformat(), **statistics(benchmark, StatisticsOptions())}

    return document


def benchmark_figures(*, benchmark: Benchmark, options: StatisticsOptions | None = None) -> dict[str, Any]:
    """The benchmark's statistics as its scheme reports them, with the scheme named."""
    statistics = scheme_figures(benchmark).statistics(benchmark, options or StatisticsOptions())
    return {"scheme": benchmark.scheme, **statistics, "interaction": interaction_summary(benchmark=benchmark)}


def flat_figures(statistics: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(name, value) of every figure, nested names joined by dots: the rows of the generic page."""
    for key, value in statistics.items():
        if isinstance(value, Mapping):
            yield from flat_figures(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
