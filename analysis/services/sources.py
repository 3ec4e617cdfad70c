"""Which candidate source pays off (docs/design.md §14): the per-source table of the statistics
page, its API and the ``stats`` export, for every scheme whose figures say what its categories are
(``SchemeFigures.source_categories``; the maths is ``analysis.source_yield``).

The candidates' valid labels are read from their tallies, and the candidates grouped by target, by
each source of their list and by those counts, in one query: the JSON list of sources is unnested
in SQL (``crowdlex.dialect.json_list_elements``), so the rows that come back are a few per target
and source; the groups are kept per target, so after a submit only its targets are grouped again.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Count
from django.db.models.functions import Coalesce

from analysis.figures import scheme_figures
from analysis.selectors import benchmark_candidates
from analysis.source_yield import CountProfile, source_yield
from annotation.changes import benchmark_by_target
from annotation.models import Benchmark, Label
from crowdlex.dialect import dialect

#: A target's share of the per-source table: ((source, alone, accepts, rejects, abstains), candidates) rows.
ProfileRows = tuple[tuple[tuple[str, bool, int, int, int], int], ...]


def source_profiles(*, benchmark: Benchmark, split: str | None = None) -> list[CountProfile]:
    """(source, alone, accepts, rejects, abstains, candidates) of the benchmark's candidates (those
    a researcher excluded left out), their valid labels read from their tallies (docs/design.md §7,
    "Tallies"); a candidate without a source under "". Kept per target for the whole benchmark
    (``annotation.changes.benchmark_by_target``): after a submit only the targets it touched are
    grouped again."""
    if split is None:
        kept = benchmark_by_target(
            benchmark_id=benchmark.pk,
            name="source-profiles",
            compute=lambda target_ids: _profiles_by_target(benchmark, None, target_ids),
        )
    else:
        kept = _profiles_by_target(benchmark, split, None)
    totals: Counter[tuple[str, bool, int, int, int]] = Counter()
    for rows in kept.values():
        for key, count in rows:
            totals[key] += count
    return [CountProfile(*key, count) for key, count in sorted(totals.items())]


def _profiles_by_target(
    benchmark: Benchmark, split: str | None, target_ids: list[int] | None
) -> dict[int, ProfileRows]:
    """Each target's rows of the per-source table (of ``target_ids``, every target when None), grouped
    in the database in one statement: the JSON list of sources is unnested in SQL
    (``crowdlex.dialect.json_list_elements``), so a few rows per target and source come back."""
    candidates = benchmark_candidates(benchmark=benchmark, split=split)
    if target_ids is not None:
        candidates = candidates.filter(target_id__in=target_ids)
    per_candidate = candidates.order_by().values(
        "id",
        "target_id",
        "sources",
        accepts=Coalesce("tally__accepts", 0),
        rejects=Coalesce("tally__rejects", 0),
        abstains=Coalesce("tally__abstains", 0),
    )
    inner, params = per_candidate.query.sql_with_params()
    sources, source, length = dialect().json_list_elements("c.sources", empty_as='[""]')
    alone = f"{length} <= 1"
    sql = (
        f"SELECT c.target_id, {source}, {alone}, c.accepts, c.rejects, c.abstains, COUNT(*) "
        f"FROM ({inner}) AS c {sources} GROUP BY 1, 2, 3, 4, 5, 6"
    )
    found: dict[int, list[tuple[tuple[str, bool, int, int, int], int]]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for target_id, named, single, accepts, rejects, abstains, count in cursor.fetchall():
            key = (str(named), bool(single), int(accepts), int(rejects), int(abstains))
            found[int(target_id)].append((key, int(count)))
    return {target_id: tuple(sorted(rows)) for target_id, rows in found.items()}


def price_per_label(*, benchmark: Benchmark) -> Decimal | None:
    """What a label that counts cost here: what the benchmark's confirmed, submitted or approved
    assignments that gave labels cost on their crowds (filtered ones too: they are paid unless the
    researcher rejects them), the reward and the crowd's fees as its one price rule gives them, over
    the valid labels they gave. None when no work collected here gave a valid label (an imported
    benchmark: no price)."""
    from crowds.interface import get_backend
    from crowds.interface.costs import assignments_cost
    from hits.models import VALID_STATUSES, Assignment, confirmed

    paid = Assignment.objects.filter(
        confirmed(), hit__batch__benchmark=benchmark, status__in=VALID_STATUSES, labels__isnull=False
    ).distinct()
    labels = Label.objects.filter(assignment__in=paid, assignment__filtered=False).count()
    if not labels:
        return None
    rows = (
        Assignment.objects.filter(pk__in=paid.values("pk"))
        .values_list("hit__batch__reward", "hit__batch__backend", "hit__assignments_required")
        .annotate(count=Count("id"))
        .order_by()
    )
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
