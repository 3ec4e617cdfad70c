"""SWORDS's figures: Table 2 with the breakdowns by source and part of speech, agreement (alpha,
kappa, RBO against k), workers, the filter audit, and the statistics page that shows them with plots."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils import translation
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from analysis import aggregation, budget, plots, services
from analysis.background import background_figures, register_background_figures
from analysis.budget import BoolArray, IntArray
from analysis.figures import SchemeFigures, StatisticsOptions, register_figures
from analysis.serializers import StatisticsSerializer
from analysis.source_yield import SourceCategories
from analysis.stats import SOURCE_GROUPS
from annotation.fragments import later
from annotation.models import Benchmark, Candidate
from schemes.scores import DEFAULT_THRESHOLDS
from schemes.swords.figures.statistics_rows import statistics_tables
from schemes.swords.progress import register_reliability, stopping_rule
from schemes.swords.settings import STOPPING_POLICIES, SwordsSettings, settings_of
from schemes.swords.stopping import (
    ADAPTIVE,
    MIXTURE_PRIOR,
    AnyPrior,
    MixturePrior,
    Prior,
    adaptive_decided,
    beta_on_grid,
    curtail_decided,
    source_key,
)

TOP_PAIRS = 20


def _svg(text: str) -> SafeString:
    # analysis.plots escapes every piece of text it writes, worker names included.
    return mark_safe(text)


#: The score plot last drawn in this process, with what it was drawn from (``_score_chart``).
_last_score_chart: tuple[object, str] = ((), "")


def _score_chart(statistics: dict[str, Any]) -> str:
    """The score plot: each source group's histogram of scores. A function of the groups' bins and
    counts alone, so drawn again only when they differ from those of the plot last drawn in this
    process: a submit whose labels move no candidate into another bin leaves it as it was."""
    global _last_score_chart
    series: dict[str, list[float]] = {}
    counts_of: dict[str, list[int]] = {}
    bins: list[str] = []
    for group in SOURCE_GROUPS:
        row = statistics["by_source"].get(group)
        if row is None:
            continue
        counts = row["score_histogram"]["counts"]
        bins = row["score_histogram"]["bins"]
        total = sum(counts)
        if total:
            series[group] = [count / total for count in counts]
            counts_of[group] = list(counts)
    drawn_from = (tuple(bins), tuple((group, tuple(counts)) for group, counts in counts_of.items()))
    last = _last_score_chart
    if last[0] == drawn_from:
        return last[1]
    chart = plots.grouped_histogram(
        title="Score distribution by source",
        bins=bins,
        series=series,
        counts=counts_of,
        x_label="score (accepts / labels)",
        y_label="share of the source's candidates",
    )
    # One assignment: a thread reading it meanwhile finds the last plot or this one, whole.
    _last_score_chart = (drawn_from, chart)
    return chart


def _rbo_chart(agreement: dict[str, Any]) -> str:
    rbo = agreement["rbo"]
    if rbo is None:
        return plots.empty_chart(
            "Rank-biased overlap against k labels",
            "No re-annotation is marked: import a second label set and choose it on the statistics page.",
        )
    points = [(point["k"], point["mean"], point["std"] or 0.0) for point in rbo["points"] if point["mean"] is not None]
    return plots.line_with_error(
        title=f"Rank-biased overlap against k labels (p = {rbo['p']})",
        points=points,
        x_label="labels drawn per candidate from the re-annotation (k)",
        y_label="RBO with the benchmark's ranking",
        error_note=f"error bars: ± one standard deviation of RBO over {rbo['samples']} random draws of k labels",
    )


def _worker_chart(agreement: dict[str, Any], benchmark: Benchmark) -> str:
    workers = agreement["worker_agreement"]
    filtered = agreement.get("filtered_worker_agreement", [])

    def controlled(rows: list[dict[str, Any]]) -> list[tuple[float, float, str]]:
        return [
            (row["control_accuracy"], row["agreement"], row["worker"])
            for row in rows
            if row["control_accuracy"] is not None and row["agreement"] is not None
        ]

    valid_points, filtered_points = controlled(workers), controlled(filtered)
    if valid_points or filtered_points:
        return plots.scatter(
            title="Workers: control accuracy and agreement with the majority",
            points=valid_points,
            marked=filtered_points,
            marked_name="filtered",
            x_label="control accuracy",
            y_label="agreement with the majority of valid labels",
            x_threshold=settings_of(benchmark).min_control_accuracy,
        )
    values = [row["agreement"] for row in workers if row["agreement"] is not None]
    filtered_values = [row["agreement"] for row in filtered if row["agreement"] is not None]
    if not values and not filtered_values:
        return plots.empty_chart("Workers", "The labels name no workers (as in the public SWORDS files).")
    series: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for name, found in (("valid work", values), ("filtered work", filtered_values)):
        if found:
            bins = [0] * 10
            for value in found:
                bins[min(int(value * 10), 9)] += 1
            series[name] = [count / len(found) for count in bins]
            counts[name] = bins
    return plots.grouped_histogram(
        title="Workers: agreement with the majority (no control answers recorded)",
        bins=[f"{i / 10:g}-{(i + 1) / 10:g}" for i in range(10)],
        series=series,
        counts=counts,
        x_label="agreement",
        y_label="share of workers",
    )


def _plot_data(benchmark: Benchmark) -> tuple[dict[str, Any], dict[str, Any]]:
    data = services.benchmark_data(benchmark=benchmark)
    statistics = services.benchmark_statistics(benchmark=benchmark, data=data)
    agreement = services.benchmark_agreement(benchmark=benchmark, data=data, include_pairs=False)
    return statistics, agreement


PLOTS = {
    "scores": lambda benchmark: _score_chart(_plot_data(benchmark)[0]),
    "rbo": lambda benchmark: _rbo_chart(_plot_data(benchmark)[1]),
    "workers": lambda benchmark: _worker_chart(_plot_data(benchmark)[1], benchmark),
}


#: The figures of the statistics page computed in the background (``analysis.background``).
AGREEMENT_FIGURES = "swords-agreement"
#: The parts of the statistics page drawn from them alone: agreement, then the workers, the pairs of
#: workers and the filter audit.
AGREEMENT_TEMPLATE = "schemes/swords/_statistics_agreement.html"
WORKERS_TEMPLATE = "schemes/swords/_statistics_workers.html"


def _agreement_figures(benchmark: Benchmark) -> dict[str, Any]:
    """What the page shows that compares labels across the whole benchmark: agreement, the filter
    audit, and the import origins a re-annotation is chosen among; with the page's parts drawn from
    them rendered once, here, rather than by the first reader after each submit (``_shown_parts``)."""
    data = services.benchmark_data(benchmark=benchmark)
    agreement = services.benchmark_agreement(benchmark=benchmark, data=data)
    audit = services.benchmark_filter_audit(benchmark=benchmark, data=data)
    return {
        "agreement": agreement,
        "audit": audit,
        "origins": data.origins,
        "reannotation_origin": data.reannotation_origin,
        "shown_by": _shown_parts(benchmark, agreement, audit),
    }


register_background_figures(AGREEMENT_FIGURES, _agreement_figures)


def _agreement_context(benchmark: Benchmark, agreement: dict[str, Any], audit: dict[str, Any]) -> dict[str, Any]:
    """The page's context drawn from agreement and the filter audit: the pairs and workers it lists,
    its plots of them."""
    pairs = sorted(agreement["kappa"].get("pairs", []), key=lambda pair: -pair["items"])[:TOP_PAIRS]
    workers = sorted(agreement["worker_agreement"], key=lambda row: (row["agreement"] is None, row["agreement"] or 0))
    return {
        "agreement": agreement,
        "pairs": pairs,
        "workers": workers[:50],
        "audit": audit,
        "rbo_chart": _svg(_rbo_chart(agreement)) if agreement["rbo"] else None,
        "worker_chart": _svg(_worker_chart(agreement, benchmark)),
        "filtered_workers": agreement["filtered_worker_agreement"],
    }


def _shown_as(benchmark: Benchmark, threshold: float) -> tuple[object, ...]:
    """What the parts rendered with the background figures show besides them: the benchmark's name
    (in their links), the language and separation of thousands (their numbers), the script prefix
    (their links) and the control accuracy workers are marked under."""
    return (benchmark.name, get_language(), settings.USE_THOUSAND_SEPARATOR, get_script_prefix(), threshold)


def _shown_parts(
    benchmark: Benchmark, agreement: dict[str, Any], audit: dict[str, Any]
) -> dict[tuple[object, ...], dict[str, str]]:
    """The page's agreement and workers parts as the page renders them (in the site's language),
    keyed by what they were rendered as (``_shown_as``): a reader whose page would show them
    otherwise finds none under its own values and renders its own (``background_context``)."""
    threshold = settings_of(benchmark).min_control_accuracy
    with translation.override(settings.LANGUAGE_CODE):
        context = {
            **_agreement_context(benchmark, agreement, audit),
            "benchmark": benchmark,
            "scheme_settings": settings_of(benchmark),
            "with_reliability": False,
        }
        parts = {
            "agreement": str(render_to_string(AGREEMENT_TEMPLATE, context)),
            "workers": str(render_to_string(WORKERS_TEMPLATE, context)),
        }
        return {_shown_as(benchmark, threshold): parts}


def page_context(benchmark: Benchmark) -> dict[str, Any]:
    """The statistics page: Table 2 summed from rows kept per target; agreement and the filter audit
    as last computed in the background are read on each request, apart (``background_context``:
    they move with their task, not with each submit; docs/design.md §7, "Researcher pages"). With a
    re-annotation marked, every figure is computed here from the labels (the tallies count the
    re-annotation's)."""
    if services.statistics_kept(benchmark=benchmark):
        return _statistics_context(benchmark, services.benchmark_statistics_kept(benchmark=benchmark))
    data = services.benchmark_data(benchmark=benchmark)
    statistics = services.benchmark_statistics(benchmark=benchmark, data=data)
    agreement = services.benchmark_agreement(benchmark=benchmark, data=data)
    audit = services.benchmark_filter_audit(benchmark=benchmark, data=data)
    return {
        **_statistics_context(benchmark, statistics),
        **_agreement_context(benchmark, agreement, audit),
        "agreement_as_of": None,
        "origins": data.origins,
        "reannotation_origin": data.reannotation_origin,
    }


def _statistics_context(benchmark: Benchmark, statistics: dict[str, Any]) -> dict[str, Any]:
    per_target = [
        {
            "name": key,
            "all": statistics["per_target"][key],
            "nonempty": statistics["per_target_nonempty"][key],
            "targets": statistics["per_target_nonempty"]["targets"][key],
        }
        for key in ("candidates", "inconceivable", "conceivable", "acceptable")
    ]
    return {
        "benchmark": benchmark,
        "scheme_settings": settings_of(benchmark),
        "statistics": statistics,
        "per_target": per_target,
        "by_source": [
            (group, statistics["by_source"][group]) for group in SOURCE_GROUPS if group in statistics["by_source"]
        ],
        "by_pos": sorted(statistics["by_pos"].items()),
        "score_chart": _svg(_score_chart(statistics)),
        "plot_names": list(PLOTS),
    }


def background_context(benchmark: Benchmark, context: dict[str, Any], key: str) -> dict[str, Any]:
    """The page's context drawn from the figures computed in the background, as last computed
    (``key``: the benchmark's change key, which they are older than while their task runs): read on
    each request, so the page's figures kept for a change (``context``) do not hold them. Their
    parts as rendered when they were computed are shown as they are where this page would render
    them the same (not with each worker's reliability, which the view adds); else the page renders
    them, under its own fragments keyed by the figures' stamp."""
    if "agreement" in context:  # computed with the page: a re-annotation is marked
        return {"agreement_stamp": ""}
    background = background_figures(benchmark=benchmark, name=AGREEMENT_FIGURES, key=key)
    kept = background.value
    derived: dict[str, Any] = {}

    def part(name: str) -> Any:
        def compute() -> Any:
            if not derived:
                derived.update(_agreement_context(benchmark, kept["agreement"], kept["audit"]))
            return derived[name]

        return later(compute)

    # Looked up by what this page shows them as: parts rendered under other values are not found.
    # (An entry written before they were keyed holds them under another name: none is found.)
    shown_by = kept.get("shown_by") or {}
    parts = shown_by.get(_shown_as(benchmark, context["scheme_settings"].min_control_accuracy), {})
    return {
        "agreement": kept["agreement"],
        "audit": kept["audit"],
        **{name: part(name) for name in ("pairs", "workers", "rbo_chart", "worker_chart", "filtered_workers")},
        "origins": kept["origins"],
        "reannotation_origin": kept["reannotation_origin"],
        "agreement_as_of": None if background.current else datetime.fromtimestamp(background.computed_at, tz=UTC),
        "agreement_stamp": background.key,
        "agreement_html": _html(parts.get("agreement")),
        "workers_html": _html(parts.get("workers")),
    }


def _html(part: str | None) -> SafeString | None:
    # Rendered by the page's own templates, escaped where they escape.
    return None if part is None else mark_safe(part)


def statistics(benchmark: Benchmark, options: StatisticsOptions) -> dict[str, Any]:
    whole = options.reannotation is None and options.split is None and options.aggregation is None
    if whole and services.statistics_kept(benchmark=benchmark):
        return services.benchmark_statistics_kept(benchmark=benchmark, thresholds=options.thresholds)
    data = services.benchmark_data(benchmark=benchmark, reannotation_origin=options.reannotation, split=options.split)
    result = services.benchmark_statistics(benchmark=benchmark, thresholds=options.thresholds, data=data)
    if options.aggregation is not None:
        # Beside the score's figures, never instead of them.
        result["aggregation"] = services.aggregation_summary(
            benchmark=benchmark, method=options.aggregation, thresholds=options.thresholds, data=data
        )
    return result


def summary(stats: dict[str, Any]) -> Iterator[str]:
    """SWORDS Table 2 as text: counts, per-target means, and the breakdowns by source and part of speech."""
    for key in ("contexts", "targets", "candidates", "labels"):
        yield f"{key:<28}{stats[key]:>12}"
    yield f"{'abstain share':<28}{_number(stats['abstain_share']):>12}"
    yield f"\n{'per target':<28}{'all targets':>12}{'targets with it':>18}"
    for key, value in stats["per_target"].items():
        nonempty = stats["per_target_nonempty"][key]
        yield f"  {key:<26}{_number(value):>12}{_number(nonempty):>18}"
    yield f"\n{'by source':<20}{'candidates':>12}{'mean score':>12}{'acceptable':>12}"
    for group, row in stats["by_source"].items():
        yield f"  {group:<18}{row['candidates']:>12}{_number(row['mean_score']):>12}{row['acceptable']:>12}"
    yield f"\n{'by part of speech':<20}{'targets':>12}{'candidates':>12}{'acceptable/t':>14}"
    for pos, row in stats["by_pos"].items():
        yield f"  {pos:<18}{row['targets']:>12}{row['candidates']:>12}{_number(row['per_target']['acceptable']):>14}"
    aggregated = stats.get("aggregation")
    if aggregated is not None:
        yield f"\n{'aggregation':<28}{aggregated['method']:>12}"
        for key in ("acceptable_by_score", "acceptable_by_posterior", "acceptable_by_both", "controls", "iterations"):
            yield f"  {key:<26}{aggregated[key]:>12}"
        yield f"  {'mean reliability':<26}{_number(aggregated['mean_reliability']):>12}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _decide(accepts: int, rejects: int, abstains: int) -> tuple[bool, bool]:
    """SWORDS's two decisions on a scored candidate (docs/design.md §7): its score, accepts over
    valid labels (abstain counts as not-accept), above 0.5 and above 0."""
    score = accepts / (accepts + rejects + abstains)
    return score > DEFAULT_THRESHOLDS.acceptable, score > DEFAULT_THRESHOLDS.conceivable


SOURCE_CATEGORIES = SourceCategories(
    acceptable="acceptable (score above 0.5)", conceivable="conceivable (score above 0)", decide=_decide
)


register_figures(
    SchemeFigures(
        scheme="swords",
        statistics=statistics,
        document=lambda benchmark, workers, split: services.benchmark_stats_document(
            benchmark=benchmark, workers=workers, split=split
        ),
        template="schemes/swords/statistics.html",
        page_context=page_context,
        background=(AGREEMENT_FIGURES,),
        background_context=background_context,
        page_tables=statistics_tables,
        summary=summary,
        pages=(("Proposals of the generation task (step 1)", "analysis-proposals"),),
        plots=PLOTS,
        serializer=StatisticsSerializer,
        source_categories=SOURCE_CATEGORIES,
    )
)


# --- the stopping policies, for the budget planner (analysis.budget) ---------------------------


def _table_rule(priors: IntArray, decided: Callable[[int, int, int], bool], maximum: int) -> budget.StoppingRule:
    """A rule read from a table of every (prior, accepts, labels) a candidate can reach, worked out
    once per plan: the planner asks the rule after every simulated label of every open candidate, so
    the per-candidate decision (a sum of beta-binomial terms for the adaptive stop) is never
    recomputed there. ``priors`` numbers each candidate's prior; ``decided(prior, accepts, labels)``."""
    kinds = int(priors.max()) + 1 if priors.size else 1
    table = np.zeros((kinds, maximum + 1, maximum + 1), dtype=bool)
    for kind in range(kinds):
        for labels in range(maximum + 1):
            for accepts in range(labels + 1):
                table[kind, accepts, labels] = decided(kind, accepts, labels)

    def settled(accepts: IntArray, labels: IntArray, rows: IntArray) -> BoolArray:
        capped = np.minimum(labels, maximum)
        return np.asarray(table[priors[rows], np.minimum(accepts, capped), capped], dtype=bool)

    return settled


def _curtail_rule(context: budget.PlanContext) -> budget.StoppingRule:
    """Settled once neither decision can change with the labels still to come (``stopping.curtail_decided``)."""
    maximum = context.max_labels
    return _table_rule(
        np.zeros(context.prior_alpha.size, dtype=np.int64),
        lambda kind, accepts, labels: curtail_decided(accepts, labels, maximum=maximum),
        maximum,
    )


def _adaptive_rule(context: budget.PlanContext) -> budget.StoppingRule:
    """Settled once a change is less likely than the benchmark's ``adaptive_epsilon``, past its
    ``adaptive_floor`` (``stopping.adaptive_decided``). For a benchmark, the very rule its refreshes
    apply (``progress.stopping_rule``: its prior kind, the priors fitted per candidate source to its
    labels, its epsilons), read per candidate's source; for bare counts, a prior per planner source
    group (a handful of distinct priors)."""
    chosen = context.settings if isinstance(context.settings, SwordsSettings) else SwordsSettings()
    maximum = context.max_labels
    if isinstance(context.benchmark, Benchmark) and context.candidate_ids is not None:
        rule = stopping_rule(benchmark=context.benchmark, settings=replace(chosen, stopping_policy=ADAPTIVE))
        assert rule is not None
        ids = context.candidate_ids
        found = dict(Candidate.objects.filter(pk__in=ids.tolist()).values_list("pk", "sources"))
        keys = [source_key(found.get(int(pk)) or []) for pk in ids]
        names = sorted(set(keys))
        kind_of = {name: kind for kind, name in enumerate(names)}
        return _table_rule(
            np.asarray([kind_of[key] for key in keys], dtype=np.int64),
            lambda kind, accepts, labels: rule.decided(accepts, labels, names[kind]),
            maximum,
        )
    mixture = chosen.adaptive_prior == MIXTURE_PRIOR
    # Bare counts have a prior per source group: the planner's mixture where it has one (the
    # mixture rule reads it as it is), else its Beta (read on the grid by the mixture rule).
    weighted = mixture and context.prior_weights is not None
    pairs = (
        np.asarray(context.prior_weights) if weighted else np.stack([context.prior_alpha, context.prior_beta], axis=1)
    )
    distinct, priors = np.unique(pairs, axis=0, return_inverse=True) if pairs.size else (pairs, pairs[:, 0])

    def decided(kind: int, accepts: int, labels: int) -> bool:
        prior: AnyPrior
        if weighted:
            prior = MixturePrior(tuple(float(weight) for weight in distinct[kind]))
        else:
            beta = Prior(float(distinct[kind][0]), float(distinct[kind][1]))
            prior = beta_on_grid(beta) if mixture else beta
        return adaptive_decided(
            accepts,
            labels,
            maximum=maximum,
            prior=prior,
            epsilon=chosen.adaptive_epsilon,
            floor=min(chosen.adaptive_floor, maximum),
            epsilon_conceivable=chosen.adaptive_epsilon_conceivable if mixture else None,
        )

    return _table_rule(np.asarray(priors, dtype=np.int64).reshape(-1), decided, maximum)


# In the order of the setting's choices: today's rule first (docs/design.md §13).
budget.register_rule(STOPPING_POLICIES[0], budget.reduce_then_score_rule, exact_past_reduce=True)
budget.register_rule(STOPPING_POLICIES[1], _curtail_rule)
budget.register_rule(STOPPING_POLICIES[2], _adaptive_rule)


def _reliability(method: str) -> Callable[[Benchmark], tuple[dict[int, float], float | None]]:
    """Each worker's reliability under ``method`` for the adaptive stop's weighted evidence."""

    def fit(benchmark: Benchmark) -> tuple[dict[int, float], float | None]:
        fitted = services.benchmark_aggregation(benchmark=benchmark, method=method)
        return fitted.reliability_of(), fitted.workerless_reliability

    return fit


for _method in aggregation.METHODS:
    register_reliability(_method, _reliability(_method))
