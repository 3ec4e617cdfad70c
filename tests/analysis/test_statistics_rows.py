# ruff: noqa: E501, RUF001 (the reference is the template's lines as they were)
"""The statistics page's tables built in Python (analysis.statistics_rows) show, byte for byte, what
the templates they stand for show (``analysis/_source_yield.html`` and ``analysis/_interaction.html``
included one after the other, as the pages of the other schemes still include them; the SWORDS page's
counts and tables, against the template's lines they replace, kept here), for every kind of value a
cell holds: markup shown as text, a price or none, shares or none, no source at all."""

from __future__ import annotations

from typing import Any

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from analysis.statistics_rows import source_yield_and_interaction
from annotation.models import Benchmark
from schemes.swords.figures.statistics_rows import statistics_tables as swords_statistics_tables

SCRIPT = "<script>alert(1)</script>"


def _row(source: str, **changed: Any) -> dict[str, Any]:
    return {
        "source": source,
        "candidates": 42790,
        "only_this_source": 40532,
        "judged": 42790,
        "labels": 237626,
        "acceptable": 3256,
        "share_acceptable": 0.07609,
        "conceivable": 27997,
        "share_conceivable": 0.6543,
        "cost": None,
        "cost_per_acceptable": None,
        **changed,
    }


def _yield(price: str | None, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "acceptable": "acceptable (score above 0.5) & <b>more</b>",
        "conceivable": "conceivable (score above 0)",
        "price_per_label": price,
        "sources": rows,
    }


INTERACTION = {
    "assignments": 83,
    "with_telemetry": 3,
    "signals": {"pasted": {"assignments": 1, "share": 0.3333}, SCRIPT: {"assignments": 0, "share": 0.0}},
}
NO_TELEMETRY = {
    "assignments": 0,
    "with_telemetry": 0,
    "signals": {"pasted": {"assignments": 0, "share": None}, "away": {"assignments": 0, "share": None}},
}

CASES = [
    (None, NO_TELEMETRY),
    (_yield(None, []), NO_TELEMETRY),
    (_yield(None, [_row("roget"), _row(SCRIPT, share_acceptable=None, share_conceivable=None)]), INTERACTION),
    (
        _yield(
            "0.0125",
            [
                _row("coinco", cost="12.50", cost_per_acceptable="0.38"),
                _row("", cost="3.00", cost_per_acceptable=None, acceptable=0),
                _row("thesaurus", cost=None, cost_per_acceptable=None),
            ],
        ),
        INTERACTION,
    ),
]


@pytest.mark.parametrize(("source_yield", "interaction"), CASES)
def test_the_tables_show_what_their_templates_show(source_yield: Any, interaction: dict[str, Any]) -> None:
    benchmark = Benchmark(name="a-benchmark")
    context = {"benchmark": benchmark, "source_yield": source_yield, "interaction": interaction}
    templates = (
        render_to_string("analysis/_source_yield.html", context)
        + "\n"
        + render_to_string("analysis/_interaction.html", context)
        + "\n"
    )
    assert str(source_yield_and_interaction(benchmark, source_yield, interaction)) == templates


# The SWORDS statistics page's lines from its links to its heading of agreement, as they were.
SWORDS_TABLES = """<p class="muted"><a href="{% url 'benchmark-detail' benchmark.name %}">{{ benchmark.name }}</a> ›
  statistics · <a href="{% url 'analysis-exports' benchmark.name %}">exports</a></p>
<h1>Statistics of {{ benchmark.name }}</h1>
<p class="muted">Over valid labels only (imported ones and those of assignments that passed spam filtering).
  A candidate's score is its share of accepts; abstain counts as not-accept.
  Acceptable: score above {{ statistics.thresholds.acceptable }}; conceivable: above {{ statistics.thresholds.conceivable }};
  inconceivable: the rest.{% if reannotation_origin %} The re-annotation <code>{{ reannotation_origin }}</code> is left out.{% endif %}</p>

<section class="grid" aria-label="Counts">
  <div class="card"><div class="muted">Contexts</div><div class="stat">{{ statistics.contexts }}</div></div>
  <div class="card"><div class="muted">Targets</div><div class="stat">{{ statistics.targets }}</div></div>
  <div class="card"><div class="muted">Candidates</div><div class="stat">{{ statistics.candidates }}</div></div>
  <div class="card"><div class="muted">Labels</div><div class="stat">{{ statistics.labels }}</div>
    <div class="muted">{% if statistics.abstain_share is not None %}abstain share {{ statistics.abstain_share|decimals:4 }}{% endif %}</div></div>
</section>

<section class="card">
  <h2>Per target (SWORDS Table 2)</h2>
  <div class="table-scroll" role="region" aria-label="Per target (SWORDS Table 2)" tabindex="0"><table>
    <thead><tr><th></th><th class="num">mean over all targets</th><th class="num">mean over targets having it</th><th class="num">targets having it</th></tr></thead>
    <tbody>
      {% for row in per_target %}
      <tr><td>{{ row.name }}</td><td class="num">{{ row.all|decimals:2 }}</td><td class="num">{{ row.nonempty|decimals:2 }}</td><td class="num">{{ row.targets }}</td></tr>
      {% endfor %}
    </tbody>
  </table></div>
  {% if statistics.unscored_candidates %}<p class="muted">{{ statistics.unscored_candidates }} candidates have no valid label yet and are in no category.</p>{% endif %}
</section>

<section class="card">
  <h2>By source (SWORDS Fig. 1)</h2>
  <div class="table-scroll" role="region" aria-label="Score distribution by source, plot" tabindex="0">{{ score_chart }}</div>
  {% include "analysis/_plot_downloads.html" with plot="scores" %}
  <div class="table-scroll" role="region" aria-label="By source (SWORDS Fig. 1)" tabindex="0"><table>
    <thead><tr><th>source</th><th class="num">candidates</th><th class="num">share</th><th class="num">mean score</th><th class="num">inconceivable</th><th class="num">conceivable</th><th class="num">acceptable</th></tr></thead>
    <tbody>
      {% for group, row in by_source %}
      <tr><td>{{ group }}</td><td class="num">{{ row.candidates }}</td><td class="num">{{ row.share|decimals:3 }}</td><td class="num">{{ row.mean_score|decimals:3 }}</td>
        <td class="num">{{ row.inconceivable }}</td><td class="num">{{ row.conceivable }}</td><td class="num">{{ row.acceptable }}</td></tr>
      {% endfor %}
    </tbody>
  </table></div>
</section>

<section class="card">
  <h2>By part of speech</h2>
  <div class="table-scroll" role="region" aria-label="By part of speech" tabindex="0"><table>
    <thead><tr><th>part of speech</th><th class="num">targets</th><th class="num">candidates</th><th class="num">labels</th>
      <th class="num">candidates / target</th><th class="num">conceivable / target</th><th class="num">acceptable / target</th></tr></thead>
    <tbody>
      {% for pos, row in by_pos %}
      <tr><td>{{ pos }}</td><td class="num">{{ row.targets }}</td><td class="num">{{ row.candidates }}</td><td class="num">{{ row.labels }}</td>
        <td class="num">{{ row.per_target.candidates|decimals:2 }}</td><td class="num">{{ row.per_target.conceivable|decimals:2 }}</td><td class="num">{{ row.per_target.acceptable|decimals:2 }}</td></tr>
      {% endfor %}
    </tbody>
  </table></div>
</section>

<section class="card">
  <h2>Agreement</h2>
  """


