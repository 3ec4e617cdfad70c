"""Reads of benchmarks and their contents."""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, F, Max, Q, QuerySet

from annotation.access import benchmarks_visible_sql, benchmarks_visible_to
from annotation.changes import benchmark_cached, benchmark_kept, computed_once
from annotation.models import Activity, ActivityKind, Benchmark, Candidate, Context, Import, Label, Target
from crowdlex.sql import execute, instances, select_columns
from crowdlex.statements import shaped_count, shaped_objects, shaped_rows


def benchmark_list(*, user: Any) -> QuerySet[Benchmark]:
    """The benchmarks ``user`` may see (docs/permissions.md)."""
    return benchmarks_visible_to(user).annotate(target_count=Count("targets", distinct=True)).order_by("name")


def benchmark_list_rows(*, user: Any) -> list[Benchmark]:
    """``benchmark_list`` read at once, for the page: the same rows, each with its ``target_count``,
    in one statement written in SQL, as the ORM spent more CPU building it (1.7 ms) than the rest of
    the page took (docs/design.md §7, "The request's fixed cost")."""
    visible = benchmarks_visible_sql(user, "b")
    if visible is None:
        return []
    condition, params = visible
    benchmark, target = Benchmark._meta.db_table, Target._meta.db_table
    sql = (
        f"SELECT {select_columns((Benchmark, 'b'))},"
        f" (SELECT count(*) FROM {target} t WHERE t.benchmark_id = b.id)"
        f" FROM {benchmark} b{' WHERE ' + condition if condition else ''} ORDER BY b.name"
    )
    with connection.cursor() as cursor:
        execute(cursor, sql, params)
        rows = cursor.fetchall()
    found = []
    for row in rows:
        (each,) = instances(row[:-1], (Benchmark, "b"))
        each.target_count = row[-1]
        found.append(each)
    return found


def benchmark_counts(*, benchmark: Benchmark) -> dict[str, int]:
    """Counts of docs/design.md §7 statistics: contexts, targets, candidates, labels (abstain included),
    computed once per change of the benchmark (``annotation.changes``)."""
    return benchmark_cached(benchmark=benchmark, name="counts", compute=lambda: _benchmark_counts(benchmark))


