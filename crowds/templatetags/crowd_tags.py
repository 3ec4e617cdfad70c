"""Template tags for crowd batches: the paid crowds' section of the benchmark page."""

from __future__ import annotations

from typing import Any

from django import template
from django.db.models import QuerySet

from annotation.models import Benchmark
from crowdlex.statements import shaped_objects
from crowds import selectors as crowd_selectors
from crowds.interface import remote_backend_names
from hits.models import Batch

register = template.Library()


def _crowd_batches(benchmark_id: int) -> QuerySet[Batch]:
    return crowd_selectors.benchmark_crowd_batches(benchmark=benchmark_id)[:10]  # type: ignore[arg-type]


@register.inclusion_tag("crowds/_benchmark_crowd.html")
def benchmark_crowd_batches(benchmark: Benchmark) -> dict[str, Any]:
    """The benchmark's batches on paid crowds with their state there; renders nothing when there are none."""
    # Built by the ORM once per process (``crowdlex.statements.shaped_objects``), keyed by the crowds
    # that pay (the batches on them are listed).
    batches = shaped_objects(_crowd_batches, benchmark.pk, key=tuple(remote_backend_names()))
    return {
        "benchmark": benchmark,
        "rows": [(batch, crowd_selectors.batch_crowd_status(batch=batch)) for batch in batches],
    }
