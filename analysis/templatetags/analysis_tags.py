"""The benchmark page's analysis section (an inclusion tag per app), and the table bodies built in
Python that need the page's context (docs/design.md §7, "Table rows")."""

from typing import Any

from django import template
from django.conf import settings
from django.db.models import QuerySet
from django.template import Context
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from analysis import rows, statistics_rows
from analysis.adjudication.selectors import ItemPage
from analysis.evaluation import offers_evaluation
from analysis.exports import CANDIDATES_CSV, export_format
from analysis.figures import scheme_figures
from analysis.forms import TargetSearchForm
from analysis.models import ExportJob
from analysis.targets import TargetPage
from annotation.models import Benchmark
from crowdlex.statements import shaped_objects

register = template.Library()

# The statistics page's numbers to so many decimal places (``analysis.rows.decimals``).
register.filter("decimals", statistics_rows.decimals, is_safe=True)


@register.simple_tag
def statistics_sources(
    benchmark: Benchmark, source_yield: dict[str, Any] | None, interaction: dict[str, Any]
) -> SafeString:
    """The statistics page's source yield and interactions, as their templates show them
    (``analysis.statistics_rows``)."""
    return statistics_rows.source_yield_and_interaction(benchmark, source_yield, interaction)


@register.simple_tag(takes_context=True)
def statistics_tables(context: Context) -> SafeString:
    """The statistics page's tables as its scheme builds them from the page's context
    (``SchemeFigures.page_tables``; the SWORDS page's counts, Table 2 and tables by source and part
    of speech)."""
    build = scheme_figures(context["benchmark"]).page_tables
    if build is None:
        raise LookupError(f"the {context['benchmark'].scheme!r} scheme builds no statistics tables")
    return build(context.flatten())  # type: ignore[arg-type]


@register.inclusion_tag("analysis/_benchmark_analysis.html")
def benchmark_analysis(benchmark: Benchmark) -> dict[str, Any]:
    """Links to the statistics and exports pages, the pages the scheme declares (its evaluation,
    its other pages), and the latest exports (cheap: no statistics computed)."""
    figures = scheme_figures(benchmark)
    candidates = export_format(CANDIDATES_CSV)
    return {
        "benchmark": benchmark,
        "pages": [(title, reverse(name, args=[benchmark.name])) for title, name in figures.pages],
        "evaluation": offers_evaluation(benchmark),
        "candidates_csv": candidates is not None and candidates.fits(benchmark),
        # Built by the ORM once per process (``crowdlex.statements.shaped_objects``): the benchmark
        # page shows them after every change.
        "jobs": shaped_objects(_latest_exports, benchmark.pk),
        "reannotation_origin": (benchmark.extra.get("analysis") or {}).get("reannotation_origin"),
    }


# Export jobs the benchmark page shows; the exports page has the latest 30.
LATEST_EXPORTS = 3


def _latest_exports(benchmark_id: int) -> QuerySet[ExportJob]:
    return ExportJob.objects.filter(benchmark_id=benchmark_id)[:LATEST_EXPORTS]


# The empty target search form as rendered, by what it shows: the benchmark's name (its action),
# its scheme (the stages' names), the language and the script prefix (docs/design.md §7, "Kept widgets").
_SEARCH_FORMS: dict[tuple[str, str, str, str], SafeString] = {}


@register.simple_tag
def target_search(benchmark: Benchmark) -> SafeString:
    """The target search form, empty, for the benchmark and pipeline pages (it submits to the targets
    page): rendered once per process for what it shows, at most ``TARGET_SEARCH_FORMS_KEPT`` of them."""
    key = (benchmark.name, benchmark.scheme, get_language(), get_script_prefix())
    shown = _SEARCH_FORMS.get(key)
    if shown is None:
        if len(_SEARCH_FORMS) >= settings.TARGET_SEARCH_FORMS_KEPT:
            _SEARCH_FORMS.clear()
        context = {"benchmark": benchmark, "form": TargetSearchForm(benchmark=benchmark)}
        shown = mark_safe(render_to_string("analysis/_target_search.html", context))
        if settings.TARGET_SEARCH_FORMS_KEPT > 0:
            _SEARCH_FORMS[key] = shown
    return shown


@register.simple_tag(takes_context=True)
def side_by_side_rows(context: Context, page: ItemPage, benchmark: Benchmark, reason_max: int) -> SafeString:
    """The adjudication item's table body (``analysis.rows.side_by_side_rows``), its forms holding
    the page's own CSRF token field."""
    csrf_input = CsrfTokenNode().render(context)
    return rows.side_by_side_rows(page, benchmark=benchmark, csrf_input=csrf_input, reason_max=reason_max)


@register.simple_tag(takes_context=True)
def candidate_rows(context: Context, page: TargetPage, benchmark: Benchmark) -> SafeString:
    """The target page's candidates (``analysis.rows.candidate_rows``), each exclusion form holding
    the page's own CSRF token field and coming back to the page."""
    csrf_input = CsrfTokenNode().render(context)
    next_path = context["request"].get_full_path()
    return rows.candidate_rows(page, benchmark=benchmark, csrf_input=csrf_input, next_path=next_path)
