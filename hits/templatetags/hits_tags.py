"""Template tags of the hits app: the batches section of the benchmark page (with the link to the
annotators' flags), durations, lists in words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import template
from django.core.signals import setting_changed
from django.db.models import QuerySet
from django.dispatch import receiver
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.safestring import SafeString

from annotation.models import Benchmark
from crowdlex.rows import rows
from crowdlex.statements import shaped_objects
from hits import selectors
from hits.models import Batch
from hits.qualification.selectors import offers_test
from hits.rows import batch_rows as built_batch_rows
from hits.rows import duration
from schemes import get_scheme
from schemes.base import Choice

register = template.Library()

BATCHES_ON_BENCHMARK_PAGE = 10


def _latest_batches(benchmark_id: int) -> QuerySet[Batch]:
    return selectors.batch_list().filter(benchmark_id=benchmark_id)[: BATCHES_ON_BENCHMARK_PAGE + 1]


def batch_table(benchmark: Benchmark) -> dict[str, Any]:
    """The latest batches of a benchmark with their progress and throughput: what the batches'
    table (hits/_batch_table.html) shows, on the benchmark page and in its live poll's
    ``?part=batches``, which reads nothing else."""
    # Built by the ORM once per process (``crowdlex.statements.shaped_objects``): the benchmark page
    # reads them after every change.
    batches = shaped_objects(_latest_batches, benchmark.pk)
    shown = batches[:BATCHES_ON_BENCHMARK_PAGE]
    progress = selectors.batches_progress(batches=shown)
    throughput = selectors.batches_throughput(batches=shown, progress=progress)
    return {
        "rows": [(batch, progress[batch.pk], throughput[batch.pk]) for batch in shown],
        "more": len(batches) > BATCHES_ON_BENCHMARK_PAGE,
    }


@register.inclusion_tag("hits/_benchmark_batches.html")
def benchmark_batches(benchmark: Benchmark) -> dict[str, Any]:
    """The latest batches of a benchmark with their progress, for the benchmark page, and the links
    below their table (the annotators' flags, the qualification test, the assignments)."""
    return {
        **batch_table(benchmark),
        "benchmark": benchmark,
        "flag_count": selectors.benchmark_flag_count(benchmark=benchmark),
        "assigned": get_scheme(benchmark).assigned or selectors.benchmark_has_reservations(benchmark=benchmark),
        "qualification": offers_test(benchmark),
    }


# A route of one id, as reversed for a marker id and cut around it (``id_url``), by route, script prefix
# and URL configuration.
_ID_URLS: dict[tuple[str, str, Any], tuple[str, str]] = {}
_MARKER = "918273645"


@register.simple_tag
def id_url(route: str, pk: Any) -> str:
    """``{% url route pk %}`` for a route of one whole-number id, its pattern reversed once per
    process, script prefix and URL configuration rather than at every render: a batch's page links
    to a dozen routes of its id. Anything but a whole number is reversed as ``{% url %}`` does."""
    if type(pk) is not int or pk < 0:
        return reverse(route, args=[pk])
    key = (route, get_script_prefix(), get_urlconf())
    parts = _ID_URLS.get(key)
    if parts is None:
        prefix, suffix = reverse(route, args=[int(_MARKER)]).rsplit(_MARKER, 1)
        parts = _ID_URLS[key] = (prefix, suffix)
    return f"{parts[0]}{pk}{parts[1]}"


@receiver(setting_changed)
def _forget_urls(**kwargs: Any) -> None:
    """A test's change of settings (its URL configuration) makes every kept pattern stale."""
    _ID_URLS.clear()


@register.simple_tag
def hour_cells(counts: Sequence[int]) -> SafeString:
    """The cells of a batch's work handed in per hour (its page's sparkline), one format for all
    of them (``crowdlex.rows``) rather than a template loop."""
    return rows('<td class="num">{}</td>', [(count,) for count in counts])


@register.simple_tag
def batch_rows(rows: Sequence[tuple[Any, Any, Any]]) -> SafeString:
    """The body of the batches' table (hits/_batch_table.html), built by ``hits.rows.batch_rows``."""
    return built_batch_rows(rows)


@register.filter
def in_words(words: Sequence[str]) -> str:
    """A list as prose: "A", "A and B", "A, B and C"."""
    words = [str(word) for word in words]
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


register.filter("duration", duration)


@register.filter
def kind_label(kind: str, labels: dict[str, str]) -> str:
    """A HIT item's kind in the words of its scheme (``AnnotationScheme.item_kinds``)."""
    return labels.get(kind, kind)


# The badge of an answer by its place among the scheme's choices: the first reads as yes, the second as no.
_ANSWER_TONES = (" ok", " bad")


@register.filter
def answer_tone(value: str, choices: Sequence[Choice]) -> str:
    """The badge class of an answer among its scheme's choices (``schemes.base.Page.choices``)."""
    for choice, tone in zip(choices, _ANSWER_TONES, strict=False):
        if choice.value == value:
            return tone
    return ""


@register.inclusion_tag("hits/_budget.html")
def benchmark_budget(benchmark: Benchmark) -> dict[str, Any]:
    """The benchmark's budget cap, spent, committed and remaining, with its burn-down (docs/design.md §16)."""
    from hits.budget import budget_status_shown

    return {"benchmark": benchmark, "budget": budget_status_shown(benchmark=benchmark), "link": True}
