from typing import Any

from django import template

from annotation.models import Benchmark

register = template.Library()


@register.inclusion_tag("annotation/_benchmark_import.html")
def benchmark_import_section(benchmark: Benchmark) -> dict[str, Any]:
    """The benchmark page's data section: where imports start."""
    return {"benchmark": benchmark}
