"""The candidates CSV writes its computed columns (score, counts, category, posteriors) as text it
formats itself, once for each distinct value: that text is what ``csv.writer`` writes of the values
themselves, cell for cell, at rounding boundaries, for -0.0, NaN and None, for scores a decision
sets under any thresholds, and for candidates without a label (docs/design.md §7, "Whole CSV
downloads")."""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np
import pytest

from analysis.exports.fits import ExportFits
from analysis.exports.tables import CANDIDATE_COLUMNS, candidate_batches, csv_text
from annotation.models import Candidate
from crowdlex.spreadsheet import SpreadsheetSafeWriter
from review.adjudication.services import candidate_override_set, overrides_apply_set
from schemes.scores import ScoreThresholds
from tests.analysis.labelled import labelled_benchmark
from tests.base import Cast

# Floats whose shortest text is awkward: rounding boundaries at six places, sums that do not land on
# a short decimal, the point where repr turns to an exponent, signed zero, the ends of the range.
AWKWARD_FLOATS = (
    0.0,
    -0.0,
    1.0,
    0.5,
    1 / 3,
    2 / 3,
    0.1 + 0.2,
    round(0.1234565, 6),
    round(0.0000005, 6),
    round(0.9999995, 6),
    round(2.675, 2),
    1e-06,
    5e-05,
    9.9e-05,
    0.0001,
    0.000123,
    1e-16,
    1e16,
    123456789.0,
    float("inf"),
    float("-inf"),
    0.7,
)


def _csv_line(cells: list[Any]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()


def test_csv_text_is_what_the_csv_writer_writes_of_each_value() -> None:
    values: list[Any] = [*AWKWARD_FLOATS, None, 0, 7, -3, 10**20, True, "acceptable", np.float64(0.25)]
    assert _csv_line([csv_text(value) for value in values]) == _csv_line(values)
    # -0.0 keeps its sign; a numpy float is written as a Python float is.
    assert (
        csv_text(-0.0) == "-0.0"
        and csv_text(None) == ""
        and csv_text(1e-06) == "1e-06"
        and csv_text(np.float64(0.25)) == "0.25"
    )


def test_posterior_texts_are_what_the_csv_writer_writes_of_the_posteriors() -> None:
    values = np.array([*AWKWARD_FLOATS, float("nan")])
    count = values.size
    # Two columns, each holding every awkward value (and NaN), paired differently; ids with gaps.
    posteriors = np.column_stack([values, values[::-1]])
    fits = ExportFits(
        candidate_ids=np.arange(10, 10 + 2 * count, 2, dtype=np.int64),
        posteriors=posteriors,
        worker_ids=np.zeros(0, dtype=np.int64),
        reliability=np.zeros((0, 2)),
    )
    # Known ids out of order, repeated, and ids the fits do not know (a candidate created since).
    wanted = [10 + 2 * n for n in reversed(range(count))] + [11, 12, 12, 10**9, 10]
    typed = fits.posteriors_of(wanted)
    texts = fits.posterior_texts(wanted)
    assert len(texts[0]) == len(texts[1]) == len(wanted)
    for column in (0, 1):
        assert [_csv_line([cell]) for cell in texts[column]] == [_csv_line([cell]) for cell in typed[column]]
    assert "-0.0" in texts[0] and "0.0" in texts[0] and "" in texts[0]


def _written(batches: Any, *, neutralise: bool = True) -> str:
    """The rows as ``SpreadsheetSafeWriter`` writes them (rows that come neutralised: as ``csv.writer``)."""
    out = io.StringIO()
    writer: Any = (
        SpreadsheetSafeWriter(out, lineterminator="\n") if neutralise else csv.writer(out, lineterminator="\n")
    )
    writer.writerow(CANDIDATE_COLUMNS)
    for batch in batches:
        writer.writerows(batch)
    return out.getvalue()


@pytest.mark.django_db
def test_the_text_rows_write_as_the_typed_rows_with_decisions_under_any_thresholds(cast: Cast) -> None:
    # Counts that give every kind of score (none, 0, 1, thirds, sevenths), some repeated across
    # targets, and a target whose candidates have no label at all.
    benchmark = labelled_benchmark(
        "text-rows",
        [
            (
                "bright",
                "adj",
                [("clever", ["coinco"], "AAR"), ("smart", ["coinco"], "AAR"), ("dim", ["coinco"], "RRR")],
            ),
            ("quick", "adj", [("fast", ["coinco"], "AAAAAAR"), ("slow", ["coinco"], "RRRRRRA"), ("rapid", [], "U")]),
            ("calm", "adj", [("still", ["coinco"], "A"), ("quiet", ["coinco", "thesaurus"], "AAR")]),
            # Texts a spreadsheet would run, repeated within the batch, beside ones it would not.
            ("=cmd", "-adj", [("+x", ["coinco"], "AR"), ("@y", ["coinco"], "RA"), ("-1", ["coinco"], "A")]),
        ],
        workers=["w1", "w2", "w3", "w4", "w5", "w6", "w7"],
    )
    Candidate.objects.create(target=benchmark.targets.get(word="calm"), text="unlabelled")
    candidates = list(Candidate.objects.filter(target__benchmark=benchmark).order_by("pk"))
    # Decided candidates share their counts with undecided ones: a decision's figures never stand
    # for the counts' own, nor the other way round.
    candidate_override_set(candidate=candidates[0], decision="conceivable", reason="close")
    candidate_override_set(candidate=candidates[4], decision="acceptable", reason="+fine")
    candidate_override_set(candidate=candidates[-2], decision="inconceivable", reason="-no")
    thresholds_tried = (ScoreThresholds(), ScoreThresholds(acceptable=0.7, conceivable=0.1), ScoreThresholds(0.3, 0.3))
    for applied in (False, True):
        overrides_apply_set(benchmark=benchmark, apply=applied)
        benchmark.refresh_from_db()
        for thresholds in thresholds_tried:
            typed = _written(candidate_batches(benchmark=benchmark, thresholds=thresholds))
            text = _written(
                candidate_batches(benchmark=benchmark, thresholds=thresholds, as_text=True), neutralise=False
            )
            assert text == typed, (applied, thresholds)
            assert typed.count("\n") == len(candidates) + 1
            if applied:
                # The decided conceivable score is the acceptable threshold, written as csv writes it.
                assert f",{thresholds.acceptable!r},2,1,0,3," in text
    assert ",,0,0,0,0,unscored," in text
    assert text.count("'=cmd,'-adj,") == 3 and ",'+x," in text and ",'@y," in text and ",-1," in text
    assert ",'-no" in text and ",'+fine" in text
