"""ProLex's figures (Zhang et al. 2024); its released format is in ``exports``.

The benchmark's output is one ProLex row per target: a row imported from a ProLex file as it was
imported, and for a target judged here (an imported one too) its quadruplet
(``schemes.prolex.rules.quadruplet``: the acceptable substitutes by the experts' labels, the
proficiency-oriented ones by CEFR level), a target without an acceptable substitute left out.
The statistics count those rows; agreement is Cohen's kappa on the substitutes two experts judged,
0 labels left out, with a bootstrap interval, and is not available when no substitute has labels
from two experts (an imported release keeps none).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from django.db.models import Count, Q
from django.utils.safestring import mark_safe
from rest_framework import serializers

from analysis import plots
from analysis.agreement import cohen_kappa_interval
from analysis.figures import SchemeFigures, StatisticsOptions, register_figures, stamped
from analysis.selectors import benchmark_valid_labels, in_split, value_code
from analysis.serializers import InteractionSerializer
from analysis.source_yield import SourceCategories
from annotation.models import Benchmark, Candidate, LabelValue, Target
from schemes import get_scheme
from schemes.prolex.formats import COLUMNS, LEVEL_COLUMNS, NAME, ProlexRow
from schemes.prolex.levels import UNKNOWN, Level, effective_level, from_file
from schemes.prolex.rules import ACCEPTABLE, LABEL_OF_ANSWER, Judged, decision, quadruplet
from schemes.scores import ABSTAIN

NOT_AVAILABLE = "not available"
PREVIEW_ROWS = 50
COUNTED = ("acceptable", "unacceptable", "proficiency_acceptable")


def _valid(value: str) -> Q:
    """A candidate's valid labels of one value (imported, or of an assignment not filtered)."""
    return Q(labels__value=value) & (Q(labels__assignment__isnull=True) | Q(labels__assignment__filtered=False))


def _collected() -> Q:
    """A candidate's labels collected here that count (an assignment not filtered), not imported."""
    return Q(labels__assignment__isnull=False, labels__assignment__filtered=False)


def _imported_levels(row: ProlexRow) -> dict[str, Any]:
    """The levels an imported row gives its proficiency lists' substitutes, as the file writes them."""
    known: dict[str, Any] = {}
    for subs, levels in ((row.prof_acc_subs, row.prof_acc_cefr), (row.prof_unacc_subs, row.prof_unacc_cefr)):
        known.update(zip(subs, levels or [], strict=False))
    return known


def prolex_rows(*, benchmark: Benchmark, split: str | None = None) -> Iterator[ProlexRow]:
    """The benchmark's ProLex rows in target order (the file's order for an imported file); those
    of ``split`` only, when one is named.

    An imported row comes back as it was imported while nothing was collected for its target; once
    experts judged it here, its quadruplet is made from the imported and the collected labels
    together, with the levels the file gave where it gave one."""
    counted = (
        in_split(Candidate.objects.filter(target__benchmark=benchmark), split, "target__")
        .annotate(
            ones=Count("labels", filter=_valid(LabelValue.ACCEPT)),
            minus_ones=Count("labels", filter=_valid(LabelValue.REJECT)),
            collected=Count("labels", filter=_collected()),
        )
        .order_by("target_id", "pk")
        .values_list("target_id", "text", "cefr", "ones", "minus_ones", "collected")
    )
    substitutes: dict[int, list[tuple[str, str, int, int]]] = defaultdict(list)
    judged_here: set[int] = set()
    for target_id, text, cefr, ones, minus_ones, collected in counted:
        substitutes[target_id].append((text, cefr, ones, minus_ones))
        if collected:
            judged_here.add(target_id)
    targets = in_split(Target.objects.filter(benchmark=benchmark), split, "").order_by("pk")
    for pk, word, cefr, extra, text in targets.values_list("pk", "word", "cefr", "extra", "context__text"):
        imported = ProlexRow.from_json(extra[NAME]) if NAME in extra else None
        if imported is not None and pk not in judged_here:
            yield imported
            continue
        known = _imported_levels(imported) if imported is not None else {}
        has_level = imported is not None and imported.t_words_cefr is not None
        level = effective_level(
            text=word, cefr=cefr, imported=imported.t_words_cefr if imported else None, has_imported=has_level
        )
        judged = [
            Judged(
                text=candidate,
                ones=ones,
                minus_ones=minus_ones,
                level=effective_level(
                    text=candidate, cefr=candidate_cefr, imported=known.get(candidate), has_imported=candidate in known
                ),
            )
            for candidate, candidate_cefr, ones, minus_ones in substitutes[pk]
        ]
        row = quadruplet(target=word, text=text, target_level=level, substitutes=judged)
        if row is not None:
            yield row


