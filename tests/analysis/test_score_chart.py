"""SWORDS's score plot, drawn from each source group's histogram of scores, is kept as last drawn in
the process and drawn again only when the bins or counts it is drawn from differ: a kept plot is
byte for byte the plot drawn afresh, and a moved count is never shown as the plot before it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import schemes.swords.figures as swords_figures
from analysis import plots
from analysis.stats import benchmark_statistics

pytestmark = pytest.mark.django_db


def _statistics(extra_accepts: int) -> dict[str, Any]:
    return benchmark_statistics(
        contexts=1,
        target_pos=["noun", "verb"],
        candidate_target=[0, 0, 1, 1],
        counts=[[3 + extra_accepts, 1, 0], [0, 2, 0], [1, 1, 1], [2, 0, 0]],
        candidate_source_group=["coinco-only", "both", "thesaurus-only", "coinco-only"],
    )


def _drawn(statistics: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    """The plot drawn afresh, with nothing kept from before."""
    with monkeypatch.context() as patch:
        patch.setattr(swords_figures, "_last_score_chart", ((), ""))
        return swords_figures._score_chart(statistics)


def test_the_score_plot_is_drawn_again_only_when_its_counts_move(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[str] = []
    real = plots.grouped_histogram

    def counted(**arguments: Any) -> str:
        drawn.append(arguments["title"])
        return real(**arguments)

    monkeypatch.setattr(swords_figures, "_last_score_chart", ((), ""))
    monkeypatch.setattr(plots, "grouped_histogram", counted)
    before, moved = _statistics(0), _statistics(5)
    first = swords_figures._score_chart(before)
    assert len(drawn) == 1
    assert swords_figures._score_chart(copy.deepcopy(before)) == first
    assert len(drawn) == 1, "the same bins and counts: the plot as kept"

    after = swords_figures._score_chart(moved)
    assert len(drawn) == 2, "a count moved: drawn again"
    assert after != first
    assert after == _drawn(moved, monkeypatch)
    assert swords_figures._score_chart(before) == first == _drawn(before, monkeypatch)
