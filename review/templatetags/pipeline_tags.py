"""The pipeline's section of the researcher's benchmark page: ``{% benchmark_pipeline benchmark %}``."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.models import Benchmark
from review.selectors import active_flag_counts, pipeline_progress
from schemes import get_scheme

register = template.Library()


@register.inclusion_tag("review/_pipeline_section.html")
def benchmark_pipeline(benchmark: Benchmark) -> dict[str, Any]:
    """The section of a scheme that moves targets through steps (SWORDS); nothing for one without."""
    if not get_scheme(benchmark).pipeline:
        return {"benchmark": benchmark, "progress": None}
    return {
        "benchmark": benchmark,
        "progress": pipeline_progress(benchmark=benchmark, with_targets=False),
        "flag_counts": active_flag_counts(benchmark=benchmark),
    }


@register.filter
def evidence_items(value: Any) -> list[tuple[str, Any]]:
    """A flag's scalar evidence as (name, value) pairs, for the generic rows of the evidence table."""
    if not isinstance(value, dict):
        return []
    return [(key.replace("_", " "), item) for key, item in value.items() if not isinstance(item, dict | list)]