def columns_of(benchmark: Benchmark) -> list[str]:
    """The columns an imported file had, in its order; for a benchmark judged here, all of them."""
    imported: list[str] | None = benchmark.extra.get(NAME, {}).get("columns")
    return imported or [*COLUMNS, *LEVEL_COLUMNS]


# --- statistics (pure) -----------------------------------------------------------------------


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def prolex_statistics(rows: Sequence[ProlexRow]) -> dict[str, Any]:
    """Counts of a ProLex benchmark as its rows list them: entries as listed (duplicates counted),
    contexts as distinct sentences without their ``**`` marks, target words as written."""
    counts = {
        "acceptable": sum(len(row.acc_subs) for row in rows),
        "unacceptable": sum(len(row.unacc_subs) for row in rows),
        "proficiency_acceptable": sum(len(row.prof_acc_subs) for row in rows),
    }
    return {
        "targets": len(rows),
        "contexts": len({row.unmarked for row in rows}),
        "target_words": len({row.target for row in rows}),
        **counts,
        "per_target": {key: _share(value, len(rows)) for key, value in counts.items()},
        "share_targets_without_acceptable": _share(sum(not row.acc_subs for row in rows), len(rows)),
        "share_targets_without_proficiency_acceptable": _share(sum(not row.prof_acc_subs for row in rows), len(rows)),
    }


# --- agreement -------------------------------------------------------------------------------


def prolex_agreement(*, benchmark: Benchmark, resamples: int = 1000, confidence: float = 0.95) -> dict[str, Any]:
    """Cohen's kappa over the substitutes that two experts judged 1 or -1 (ProLex leaves 0 out),
    each expert's first label, with a bootstrap interval seeded with the benchmark's seed."""
    labels = (
        benchmark_valid_labels(benchmark=benchmark)
        .filter(worker__isnull=False)
        .order_by("candidate_id", "id")
        .values_list("candidate_id", "worker_id", value_code())
    )
    by_candidate: dict[int, dict[int, int]] = defaultdict(dict)
    for candidate_id, worker_id, code in labels:
        by_candidate[candidate_id].setdefault(worker_id, code)
    pairs = [
        list(judged.values())[:2]
        for judged in by_candidate.values()
        if len(judged) >= 2 and ABSTAIN not in list(judged.values())[:2]
    ]
    if not pairs:
        return {
            "available": False,
            "note": f"{NOT_AVAILABLE}: no substitute has a 1 or -1 from two annotators"
            " (an imported release keeps no annotator's labels)",
            "kappa": None,
            "low": None,
            "high": None,
            "confidence": confidence,
            "items": 0,
        }
    estimate = cohen_kappa_interval(
        [first for first, _ in pairs],
        [second for _, second in pairs],
        resamples=resamples,
        confidence=confidence,
        seed=benchmark.seed,
    ).as_dict()
    del estimate["resamples"]
    return {"available": True, "note": "", **estimate}


# --- what the scheme reports -------------------------------------------------------------------


def statistics(benchmark: Benchmark, options: StatisticsOptions | None = None) -> dict[str, Any]:
    return {
        "benchmark": benchmark.name,
        **prolex_statistics(list(prolex_rows(benchmark=benchmark))),
        "agreement": prolex_agreement(benchmark=benchmark),
    }


