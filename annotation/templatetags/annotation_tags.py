from typing import Any

from django import template
from django.db.models import QuerySet

from annotation.forms import import_format_help
from annotation.llm import model_form_defaults
from annotation.models import Activity, Benchmark
from annotation.selectors import import_list
from crowdlex.statements import shaped_objects

register = template.Library()


@register.inclusion_tag("annotation/_benchmark_import.html")
def benchmark_import_section(benchmark: Benchmark) -> dict[str, Any]:
    """The benchmark page's data section: where imports start, and the imports so far."""
    return {
        "benchmark": benchmark,
        "imports": import_list(benchmark=benchmark),
        "formats": import_format_help(benchmark.scheme),
        "model": model_form_defaults(benchmark),
    }


# Entries of the activity log the benchmark page shows; the activity page has them all.
LATEST_ACTIVITY = 8


@register.inclusion_tag("annotation/_benchmark_activity.html")
def benchmark_activity(benchmark: Benchmark, can_undo: bool = False) -> dict[str, Any]:
    """The benchmark page's latest activity: who did what, when, with what result (``can_undo``: an
    editor's page, with the Undo buttons)."""
    return {
        "benchmark": benchmark,
        "can_undo": can_undo,
        # Built by the ORM once per process (``crowdlex.statements.shaped_objects``): the benchmark
        # page shows them after every change.
        "entries": shaped_objects(_latest_activity, benchmark.pk),
    }


def _latest_activity(benchmark_id: int) -> QuerySet[Activity]:
    # In ``activity_list``'s order: newest first.
    entries = Activity.objects.filter(benchmark_id=benchmark_id).order_by("-created_at", "-id")
    return entries.select_related("actor")[:LATEST_ACTIVITY]
