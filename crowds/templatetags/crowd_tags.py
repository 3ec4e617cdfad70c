"""Template tags for crowd batches: the paid crowds' section of the benchmark page."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.models import Benchmark
from crowds import selectors as crowd_selectors

register = template.Library()


@register.inclusion_tag("crowds/_benchmark_crowd.html")
def benchmark_crowd_batches(benchmark: Benchmark) -> dict[str, Any]:
    """The benchmark's batches on paid crowds with their state there; renders nothing when there are none."""
    batches = list(crowd_selectors.benchmark_crowd_batches(benchmark=benchmark)[:10])
    return {
        "benchmark": benchmark,
        "rows": [(batch, crowd_selectors.batch_crowd_status(batch=batch)) for batch in batches],
    }
