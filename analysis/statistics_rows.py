# ruff: noqa: E501, RUF002, RUF003 (the formats are the templates' lines as they are, dashes and quotation marks included)
"""The statistics page's numbers to so many decimal places (the template filter ``decimals``), and its
tables shown after each submit built in Python rather than by the template engine (docs/design.md §7,
"Rendered fragments"): every value shown as ``{{ }}`` shows it (``shown``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.template.defaultfilters import floatformat
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.formats import localize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from annotation.models import Benchmark

# What ``default:"–"`` shows for a number the page has not.
DASH = "\u2013"

# Numbers as ``decimals`` showed them, by (type, value, places, language, thousands separated).
_DECIMALS: dict[tuple[Any, ...], str] = {}


def decimals(value: Any, places: int) -> str:
    """``value|floatformat:places``, remembered in the process: a statistics page shows a few hundred
    numbers, most of them the same after a submit as before, and ``floatformat`` works each out
    anew through ``Decimal`` and the language's formats (docs/design.md §7, "Incremental figures").
    The answer depends on the value (and its type), the places, the language and whether thousands
    are separated; at most ``STATISTICS_NUMBERS_KEPT`` are kept."""
    try:
        key = (type(value), value, places, get_language(), settings.USE_THOUSAND_SEPARATOR)
        shown = _DECIMALS.get(key)
    except TypeError:  # a value that is no key (unhashable): worked out each time
        return floatformat(value, places)
    if shown is None:
        if len(_DECIMALS) >= settings.STATISTICS_NUMBERS_KEPT:
            _DECIMALS.clear()
        shown = _DECIMALS[key] = floatformat(value, places)
    return shown


# --- the statistics page's tables after a submit (docs/design.md §7, "Rendered fragments") ---------
#
# Built as ``analysis/_source_yield.html`` and ``analysis/_interaction.html`` render them (those
# templates stay the reference, and the pages of the other schemes include them), every value shown
# as ``{{ }}`` shows it (``shown``): the first reader after each submit renders them again.


def shown(value: Any) -> str:
    """``value`` as ``{{ value }}`` shows it: localised, then escaped. A number as shown is remembered
    with those of ``decimals`` (by its type, value, language and whether thousands are separated)."""
    kind = type(value)
    if kind is SafeString:  # HTML as it is (a number as ``decimals`` showed it, a plot): shown as it is
        return value  # type: ignore[no-any-return]
    if kind is not int and kind is not float:
        return str(conditional_escape(localize(value)))
    key = (kind, value, None, get_language(), settings.USE_THOUSAND_SEPARATOR)
    found = _DECIMALS.get(key)
    if found is None:
        if len(_DECIMALS) >= settings.STATISTICS_NUMBERS_KEPT:
            _DECIMALS.clear()
        found = _DECIMALS[key] = str(conditional_escape(localize(value)))
    return found


# A benchmark's name in a route reversed once, split around it (a slug, which reversing leaves as
# it is); by the route, its other arguments (constants of these tables), the script prefix and the
# request's URL configuration.
_NAME_MARKER = "benchmark-name-marker-0"
_NAMED: dict[tuple[Any, ...], tuple[str, str]] = {}


def benchmark_url(route: str, name: str, *others: str) -> str:
    """``reverse(route, args=[name, *others])`` for a benchmark's ``name``, reversed once a route."""
    key = (route, others, get_script_prefix(), get_urlconf())
    parts = _NAMED.get(key)
    if parts is None:
        before, after = reverse(route, args=[_NAME_MARKER, *others]).split(_NAME_MARKER, 1)
        parts = _NAMED[key] = (before, after)
    return f"{parts[0]}{name}{parts[1]}"


def decimals_or_dash(value: Any, places: int) -> str:
    """``{{ value|decimals:places|default:"–" }}``."""
    return shown(decimals(value, places) or DASH)


_SOURCE_YIELD = """
<section class="card" aria-labelledby="source-yield-heading">
  <h2 id="source-yield-heading">Which candidate source pays off</h2>
  <p class="muted">Per source of candidates (a candidate that several sources proposed counts for each): how many it
    contributed and how many no other source proposed, the valid labels spent on them, and the share of its judged
    candidates that are {} and {}.
    {}
    <a href="{}">JSON</a></p>
  <div class="table-scroll" role="region" aria-label="Candidate sources, table" tabindex="0"><table>
    <thead><tr><th>source</th><th class="num">candidates</th><th class="num">only from it</th><th class="num">judged</th>
      <th class="num">labels</th><th class="num">acceptable</th><th class="num">conceivable</th>
      <th class="num">cost</th><th class="num">per acceptable</th></tr></thead>
    <tbody>
      {}
    </tbody>
  </table></div>
</section>
"""
_SOURCE_YIELD_ROW = """
      <tr><td><code>{}</code></td><td class="num">{}</td>
        <td class="num">{}</td><td class="num">{}</td>
        <td class="num">{}</td>
        <td class="num">{}{}</td>
        <td class="num">{}{}</td>
        <td class="num">{}</td>
        <td class="num">{}</td></tr>
      """
