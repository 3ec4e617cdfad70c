"""The statistics page's tables built in Python (analysis.statistics_rows) show, byte for byte, what
the templates they stand for show (``analysis/_source_yield.html`` and ``analysis/_interaction.html``
included one after the other, as the pages of the other schemes still include them), for every kind
of value a cell holds: markup shown as text, a price or none, shares or none, no source at all."""

from __future__ import annotations

from typing import Any

import pytest
from django.template.loader import render_to_string

from analysis.statistics_rows import source_yield_and_interaction
from annotation.models import Benchmark

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
