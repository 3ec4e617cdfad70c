from typing import Any

from django import template

from annotation.models import Benchmark
from annotation.selectors import import_list

register = template.Library()


@register.inclusion_tag("annotation/_benchmark_import.html")
def benchmark_import_section(benchmark: Benchmark) -> dict[str, Any]:
    """The benchmark page's data section: where imports start, and the imports so far."""
    return {"benchmark": benchmark, "imports": import_list(benchmark=benchmark)}
