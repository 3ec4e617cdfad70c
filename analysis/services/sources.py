"""Which candidate source pays off (docs/design.md §14): the per-source table of the statistics
page, its API and the ``stats`` export, for every scheme whose figures say what its categories are
(``SchemeFigures.source_categories``; the maths is ``analysis.source_yield``).

The candidates' valid labels are counted per candidate, and the candidates grouped by each source
of their list and by those counts, in one query: the JSON list of sources is unnested in SQL
(``crowdlex.dialect.json_list_elements``), so the rows that come back
are a few per source whatever the size of the benchmark.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Count, Q

from analysis.figures import scheme_figures
from analysis.selectors import benchmark_candidates
from analysis.source_yield import CountProfile, source_yield
from annotation.models import Benchmark, Label, LabelValue
from crowdlex.dialect import dialect


def _valid(value: str) -> Q:
    return Q(labels__value=value) & (Q(labels__assignment__isnull=True) | Q(labels__assignment__filtered=False))


def source_profiles(*, benchmark: Benchmark, split: str | None = None) -> list[CountProfile]:
    """(source, alone, accepts, rejects, abstains, candidates) of the benchmark's candidates (those
    a researcher excluded left out), grouped in the database; a candidate without a source under ""."""
    per_candidate = (
        benchmark_candidates(benchmark=benchmark, split=split)
        .order_by()
        .values("id")
        .annotate(
            accepts=Count("labels", filter=_valid(LabelValue.ACCEPT)),
            rejects=Count("labels", filter=_valid(LabelValue.REJECT)),
            abstains=Count("labels", filter=_valid(LabelValue.ABSTAIN)),
        )
        .values("id", "sources", "accepts", "rejects", "abstains")
    )
    inner, params = per_candidate.query.sql_with_params()
    sources, source, length = dialect().json_list_elements("c.sources", empty_as='[""]')
    alone = f"{length} <= 1"
    sql = (
        f"SELECT {source}, {alone}, c.accepts, c.rejects, c.abstains, COUNT(*) "
        f"FROM ({inner}) AS c {sources} GROUP BY 1, 2, 3, 4, 5"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [
            CountProfile(str(found), bool(single), int(accepts), int(rejects), int(abstains), int(count))
            for found, single, accepts, rejects, abstains, count in cursor.fetchall()
        ]


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