def counts_summed(counts: Iterable[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    """Candidates and labels summed, and the highest id of each, over targets (``_target_counts``) or
    over such sums. Pure."""
    candidates = labels = candidates_through = labels_through = 0
    for count, labelled, top, top_label in counts:
        candidates += count
        labels += labelled
        candidates_through = max(candidates_through, top)
        labels_through = max(labels_through, top_label)
    return candidates, labels, candidates_through, labels_through


def counts_replaced(
    total: tuple[int, int, int, int],
    taken: Iterable[tuple[int, int, int, int]],
    added: Iterable[tuple[int, int, int, int]],
) -> tuple[int, int, int, int] | None:
    """``total`` (``counts_summed`` of some targets' counts) with the counts ``taken`` replaced by
    ``added``, exactly as ``counts_summed`` of the targets then gives it: the counts by difference,
    and each highest id the higher of the kept one and the added ones, unless the counts taken out
    held it and the added ones do not reach it (rows deleted): then None, as the highest id of the
    others is not known from the total. Pure."""
    candidates, labels, candidates_through, labels_through = total
    held = [False, False]
    for count, labelled, top, top_label in taken:
        candidates -= count
        labels -= labelled
        held[0] = held[0] or top == candidates_through
        held[1] = held[1] or top_label == labels_through
    reached = [0, 0]
    for count, labelled, top, top_label in added:
        candidates += count
        labels += labelled
        reached[0] = max(reached[0], top)
        reached[1] = max(reached[1], top_label)
    if (held[0] and reached[0] < candidates_through) or (held[1] and reached[1] < labels_through):
        return None
    return candidates, labels, max(candidates_through, reached[0]), max(labels_through, reached[1])


def _kept_counts(benchmark: Benchmark) -> tuple[int, int, int, int]:
    # Kept per target, so after a submit only the targets it changed are counted again, and summed
    # beside them by difference: a submit reads and writes the buckets of its targets and the total
    # alone, not every bucket's summary (docs/design.md §7, "Incremental figures").
    return benchmark_kept(
        benchmark_id=benchmark.pk,
        # Named apart from the entry an earlier version kept with a summary in every bucket.
        name="counts-extent-summed",
        compute=lambda target_ids: _target_counts(benchmark, target_ids),
        summarise=counts_summed,
        combine=counts_summed,
        replace=counts_replaced,
    ).total


def _candidate_counts(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Candidate, tuple[int, int, int]]:
    candidates = Candidate.objects.filter(target__benchmark_id=benchmark_id)
    if target_ids is not None:
        candidates = candidates.filter(target_id__in=target_ids)
    return (
        candidates.values("target_id")
        .annotate(n=Count("pk"), top=Max("pk"))
        .values_list("target_id", "n", "top")
        .order_by()
    )


def _benchmark_counts(benchmark: Benchmark) -> dict[str, int]:
    candidates, labels, _, _ = _kept_counts(benchmark)
    return {
        "contexts": shaped_count(Context, "benchmark_id", benchmark.pk),
        "targets": shaped_count(Target, "benchmark_id", benchmark.pk),
        "candidates": candidates,
        "labels": labels,
    }


def benchmark_extent(*, benchmark: Benchmark) -> dict[str, int]:
    """The benchmark's candidates and labels now, and the highest id of each (what an evaluation's
    version records, docs/evaluation.md "Versions"), summed from the counts kept per target: after a
    submit it counts only the targets the submit changed."""
    candidates, labels, candidates_through, labels_through = _kept_counts(benchmark)
    return {
        "candidates": candidates,
        "labels": labels,
        "candidates_through": candidates_through,
        "labels_through": labels_through,
    }


def _target_counts(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, tuple[int, int, int, int]]:
    """Per target of ``target_ids`` (every target when None) with any candidate: its candidates, its
    labels (abstain included), and the highest id of each (0 without labels)."""
    # Every label, counted or not (a filtered assignment's too), and the highest id: what a version
    # records, so not the candidates' tallies (valid labels alone, no id). Read by the benchmark each
    # label keeps, not through its candidate's target (docs/design.md §7, "Labels by benchmark").
    labels = Label.objects.filter(benchmark=benchmark)
    label_counts: dict[int, tuple[int, int]] = {}
    if target_ids is not None:
        # The changed targets' labels, read once for these counts and the imported labels by origin.
        for target_id, _, n, _, top in _label_rows(benchmark, target_ids):
            count, highest = label_counts.get(target_id, (0, 0))
            label_counts[target_id] = (count + n, max(highest, top))
    else:
        by_target = labels.values("candidate__target_id").annotate(n=Count("pk"), top=Max("pk")).order_by()
        label_counts = {
            target_id: (n, top) for target_id, n, top in by_target.values_list("candidate__target_id", "n", "top")
        }
    candidate_counts = shaped_rows(_candidate_counts, benchmark.pk, target_ids)
    found = {}
    for target_id, count, top in candidate_counts:
        labelled, top_label = label_counts.get(target_id, (0, 0))
        found[target_id] = (count, labelled, top, top_label)
    return found


@dataclass(frozen=True)
class ImportSummary:
    """One import of a benchmark with the rows it brought (rows other imports bring too count here as well)."""

    origin: str
    new_label_set: bool
    created_at: datetime
    contexts: int
    targets: int
    candidates: int
    labels: int


def import_list(*, benchmark: Benchmark) -> list[ImportSummary]:
    """The benchmark's imports, oldest first, so a researcher can find the one to remove.

    One grouped count per kind of row: counting the three relations in one query would multiply
    them together. Computed once per change of the benchmark (``annotation.changes``); the targets
    and candidates by import and the imported labels by origin are kept per target."""
    return benchmark_cached(benchmark=benchmark, name="imports", compute=lambda: _import_list(benchmark))


def _imports(benchmark_id: int) -> QuerySet[Import]:
    return Import.objects.filter(benchmark_id=benchmark_id)


def _import_contexts(import_ids: list[int]) -> QuerySet[Any, tuple[int, int]]:
    return (
        Import.contexts.through.objects.filter(import_id__in=import_ids).values_list("import_id").annotate(Count("id"))
    )


def _import_list(benchmark: Benchmark) -> list[ImportSummary]:
    # Built by the ORM once per process (``crowdlex.statements``): the benchmark page reads them
    # after every change.
    imports = shaped_objects(_imports, benchmark.pk)
    contexts = dict(shaped_rows(_import_contexts, [record.pk for record in imports]))
    # Targets and candidates by import, and imported labels by origin, kept per target: after a
    # submit only the targets it changed are counted again (docs/design.md §7, "Incremental figures").
    rows = {
        import_id: (targets, candidates)
        for import_id, targets, candidates in benchmark_kept(
            benchmark_id=benchmark.pk,
            name="import-rows",
            compute=lambda target_ids: _import_rows(benchmark, target_ids),
            summarise=import_rows_summed,
            combine=import_rows_summed,
        ).total
    }
    labels = dict(
        benchmark_kept(
            benchmark_id=benchmark.pk,
            name="imported-labels",
            compute=lambda target_ids: _imported_labels(benchmark, target_ids),
            summarise=origins_summed,
            combine=origins_summed,
        ).total
    )
    return [
        ImportSummary(
            origin=record.origin,
            new_label_set=record.new_label_set,
            created_at=record.created_at,
            contexts=contexts.get(record.pk, 0),
            targets=rows.get(record.pk, (0, 0))[0],
            candidates=rows.get(record.pk, (0, 0))[1],
            labels=labels.get(record.origin, 0),
        )
        for record in imports
    ]


ImportRows = tuple[tuple[int, int, int], ...]


def import_rows_summed(rows: Iterable[ImportRows]) -> ImportRows:
    """Targets and candidates by import (``_import_rows``) summed over targets or such sums. Pure."""
    targets: Counter[int] = Counter()
    candidates: Counter[int] = Counter()
    for counts in rows:
        for import_id, target_count, candidate_count in counts:
            targets[import_id] += target_count
            candidates[import_id] += candidate_count
    return tuple((import_id, targets[import_id], candidates[import_id]) for import_id in sorted(targets | candidates))


def _import_target_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Any, tuple[int, int, int]]:
    targets = Import.targets.through.objects.filter(target__benchmark_id=benchmark_id)
    if target_ids is not None:
        targets = targets.filter(target_id__in=target_ids)
    return targets.values_list("target_id", "import_id").annotate(n=Count("id")).order_by()


def _import_candidate_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Any, tuple[int, int, int]]:
    candidates = Import.candidates.through.objects.filter(candidate__target__benchmark_id=benchmark_id)
    if target_ids is not None:
        candidates = candidates.filter(candidate__target_id__in=target_ids)
    return candidates.values_list("candidate__target_id", "import_id").annotate(n=Count("id")).order_by()


