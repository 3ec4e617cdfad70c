"""The pipeline's section of the researcher's benchmark page (``{% benchmark_pipeline benchmark %}``), the
pipeline page's target rows (``{% target_rows page %}``) and the filters of the review room's pages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template
from django.conf import settings
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from annotation.models import Benchmark
from review.selectors import TargetProgress, TargetStepProgress, active_flag_counts, pipeline_progress
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


@register.simple_tag
def target_rows(targets: Iterable[TargetProgress]) -> SafeString:
    """The rows of the pipeline page's target table: ``{% target_rows page %}``.

    Built here rather than by a template loop: a page shows 200 targets of a dozen cells each, and
    the loop's per-cell lookups cost most of the page whenever its fragment is rendered again,
    which is after every submit while a crowd works (docs/design.md §7, "Rendered fragments").
    Each value is escaped (``format_html``) and each number localised as ``{{ value }}`` does."""
    # The target's link as one reverse() gives it, the id put in for each row.
    link = reverse("target-detail", args=[_LINK_ID]).split(str(_LINK_ID))
    return mark_safe("\n".join(_target_row(target, link) for target in targets))  # each part escaped below


# An id no target has, replaced by each row's own in the link reverse() gives for it.
_LINK_ID = 9876543210123


def _target_row(target: TargetProgress, link: list[str]) -> str:
    pos = format_html("{} · ", target.pos) if target.pos else ""
    cells = [
        format_html(
            '<td><a href="{}"><strong>{}</strong></a> <span class="muted">{}target {}</span></td>',
            str(target.target_id).join(link),
            target.word,
            pos,
            target.target_id,
        ),
        format_html('<td class="muted">{}</td>', Truncator(target.context).chars(90)),
        format_html(
            '<td><span class="badge{}">{}</span></td>', " ok" if target.stage == "done" else "", target.stage_name
        ),
        _number_cell(target.candidates),
        *(_number_cell(count) for count in target.counts.values()),
        *(_step_cell(step) for step in target.steps),
        _number_cell(target.open_slots),
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _number_cell(value: Any) -> str:
    return format_html('<td class="num">{}</td>', _number(value))


def _number(value: Any) -> str:
    """``value`` as ``{{ value }}`` shows it: a whole number is its digits unless thousands are
    separated (what ``localize`` answers then, without looking up the language for each cell)."""
    if type(value) is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)
    return str(localize(value))


def _step_cell(step: TargetStepProgress) -> str:
    if step.needed is None:
        return '<td class="num" style="white-space: nowrap"><span class="muted">\u2013</span></td>'  # a dash
    return format_html(
        '<td class="num" style="white-space: nowrap">{} / {}</td>', _number(step.collected), _number(step.needed)
    )
