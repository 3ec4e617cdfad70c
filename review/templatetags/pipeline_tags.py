"""The pipeline's section of the researcher's benchmark page: ``{% benchmark_pipeline benchmark %}``."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.models import Benchmark
from review.selectors import active_flag_counts, pipeline_progress
from schemes import get_scheme
from schemes.progress import stage_name

register = template.Library()


@register.inclusion_tag("review/_pipeline_section.html")
def benchmark_pipeline(benchmark: Benchmark) -> dict[str, Any]:
    """The benchmark's progress per step, in its scheme's words, with links to the pipeline pages."""
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


@register.filter
def target_stage(stage: str, benchmark: Benchmark) -> str:
    """A target's stored stage in the words of the benchmark's scheme: ``{{ target.stage|target_stage:benchmark }}``."""
    return stage_name(get_scheme(benchmark).target_stage_names, stage)


@register.filter
def candidate_stage(stage: str, benchmark: Benchmark) -> str:
    """A candidate's stored stage in the words of the benchmark's scheme."""
    return stage_name(get_scheme(benchmark).candidate_stage_names, stage)
