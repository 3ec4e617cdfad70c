# ruff: noqa: E501, RUF001 (the formats are the template's lines as they are, its quotation mark included)
"""The SWORDS statistics page from its links to its heading of agreement, built in Python as its
template showed it (docs/design.md §7, "Table rows"): the counts, Table 2, the score plot and the
tables by source and by part of speech, each value shown as the template's filters showed it
(``analysis.statistics_rows``). The page's template names it through the scheme's figures
(``SchemeFigures.page_tables``, the ``statistics_tables`` tag)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from analysis.statistics_rows import benchmark_url, decimals, plot_downloads, shown
from annotation.models import Benchmark

_TABLES = """
<p class="muted"><a href="{}">{}</a> ›
  statistics · <a href="{}">exports</a></p>
<h1>Statistics of {}</h1>
<p class="muted">Over valid labels only (imported ones and those of assignments that passed spam filtering).
  A candidate's score is its share of accepts; abstain counts as not-accept.
  Acceptable: score above {}; conceivable: above {};
  inconceivable: the rest.{}</p>

<section class="grid" aria-label="Counts">
  <div class="card"><div class="muted">Contexts</div><div class="stat">{}</div></div>
  <div class="card"><div class="muted">Targets</div><div class="stat">{}</div></div>
  <div class="card"><div class="muted">Candidates</div><div class="stat">{}</div></div>
  <div class="card"><div class="muted">Labels</div><div class="stat">{}</div>
    <div class="muted">{}</div></div>
</section>

<section class="card">
  <h2>Per target (SWORDS Table 2)</h2>
  <div class="table-scroll" role="region" aria-label="Per target (SWORDS Table 2)" tabindex="0"><table>
    <thead><tr><th></th><th class="num">mean over all targets</th><th class="num">mean over targets having it</th><th class="num">targets having it</th></tr></thead>
    <tbody>
      {}
    </tbody>
  </table></div>
  {}
</section>

<section class="card">
  <h2>By source (SWORDS Fig. 1)</h2>
  <div class="table-scroll" role="region" aria-label="Score distribution by source, plot" tabindex="0">{}</div>
  {}
  <div class="table-scroll" role="region" aria-label="By source (SWORDS Fig. 1)" tabindex="0"><table>
    <thead><tr><th>source</th><th class="num">candidates</th><th class="num">share</th><th class="num">mean score</th><th class="num">inconceivable</th><th class="num">conceivable</th><th class="num">acceptable</th></tr></thead>
    <tbody>
      {}
    </tbody>
  </table></div>
</section>

<section class="card">
  <h2>By part of speech</h2>
  <div class="table-scroll" role="region" aria-label="By part of speech" tabindex="0"><table>
    <thead><tr><th>part of speech</th><th class="num">targets</th><th class="num">candidates</th><th class="num">labels</th>
      <th class="num">candidates / target</th><th class="num">conceivable / target</th><th class="num">acceptable / target</th></tr></thead>
    <tbody>
      {}
    </tbody>
  </table></div>
</section>

<section class="card">
  <h2>Agreement</h2>
  """
_PER_TARGET_ROW = """
      <tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>
      """
_BY_SOURCE_ROW = """
      <tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>
        <td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>
      """
_BY_POS_ROW = """
      <tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>
        <td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>
      """


def statistics_tables(context: Mapping[str, Any]) -> SafeString:
    """The SWORDS statistics page from its links to its heading of agreement: the counts, Table 2, the
    score plot and the tables by source and by part of speech, as its template showed them
    (``context``: the page's)."""
    benchmark: Benchmark = context["benchmark"]
    statistics = context["statistics"]
    thresholds = statistics["thresholds"]
    origin = context.get("reannotation_origin")
    unscored = statistics["unscored_candidates"]
    abstain = statistics["abstain_share"]
    return mark_safe(
        _TABLES.format(
            benchmark_url("benchmark-detail", benchmark.name),
            shown(benchmark.name),
            benchmark_url("analysis-exports", benchmark.name),
            shown(benchmark.name),
            shown(thresholds["acceptable"]),
            shown(thresholds["conceivable"]),
            f" The re-annotation <code>{shown(origin)}</code> is left out." if origin else "",
            shown(statistics["contexts"]),
            shown(statistics["targets"]),
            shown(statistics["candidates"]),
            shown(statistics["labels"]),
            "" if abstain is None else f"abstain share {shown(decimals(abstain, 4))}",
            "".join(
                _PER_TARGET_ROW.format(
                    shown(row["name"]),
                    shown(decimals(row["all"], 2)),
                    shown(decimals(row["nonempty"], 2)),
                    shown(row["targets"]),
                )
                for row in context["per_target"]
            ),
            f'<p class="muted">{shown(unscored)} candidates have no valid label yet and are in no category.</p>'
            if unscored
            else "",
            shown(context["score_chart"]),
            plot_downloads(benchmark, "scores"),
            "".join(
                _BY_SOURCE_ROW.format(
                    shown(group),
                    shown(row["candidates"]),
                    shown(decimals(row["share"], 3)),
                    shown(decimals(row["mean_score"], 3)),
                    shown(row["inconceivable"]),
                    shown(row["conceivable"]),
                    shown(row["acceptable"]),
                )
                for group, row in context["by_source"]
            ),
            "".join(
                _BY_POS_ROW.format(
                    shown(pos),
                    shown(row["targets"]),
                    shown(row["candidates"]),
                    shown(row["labels"]),
                    shown(decimals(row["per_target"]["candidates"], 2)),
                    shown(decimals(row["per_target"]["conceivable"], 2)),
                    shown(decimals(row["per_target"]["acceptable"], 2)),
                )
                for pos, row in context["by_pos"]
            ),
        )
    )
