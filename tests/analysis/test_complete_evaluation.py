"""A complete evaluation end to end (docs/evaluation.md, "Complete evaluation"): a system's
unscored substitutes added as candidates and judged by the simulated crowd answering from a truth
file, then lenient, strict and complete figures checked against a hand computation; versions, the
re-score of an older result, and the bootstrap intervals on a case worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.models import JudgementStatus
from analysis.services import (
    JudgingError,
    benchmark_version,
    judgement_progress,
    judgement_propose,
    judgement_report,
    judgement_start,
    result_load,
    system_evaluate,
    system_evaluation_save,
)
from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark, Candidate, CandidateStage, Import, Target, TargetStage
from hits.models import Batch
from review.services import benchmark_refresh
from review.simulation import crowd_simulate, truth_load
from tests.analysis.labelled import labelled_benchmark

pytestmark = pytest.mark.django_db

TEN_ACCEPTS = "AAAAAAAAAA"


@pytest.fixture
def benchmark() -> Benchmark:
    """Two finished targets: every candidate has its labels, so the pipeline has settled them."""
    built = labelled_benchmark(
        "complete",
        [
            (
                "bright",
                "adj",
                [
                    ("clever", ["coinco"], "AAAAAAAAAR"),
                    ("smart", ["coinco"], "AAAAARRRRR"),
                    ("shining", ["thesaurus"], "RRR"),
                ],
            ),
            (
                "quick",
                "adj",
                [
                    ("fast", ["coinco"], TEN_ACCEPTS),
                    ("rapid", ["coinco"], "AAAAAAARRR"),
                    ("slow", ["thesaurus"], "RRR"),
                ],
            ),
        ],
    )
    benchmark_refresh(benchmark=built, full=True)
    assert set(Target.objects.filter(benchmark=built).values_list("stage", flat=True)) == {TargetStage.DONE}
    return built


def _result_file(benchmark: Benchmark, tmp_path: Path) -> Path:
    bright, quick = (tid for _pk, tid in swords_target_ids(benchmark))
    path = tmp_path / "newsys.json"
    path.write_text(
        json.dumps(
            {
                "substitutes_lemmatized": True,
                "substitutes": {
                    bright: ["gifted", "clever", "shining", "intelligent"],
                    quick: ["speedy", "fast", "slow", "rapid"],
                },
            }
        )
    )
    return path


def _truth_file(benchmark: Benchmark, tmp_path: Path) -> Path:
    bright, quick = Target.objects.filter(benchmark=benchmark).order_by("pk")
    path = tmp_path / "truth.csv"
    path.write_text(
        f"target,candidate,accept\n{bright.pk},gifted,accept\n{bright.pk},intelligent,reject\n{quick.pk},speedy,1\n"
    )
    return path


def test_the_complete_evaluation_runs_end_to_end_and_gives_the_hand_computed_figures(
    benchmark: Benchmark, tmp_path: Path
) -> None:
    result = result_load(benchmark=benchmark, source=_result_file(benchmark, tmp_path), keep=True)
    figures = system_evaluate(benchmark=benchmark, result=result)
    saved = system_evaluation_save(benchmark=benchmark, system="newsys", figures=figures, result=result)
    before = benchmark_version(benchmark=benchmark)
    assert saved.version == before.as_dict()

    proposal = judgement_propose(evaluation=saved, top_k=10)
    # gifted and intelligent for "bright", speedy for "quick": the others are scored.
    assert proposal.substitute_count == 3
    assert sorted(text for texts in proposal.substitutes.values() for text in texts) == [
        "gifted",
        "intelligent",
        "speedy",
    ]
    assert proposal.cost["assignments"] > 0 and float(proposal.cost["total"]) > 0
    # Proposing writes nothing but the proposal: no candidate, no import, no batch.
    assert benchmark_version(benchmark=benchmark) == before
    assert not Import.objects.filter(benchmark=benchmark, origin="system:newsys").exists()
    assert not Batch.objects.filter(benchmark=benchmark).exists()

    started = judgement_start(judgement=proposal)
    assert started.status == JudgementStatus.STARTED
    added = Candidate.objects.filter(pk__in=started.candidate_ids)
    assert sorted(added.values_list("text", flat=True)) == ["gifted", "intelligent", "speedy"]
    assert {tuple(sources) for sources in added.values_list("sources", flat=True)} == {("system:newsys",)}
    record = Import.objects.get(benchmark=benchmark, origin="system:newsys")
    assert record.provenance["system"] == "newsys"
    assert record.provenance["result_file"] == "newsys.json"
    assert len(record.provenance["sha256"]) == 64 and record.provenance["top_k"] == 10
    assert set(record.candidates.values_list("pk", flat=True)) == set(started.candidate_ids)
    # The batch holds the new candidates only, with its controls, at the benchmark's price.
    assert started.batch is not None
    batch_candidates = set(
        started.batch.hits.filter(items__candidate__isnull=False).values_list("items__candidate_id", flat=True)
    )
    assert batch_candidates == set(started.candidate_ids)
    assert started.batch.hits.filter(items__control=True).exists()
    assert str(started.batch.reward) == str(benchmark.reward)
    with pytest.raises(JudgingError, match="started already"):
        judgement_start(judgement=proposal)
    # Not done yet: no report.
    assert judgement_report(judgement=started).report is None

    truth = truth_load(benchmark=benchmark, source=_truth_file(benchmark, tmp_path))
    report = crowd_simulate(benchmark=benchmark, honest=12, spammers=0, seed=3, truth=truth)
    assert report.finished, report.stuck
    assert judgement_progress(judgement=started).done
    assert dict(Candidate.objects.filter(pk__in=started.candidate_ids).values_list("text", "stage")) == {
        "gifted": CandidateStage.FINAL,
        "intelligent": CandidateStage.DROPPED,
        "speedy": CandidateStage.FINAL,
    }

    done = judgement_report(judgement=started)
    assert done.status == JudgementStatus.DONE
    values = done.report["figures"]
    # Before: bright scores clever .9, smart .5, shining 0; quick fast 1, rapid .7, slow 0.
    # Lenient lists: [clever, shining] and [fast, slow, rapid]: 3 acceptable hits of 5 listed, 3 relevant.
    assert values["lenient"]["p10"] == pytest.approx(60.0)
    assert values["lenient"]["r10"] == pytest.approx(100.0)
    assert values["lenient"]["f10"] == pytest.approx(75.0)
    # Conceivable: smart joins (.5 >= .1) but is not listed: 3 of 5, relevant 2 + 2.
    assert values["lenient"]["pc10"] == pytest.approx(60.0)
    assert values["lenient"]["rc10"] == pytest.approx(75.0)
    # Strict: the unscored count as wrong, 3 hits of 8 listed.
    assert values["strict"]["p10"] == pytest.approx(37.5)
    assert values["strict"]["f10"] == pytest.approx(2 * 37.5 * 100 / 137.5)
    # Complete: gifted and speedy accepted by all (score 1), intelligent rejected by all (dropped):
    # 5 acceptable hits of 8 listed, relevant 2 + 3; conceivable relevant 3 + 3.
    assert values["complete"]["p10"] == pytest.approx(62.5)
    assert values["complete"]["r10"] == pytest.approx(100.0)
    assert values["complete"]["pc10"] == pytest.approx(62.5)
    assert values["complete"]["rc10"] == pytest.approx(500 / 6)
    # GAP: strict (bright .45 / 1.6, quick .925 / 1.85), lenient (.9 / 1.6, (1 + 1.7 / 3) / 1.85),
    # complete (1.95 / 2.75, 2.675 / 2.9).
    assert values["strict"]["gap"] == pytest.approx(100 * (0.45 / 1.6 + 0.925 / 1.85) / 2)
    assert values["lenient"]["gap"] == pytest.approx(100 * (0.9 / 1.6 + (1 + 1.7 / 3) / 1.85) / 2)
    assert values["complete"]["gap"] == pytest.approx(100 * (1.95 / 2.75 + 2.675 / 2.9) / 2)
    # Where they must hold: strict never above complete in precision (the same lists, hits only
    # added), and here lenient neither.
    for name in ("p10", "pc10"):
        assert values["strict"][name] <= values["complete"][name]
        assert values["lenient"][name] <= values["complete"][name]
    for setting, intervals in done.report["intervals"].items():
        for name, (low, high) in intervals.items():
            assert low <= values[setting][name] + 1e-9 and values[setting][name] <= high + 1e-9, (setting, name)
    assert done.version_after["candidates"] == before.candidates + 3
    # The report is kept: asking again computes nothing new.
    assert judgement_report(judgement=done).report == done.report