def page_context(benchmark: Benchmark) -> dict[str, Any]:
    rows = list(prolex_rows(benchmark=benchmark))
    charts = [("judgments", judgments_chart(judgment_counts(benchmark=benchmark))), ("levels", levels_chart(rows))]
    return {
        # analysis.plots escapes every piece of text it writes.
        "charts": [(name, mark_safe(chart)) for name, chart in charts],
        "benchmark": benchmark,
        "statistics": {"benchmark": benchmark.name, **prolex_statistics(rows)},
        "agreement": prolex_agreement(benchmark=benchmark),
        "rows": rows[:PREVIEW_ROWS],
        "more_rows": max(0, len(rows) - PREVIEW_ROWS),
        "counted": COUNTED,
    }


# --- plots -------------------------------------------------------------------------------------

#: The judgments' origins the plot tells apart: an assignment's here, or an imported file's.
COLLECTED, IMPORTED = "collected here", "imported"
#: Where a substitute's CEFR level sits against its target's (``levels.proficiency_oriented``).
BELOW, SAME, ABOVE, NO_LEVEL = "below the target", "the target's level", "above the target", "no level known"
LEVEL_BINS = (BELOW, SAME, ABOVE, NO_LEVEL)


def judgment_counts(*, benchmark: Benchmark) -> dict[str, dict[str, int]]:
    """Valid labels by origin (``COLLECTED``, ``IMPORTED``) and stored value (accept, reject, abstain)."""
    labels = benchmark_valid_labels(benchmark=benchmark)
    return {
        origin: dict(chosen.values("value").annotate(count=Count("id")).values_list("value", "count").order_by())
        for origin, chosen in (
            (COLLECTED, labels.filter(assignment__isnull=False)),
            (IMPORTED, labels.filter(assignment__isnull=True)),
        )
    }


def judgments_chart(counts: Mapping[str, Mapping[str, int]]) -> str:
    """The share of judgments that are 1, -1 and 0, collected here and imported (origins without
    judgments left out); each bar says its count."""
    title = "Judgments of the substitutes"
    choices = get_scheme(NAME).page.choices
    values = [LABEL_OF_ANSWER[choice.value] for choice in choices]
    series = {origin: [found.get(value, 0) for value in values] for origin, found in counts.items()}
    series = {origin: row for origin, row in series.items() if sum(row)}
    if not series:
        return plots.empty_chart(
            title, "No judgment yet: import a ProLex file, or assign targets and collect judgments."
        )
    return plots.grouped_histogram(
        title=title,
        bins=[choice.label for choice in choices],
        series={origin: [count / sum(row) for count in row] for origin, row in series.items()},
        counts=series,
        x_label="judgment",
        y_label="share of judgments",
    )


def _level_bin(substitute: Level, target: Level) -> str:
    if substitute is None or target is None or UNKNOWN in (substitute, target) or min(substitute, target) < 0:
        return NO_LEVEL
    return BELOW if substitute < target else SAME if substitute == target else ABOVE


def level_counts(rows: Sequence[ProlexRow]) -> list[int]:
    """Acceptable substitutes by where their level sits against their target's (``LEVEL_BINS``).

    A row lists the levels of its proficiency-oriented acceptable substitutes (``prof_acc_cefr``)
    and of the other acceptable ones (``prof_unacc_cefr``, below the target by ProLex's rule); a
    substitute without a level there is below the target when it is not proficiency-oriented, and
    of no known level otherwise (a phrase, a word no list knows, a file without level columns).
    """
    counts = [0] * len(LEVEL_BINS)
    for row in rows:
        target = from_file(row.t_words_cefr) if row.t_words_cefr is not None else None
        known: dict[str, int | str] = {}
        for subs, levels in ((row.prof_acc_subs, row.prof_acc_cefr), (row.prof_unacc_subs, row.prof_unacc_cefr)):
            known.update(zip(subs, levels or [], strict=False))
        for substitute in row.acc_subs:
            if substitute in known:
                found = _level_bin(from_file(known[substitute]), target)
            else:
                found = BELOW if substitute in row.prof_unacc_subs else NO_LEVEL
            counts[LEVEL_BINS.index(found)] += 1
    return counts