_NO_SOURCE = """
      <tr><td colspan="9" class="muted">No candidate yet.</td></tr>
      """
_INTERACTION = """
<section class="card" id="interaction">
  <h2>How the work was done</h2>
  <p class="muted">Of {} submitted assignments that count, {} came with the page's telemetry (timings and counts, never text). Each signal as one assignment shows it; workers are flagged only when it is a habit (<a href="{}">flagged workers</a>).</p>
  <div class="table-scroll" role="region" aria-label="How the work was done" tabindex="0"><table>
    <thead><tr><th>signal</th><th class="num">assignments</th><th class="num">share</th></tr></thead>
    <tbody>
      {}
    </tbody>
  </table></div>
</section>
"""
_INTERACTION_ROW = """
      <tr><td>{}</td><td class="num">{}</td><td class="num">{}</td></tr>
      """


def _share(value: Any) -> str:
    return "" if value is None else f" ({shown(decimals(value, 3))})"


def _source_yield_row(row: Mapping[str, Any]) -> str:
    cost, per_acceptable = row["cost"], row["cost_per_acceptable"]
    per = f"${shown(per_acceptable)}" if per_acceptable is not None else ("no price" if cost is None else DASH)
    return _SOURCE_YIELD_ROW.format(
        shown(row["source"]),
        shown(row["candidates"]),
        shown(row["only_this_source"]),
        shown(row["judged"]),
        shown(row["labels"]),
        shown(row["acceptable"]),
        _share(row["share_acceptable"]),
        shown(row["conceivable"]),
        _share(row["share_conceivable"]),
        "no price" if cost is None else f"${shown(cost)}",
        per,
    )


def source_yield_and_interaction(
    benchmark: Benchmark, source_yield: Mapping[str, Any] | None, interaction: Mapping[str, Any]
) -> SafeString:
    """The statistics page's table of which candidate source pays off and its table of how the work
    was done, one after the other, as ``{% include %}`` of their templates shows them."""
    part = "\n\n"
    if source_yield:
        price = source_yield["price_per_label"]
        sources = source_yield["sources"]
        part += _SOURCE_YIELD.format(
            shown(source_yield["acceptable"]),
            shown(source_yield["conceivable"]),
            f"Cost at ${shown(price)} a label (the rewards paid for\n    the work collected here over its labels; crowd "
            "fees not included)."
            if price
            else "No price: no work collected here\n    has given a label yet.",
            benchmark_url("api-benchmark-source-yield", benchmark.name),
            "".join(_source_yield_row(row) for row in sources) if sources else _NO_SOURCE,
        )
    part += "\n\n\n"
    part += _INTERACTION.format(
        shown(interaction["assignments"]),
        shown(interaction["with_telemetry"]),
        benchmark_url("pipeline-workers", benchmark.name),
        "".join(
            _INTERACTION_ROW.format(shown(reason), shown(row["assignments"]), decimals_or_dash(row["share"], 3))
            for reason, row in interaction["signals"].items()
        ),
    )
    return mark_safe(part + "\n")


_PLOT_DOWNLOADS = """<p class="plot-downloads muted">Download this plot:
  <a href="{}" download>SVG</a> ·
  <a href="{}" download>PNG</a>
  · from a script: <code>GET /api/benchmarks/{}/plots/{}.png</code> or
  <code>manage.py benchmark_plot {} {} --output {}.png</code></p>
"""


def plot_downloads(benchmark: Benchmark, plot: str) -> str:
    """``analysis/_plot_downloads.html`` of ``plot``."""
    name, shown_plot = shown(benchmark.name), shown(plot)
    return _PLOT_DOWNLOADS.format(
        benchmark_url("analysis-plot", benchmark.name, plot, "svg"),
        benchmark_url("analysis-plot", benchmark.name, plot, "png"),
        name,
        shown_plot,
        name,
        shown_plot,
        shown_plot,
    )