def _statistics(*, abstain_share: float | None, unscored: int) -> dict[str, Any]:
    return {
        "contexts": 1000,
        "targets": 1250,
        "candidates": 45705,
        "labels": 253917,
        "abstain_share": abstain_share,
        "unscored_candidates": unscored,
        "thresholds": {"acceptable": 0.5, "conceivable": 0.0},
    }


def _swords_context(*, origin: str | None, abstain_share: float | None, unscored: int) -> dict[str, Any]:
    share = {"candidates": 59.98, "conceivable": 40.1234, "acceptable": None}
    return {
        "benchmark": Benchmark(name="a-benchmark"),
        "statistics": _statistics(abstain_share=abstain_share, unscored=unscored),
        "reannotation_origin": origin,
        "per_target": [
            {"name": "candidates", "all": 59.98, "nonempty": 60.0, "targets": 762},
            {"name": SCRIPT, "all": None, "nonempty": 0.005, "targets": 0},
        ],
        "score_chart": mark_safe('<svg role="img"><title>Scores</title></svg>'),
        "by_source": [
            (
                "roget",
                {
                    "candidates": 42790,
                    "share": 0.9362,
                    "mean_score": 0.31234,
                    "inconceivable": 14793,
                    "conceivable": 27997,
                    "acceptable": 3256,
                },
            ),
            (
                SCRIPT,
                {
                    "candidates": 0,
                    "share": 0.0,
                    "mean_score": None,
                    "inconceivable": 0,
                    "conceivable": 0,
                    "acceptable": 0,
                },
            ),
        ],
        "by_pos": [
            ("noun", {"targets": 300, "candidates": 18000, "labels": 100000, "per_target": share}),
            (SCRIPT, {"targets": 1, "candidates": 0, "labels": 0, "per_target": dict.fromkeys(share)}),
        ],
    }


@pytest.mark.parametrize(
    ("origin", "abstain_share", "unscored"), [(None, None, 0), ("second-<set>", 0.12345, 7), ("", 0.0, 0)]
)
def test_the_swords_tables_show_what_the_template_showed(
    origin: str | None, abstain_share: float | None, unscored: int
) -> None:
    context = _swords_context(origin=origin, abstain_share=abstain_share, unscored=unscored)
    reference = Template("{% load analysis_tags %}\n" + SWORDS_TABLES).render(Context(context))
    assert str(swords_statistics_tables(context)) == reference


@pytest.mark.parametrize("prefix", ["/", "/crowdlex/"])
def test_a_benchmark_url_reversed_once_is_the_url_reversed_each_time(prefix: str) -> None:
    from django.urls import get_script_prefix, reverse, set_script_prefix

    from analysis.statistics_rows import benchmark_url

    before = get_script_prefix()
    set_script_prefix(prefix)
    try:
        for name in ("a-benchmark", "Another_one-2"):
            for route, others in (("benchmark-detail", ()), ("analysis-plot", ("scores", "svg"))):
                assert benchmark_url(route, name, *others) == reverse(route, args=[name, *others])
                assert benchmark_url(route, name, *others).startswith(prefix)
    finally:
        set_script_prefix(before)
