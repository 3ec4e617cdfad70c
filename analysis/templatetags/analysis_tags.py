"""The benchmark page's analysis section (BRIEF: an inclusion tag per app)."""

from typing import Any

from django import template
from django.urls import reverse

from analysis.figures import scheme_figures
from analysis.forms import TargetSearchForm
from analysis.models import ExportJob
from annotation.models import Benchmark

register = template.Library()


@register.inclusion_tag("analysis/_benchmark_analysis.html")
def benchmark_analysis(benchmark: Benchmark) -> dict[str, Any]:
    """Links to the statistics and exports pages, and the latest exports (cheap: no statistics computed)."""
    return {
        "benchmark": benchmark,
        "pages": [(title, reverse(name, args=[benchmark.name])) for title, name in scheme_figures(benchmark).pages],
        "jobs": ExportJob.objects.filter(benchmark=benchmark)[:3],
        "reannotation_origin": (benchmark.extra.get("analysis") or {}).get("reannotation_origin"),
    }


@register.inclusion_tag("analysis/_target_search.html")
def target_search(benchmark: Benchmark) -> dict[str, Any]:
    """The target search form, empty, for the benchmark and pipeline pages (it submits to the targets page)."""
    return {"benchmark": benchmark, "form": TargetSearchForm(benchmark=benchmark)}