def _import_rows(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, ImportRows]:
    """Per target of ``target_ids`` (every target when None) that an import brought or brought
    candidates to: by import, whether it brought the target (0 or 1) and how many of its candidates."""
    found: dict[int, dict[int, list[int]]] = {}
    # The statements built by the ORM once per process (``crowdlex.statements.shaped_rows``).
    for target_id, import_id, count in shaped_rows(_import_target_rows, benchmark.pk, target_ids):
        found.setdefault(target_id, {}).setdefault(import_id, [0, 0])[0] += count
    for target_id, import_id, count in shaped_rows(_import_candidate_rows, benchmark.pk, target_ids):
        found.setdefault(target_id, {}).setdefault(import_id, [0, 0])[1] += count
    return {
        target_id: tuple((import_id, pair[0], pair[1]) for import_id, pair in sorted(by_import.items()))
        for target_id, by_import in found.items()
    }


def origins_summed(origins: Iterable[tuple[tuple[str, int], ...]]) -> tuple[tuple[str, int], ...]:
    """Imported labels by origin (``_imported_labels``) summed over targets or such sums. Pure."""
    labels: Counter[str] = Counter()
    for counts in origins:
        for origin, count in counts:
            labels[origin] += count
    return tuple(sorted(labels.items()))


def _imported_labels(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, tuple[tuple[str, int], ...]]:
    """Per target of ``target_ids`` (every target when None) with imported labels: their count by origin."""
    found: dict[int, list[tuple[str, int]]] = {}
    if target_ids is not None:
        for target_id, origin, _, imported, _ in _label_rows(benchmark, target_ids):
            if imported:
                found.setdefault(target_id, []).append((origin, imported))
        return {target_id: tuple(sorted(origins)) for target_id, origins in found.items()}
    labels = Label.objects.filter(candidate__target__benchmark=benchmark, assignment__isnull=True)
    for target_id, origin, count in (
        labels.values_list("candidate__target_id", "origin").annotate(count=Count("id")).order_by()
    ):
        found.setdefault(target_id, []).append((origin, count))
    return {target_id: tuple(sorted(origins)) for target_id, origins in found.items()}