def levels_chart(rows: Sequence[ProlexRow]) -> str:
    """The share of acceptable substitutes below, at and above their target's CEFR level."""
    title = "Acceptable substitutes by CEFR level against the target's"
    counts = level_counts(rows)
    if not sum(counts):
        return plots.empty_chart(title, "No acceptable substitute yet: import a ProLex file, or collect judgments.")
    return plots.grouped_histogram(
        title=title,
        bins=list(LEVEL_BINS),
        series={"acceptable substitutes": [count / sum(counts) for count in counts]},
        counts={"acceptable substitutes": counts},
        x_label="the substitute's level",
        y_label="share of acceptable substitutes",
    )


PLOTS: dict[str, Callable[[Benchmark], str]] = {
    "judgments": lambda benchmark: judgments_chart(judgment_counts(benchmark=benchmark)),
    "levels": lambda benchmark: levels_chart(list(prolex_rows(benchmark=benchmark))),
}


def verdict(counts: Mapping[str, int]) -> tuple[float | None, str]:
    """ProLex's decision on a substitute (more 1s than -1s: acceptable; 0s left out), with the share of
    1s among its labels as the score the target search ranges over."""
    total = sum(counts.values())
    ones, minus_ones = counts.get(LabelValue.ACCEPT, 0), counts.get(LabelValue.REJECT, 0)
    found = decision(ones=ones, minus_ones=minus_ones)
    return (ones / total if total else None), found or ("undecided" if total else "unjudged")


# --- the API's shape of the statistics ------------------------------------------------------


class ProlexPerTargetSerializer(serializers.Serializer[Any]):
    acceptable = serializers.FloatField(allow_null=True)
    unacceptable = serializers.FloatField(allow_null=True)
    proficiency_acceptable = serializers.FloatField(allow_null=True)


class ProlexAgreementSerializer(serializers.Serializer[Any]):
    available = serializers.BooleanField(help_text="false when no substitute has a 1 or -1 from two annotators")
    note = serializers.CharField(help_text='"not available: ..." when not available')
    kappa = serializers.FloatField(allow_null=True, help_text="Cohen's kappa on the doubly judged substitutes")
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()
    items = serializers.IntegerField(help_text="substitutes with a 1 or -1 from two annotators")


class ProlexStatisticsSerializer(serializers.Serializer[Any]):
    scheme = serializers.CharField()
    benchmark = serializers.CharField()
    interaction = InteractionSerializer()
    targets = serializers.IntegerField(help_text="(target, sentence) rows")
    contexts = serializers.IntegerField(help_text="distinct sentences, ** marks removed")
    target_words = serializers.IntegerField(help_text="distinct target words as written")
    acceptable = serializers.IntegerField(help_text="entries as listed, duplicates counted")
    unacceptable = serializers.IntegerField()
    proficiency_acceptable = serializers.IntegerField()
    per_target = ProlexPerTargetSerializer(help_text="means per row")
    share_targets_without_acceptable = serializers.FloatField(allow_null=True)
    share_targets_without_proficiency_acceptable = serializers.FloatField(allow_null=True)
    agreement = ProlexAgreementSerializer()


def _decide(ones: int, minus_ones: int, zeros: int) -> tuple[bool, bool]:
    """ProLex's decision on a substitute (more 1s than -1s: acceptable), and whether any expert found
    it acceptable at all (a 1): its counterpart of SWORDS's conceivable."""
    return decision(ones=ones, minus_ones=minus_ones) == ACCEPTABLE, ones > 0


SOURCE_CATEGORIES = SourceCategories(
    acceptable="acceptable (more 1s than -1s)", conceivable="judged 1 by an expert at least once", decide=_decide
)


register_figures(
    SchemeFigures(
        scheme=NAME,
        statistics=statistics,
        document=stamped(statistics),
        template="schemes/prolex/statistics.html",
        page_context=page_context,
        pages=(("Assignments to annotators", "benchmark-assignments"),),
        verdict=verdict,
        plots=PLOTS,
        value_names={LABEL_OF_ANSWER[choice.value]: choice.label for choice in get_scheme(NAME).page.choices},
        serializer=ProlexStatisticsSerializer,
        source_categories=SOURCE_CATEGORIES,
    )
)
