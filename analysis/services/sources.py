"""Which candidate source pays off (docs/design.md §14): the per-source table of the statistics
page, its API and the ``stats`` export, for every scheme whose figures say what its categories are
(``SchemeFigures.source_categories``; the maths is ``analysis.source_yield``).

The candidates' valid labels are read from their tallies, one row per candidate, and the candidates
grouped by target, by each source of their list and by those counts; the groups are kept per
target with the rows of Table 2 and filled from the same read (``analysis.services.target_rows``),
so after a submit only the targets it touched are read again, once for both tables.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from decimal import Decimal
from typing import Any

from django.db.models import Count, QuerySet, TextField
from django.db.models.functions import Cast, Coalesce

from analysis.figures import scheme_figures
from analysis.selectors import benchmark_candidates, stream_rows
from analysis.services.target_rows import ProfileKey, ProfileRows, kept_target_rows, source_list
from analysis.source_yield import CountProfile, source_yield
from annotation.models import Benchmark, Label
from crowdlex.statements import shaped_rows


def source_profiles(*, benchmark: Benchmark, split: str | None = None) -> list[CountProfile]:
    """(source, alone, accepts, rejects, abstains, candidates) of the benchmark's candidates (those
    a researcher excluded left out), their valid labels read from their tallies (docs/design.md §7,
    "Tallies"); a candidate without a source under "". Kept per target for the whole benchmark
    (``annotation.changes.benchmark_by_target``): after a submit only the targets it touched are
    grouped again."""
    if split is None:
        # The rows Table 2 keeps too (docs/design.md §7): one read of the candidates fills both.
        # Summed over the targets as the kept rows are brought up to date.
        totals = kept_target_rows(benchmark=benchmark).total.profiles
    else:
        totals = Counter()
        for profiles in _profiles_by_target(benchmark, split).values():
            for key, count in profiles:
                totals[key] += count
    return [CountProfile(*key, count) for key, count in sorted(totals.items())]


def _profiles_by_target(benchmark: Benchmark, split: str) -> dict[int, ProfileRows]:
    """Each target's rows of the per-source table for the targets of ``split``, from one row per
    candidate in one statement; the few distinct lists of sources are each read once."""
    candidates = benchmark_candidates(benchmark=benchmark, split=split)
    rows = candidates.order_by().values_list(
        "target_id",
        Cast("sources", TextField()),
        Coalesce("tally__accepts", 0),
        Coalesce("tally__rejects", 0),
        Coalesce("tally__abstains", 0),
    )
    lists: dict[str | None, tuple[list[str], bool, int]] = {}
    found: dict[int, Counter[ProfileKey]] = defaultdict(Counter)
    for target_id, text, accepts, rejects, abstains in stream_rows(rows):
        read = lists.get(text)
        if read is None:
            read = lists[text] = source_list(text)
        sources, alone, _ = read
        counted = found[target_id]
        for source in sources:
            counted[(source, alone, accepts, rejects, abstains)] += 1
    return {target_id: tuple(sorted(counted.items())) for target_id, counted in found.items()}


def _paid(benchmark_id: int) -> QuerySet[Any]:
    from hits.models import VALID_STATUSES, Assignment, confirmed

    return Assignment.objects.filter(
        confirmed(), hit__batch__benchmark_id=benchmark_id, status__in=VALID_STATUSES, labels__isnull=False
    ).distinct()


def _paid_label_count(benchmark_id: int) -> QuerySet[Label, tuple[int]]:
    labels = Label.objects.filter(assignment__in=_paid(benchmark_id), assignment__filtered=False)
    # Grouped by the benchmark: one row, or none without such labels.
    return labels.values("benchmark_id").annotate(n=Count("pk")).values_list("n").order_by()


def _paid_rows(benchmark_id: int) -> QuerySet[Any, tuple[Decimal, str, int, int]]:
    from hits.models import Assignment

    return (
        Assignment.objects.filter(pk__in=_paid(benchmark_id).values("pk"))
        .values_list("hit__batch__reward", "hit__batch__backend", "hit__assignments_required")
        .annotate(count=Count("id"))
        .order_by()
    )


def price_per_label(*, benchmark: Benchmark) -> Decimal | None:
    """What a label that counts cost here: what the benchmark's confirmed, submitted or approved
    assignments that gave labels cost on their crowds (filtered ones too: they are paid unless the
    researcher rejects them), the reward and the crowd's fees as its one price rule gives them, over
    the valid labels they gave. None when no work collected here gave a valid label (an imported
    benchmark: no price)."""
    from crowds.interface import get_backend
    from crowds.interface.costs import assignments_cost

    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``): the statistics page
    # reads them after every change.
    labels = sum(count for (count,) in shaped_rows(_paid_label_count, benchmark.pk))
    if not labels:
        return None
    rows = shaped_rows(_paid_rows, benchmark.pk)
    cost = sum(
        (
            assignments_cost(reward=reward, count=count, hit_size=size, fees=get_backend(backend).fees)
            for reward, backend, size, count in rows
        ),
        Decimal("0"),
    )
    return cost / labels


def benchmark_source_yield(*, benchmark: Benchmark, split: str | None = None) -> dict[str, Any] | None:
    """The per-source table (JSON-ready), or None for a scheme that declares no categories
    (its candidates are not judged one by one)."""
    categories = scheme_figures(benchmark).source_categories
    if categories is None:
        return None
    price = price_per_label(benchmark=benchmark)
    return {
        "acceptable": categories.acceptable,
        "conceivable": categories.conceivable,
        "price_per_label": None if price is None else str(price.quantize(Decimal("0.0001"))),
        "sources": source_yield(source_profiles(benchmark=benchmark, split=split), categories, price),
    }
