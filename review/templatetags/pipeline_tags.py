"""The pipeline's section of the researcher's benchmark page (``{% benchmark_pipeline benchmark %}``), the
pipeline page's target rows (``{% target_rows page %}``) and the filters of the review room's pages."""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from typing import Any

from django import template
from django.conf import settings
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator
from django.utils.translation import pgettext

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
    Each text is escaped and each number shown as ``{{ value }}`` shows it (``_number``)."""
    # The target's link as one reverse() gives it, the id put in for each row.
    link = reverse("target-detail", args=[_LINK_ID]).split(str(_LINK_ID))
    # What ``truncatechars`` ends a cut text with, in the language's words, looked up once.
    ellipsis = pgettext("String to return when truncating text", "%(truncated_text)s…")
    # Whether numbers separate thousands, read once for the table's cells rather than once a cell.
    number = _number if settings.USE_THOUSAND_SEPARATOR else _digits
    # The rows as shown before, by what each shows: after a submit only its targets' rows are built
    # again. Kept apart for each link, ellipsis and way of showing numbers.
    shown = _ROWS_SHOWN.setdefault((tuple(link), ellipsis, number), {})
    rows = []
    for target in targets:
        key = (
            target.target_id,
            target.word,
            target.pos,
            target.context,
            target.stage,
            target.stage_name,
            target.candidates,
            tuple(target.counts.values()),
            tuple([(step.collected, step.needed) for step in target.steps]),
            target.open_slots,
        )
        row = shown.get(key)
        if row is None:
            if len(shown) >= settings.PIPELINE_ROWS_KEPT:
                shown.clear()
            row = shown[key] = _target_row(target, link, ellipsis, number)
        rows.append(row)
    return mark_safe("\n".join(rows))  # escaped by _target_row


# An id no target has, replaced by each row's own in the link reverse() gives for it.
_LINK_ID = 9876543210123
# The context shown of each target, in characters (``truncatechars``).
CONTEXT_CHARACTERS = 90


def _target_row(target: TargetProgress, link: list[str], ellipsis: str, number: Callable[[Any], str]) -> str:
    """One row, every text in it escaped."""
    href = _escaped(str(target.target_id).join(link))
    pos = f"{_escaped(target.pos)} · " if target.pos else ""
    context = _context_shown(target.context, ellipsis)
    badge = "badge ok" if target.stage == "done" else "badge"
    numbers = [target.candidates, *target.counts.values()]
    return (
        f'<tr><td><a href="{href}"><strong>{_escaped(target.word)}</strong></a> '
        f'<span class="muted">{pos}target {target.target_id}</span></td>'
        f'<td class="muted">{context}</td>'
        f'<td><span class="{badge}">{_escaped(target.stage_name)}</span></td>'
        + "".join(f'<td class="num">{number(value)}</td>' for value in numbers)
        + "".join(_step_cell(step, number) for step in target.steps)
        + f'<td class="num">{number(target.open_slots)}</td></tr>'
    )


# Rows as shown (``target_rows``), by the link, the ellipsis and the way of showing numbers, then by
# what the row shows; at most ``PIPELINE_ROWS_KEPT`` of each.
_ROWS_SHOWN: dict[tuple[Any, ...], dict[tuple[Any, ...], str]] = {}
# Contexts as shown (``_context_shown``), by (context, the language's ellipsis).
_CONTEXTS_SHOWN: dict[tuple[str, str], str] = {}


def _escaped(text: str) -> str:
    """``escape`` of a text, as Django escapes it (``html.escape``), without its check of each
    argument for a lazy text: a table of 200 rows escapes a thousand texts."""
    return html.escape(text)


def _context_shown(context: str, ellipsis: str) -> str:
    """A target's context cut as ``truncatechars`` cuts it, escaped: the same contexts are shown
    again on every render of the table (after every submit while a crowd works), and cutting them
    was a third of the table's time. At most ``PIPELINE_CONTEXTS_KEPT`` are kept in the process."""
    key = (context, ellipsis)
    shown = _CONTEXTS_SHOWN.get(key)
    if shown is None:
        if len(_CONTEXTS_SHOWN) >= settings.PIPELINE_CONTEXTS_KEPT:
            _CONTEXTS_SHOWN.clear()
        shown = _CONTEXTS_SHOWN[key] = str(escape(Truncator(context).chars(CONTEXT_CHARACTERS, truncate=ellipsis)))
    return shown


def _digits(value: Any) -> str:
    """``_number`` where thousands are not separated."""
    if type(value) is int:
        return str(value)
    return escape(localize(value))


def _number(value: Any) -> str:
    """``value`` as ``{{ value }}`` shows it, escaped: a whole number is its digits unless thousands
    are separated (what ``localize`` answers then, without looking up the language for each cell)."""
    if type(value) is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)
    return escape(localize(value))


def _step_cell(step: TargetStepProgress, number: Callable[[Any], str]) -> str:
    if step.needed is None:
        return '<td class="num" style="white-space: nowrap"><span class="muted">\u2013</span></td>'  # a dash
    return f'<td class="num" style="white-space: nowrap">{number(step.collected)} / {number(step.needed)}</td>'