def _label_counts(benchmark_id: int, target_ids: list[int]) -> QuerySet[Label, tuple[int, str, int, int, int]]:
    return (
        Label.objects.filter(benchmark_id=benchmark_id, candidate__target_id__in=target_ids)
        .values_list("candidate__target_id", "origin")
        .annotate(n=Count("pk"), imported=Count("pk", filter=Q(assignment__isnull=True)), top=Max("pk"))
        .order_by()
    )


def _label_rows(benchmark: Benchmark, target_ids: list[int]) -> list[tuple[int, str, int, int, int]]:
    """The labels of ``target_ids`` by target and origin: (target, origin, labels, imported labels,
    highest id), in one statement read once per computation of figures for the same targets
    (``annotation.changes.computed_once``): the changed targets' counts and imported labels, kept per
    target, read the label table once between them (docs/design.md §7, "Incremental figures").
    Read by the benchmark each label keeps (docs/design.md §7, "Labels by benchmark")."""
    targets = ",".join(str(target_id) for target_id in target_ids)

    def read() -> list[tuple[int, str, int, int, int]]:
        return shaped_rows(_label_counts, benchmark.pk, target_ids)  # type: ignore[return-value]

    return computed_once(f"label-rows:{benchmark.pk}:{targets}", read)


def labels_misplaced(*, benchmark_id: int | None = None) -> int:
    """Labels whose own benchmark is not their candidate's (of one benchmark's candidates, or of all):
    none, as every writer keeps them equal (docs/design.md §7, "Labels by benchmark")."""
    labels = Label.objects.exclude(benchmark_id=F("candidate__target__benchmark_id"))
    if benchmark_id is not None:
        labels = labels.filter(candidate__target__benchmark_id=benchmark_id)
    return labels.count()


def valid_labels() -> QuerySet[Label]:
    """Labels that count: imported ones, and collected ones whose assignment is not filtered (docs/design.md §5)."""
    return Label.objects.filter(Q(assignment__isnull=True) | Q(assignment__filtered=False))


def activity_list(*, benchmark: Benchmark, kind: str | None = None) -> QuerySet[Activity]:
    """The benchmark's activity log, newest first, optionally of one kind (an unknown kind is a ValueError)."""
    entries = Activity.objects.filter(benchmark=benchmark)
    if kind:
        if kind not in ActivityKind.values:
            raise ValueError(f"unknown activity kind {kind!r}; known: {', '.join(ActivityKind.values)}")
        entries = entries.filter(kind=kind)
    return entries.order_by("-created_at", "-id")


def benchmark_simulated(benchmark: Benchmark) -> bool:
    """Whether a simulated crowd (``simulate_crowd``) gave any of the benchmark's labels: its exports and
    dataset card say so, and report no pay from simulated times."""
    extra = benchmark.extra if isinstance(benchmark.extra, dict) else {}
    return bool(extra.get("simulated"))
