"""A complete evaluation end to end (docs/evaluation.md, "Complete evaluation"): a system's
unscored substitutes added as candidates and judged by the simulated crowd answering from a truth
file, then lenient, strict and complete figures checked against a hand computation; versions, the
re-score of an older result, and the bootstrap intervals on a case worked out by hand."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from analysis.models import JudgementStatus, UnscoredJudgement
from analysis.services import (
    JudgingError,
    benchmark_version,
    evaluation_reproduce,
    judgement_progress,
    judgement_propose,
    judgement_report,
    judgement_start,
    result_load,
    system_evaluate,
    system_evaluation_rescore,
    system_evaluation_save,
)
from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark, Candidate, CandidateStage, Import, Target, TargetStage
from annotation.tallies import tallies_benchmark_recount
from hits.models import Batch
from review.services import benchmark_refresh
from review.simulation import SimulationError, crowd_simulate, truth_load
from schemes.swords.evaluation import metrics
from tests.analysis.labelled import labelled_benchmark
from tests.base import Cast

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
    assert done.status == JudgementStatus.DONE and done.report is not None
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


def test_the_bootstrap_intervals_of_a_hand_checkable_case() -> None:
    # Two targets with one substitute listed each: one a hit, one a miss. A draw of two targets
    # holds 2, 1 or 0 hits (P 100, 50, 0 with chances 1/4, 1/2, 1/4), so the central 95 % runs
    # from 0 to 100 and about half the draws give 50.
    def target(hit: int) -> dict[str, float | int]:
        detail: dict[str, float | int] = {"gap": 100.0 * hit, "lenient_gap": 100.0 * hit}
        for mode in ("lenient", "strict"):
            for kind in ("acceptable", "conceivable"):
                detail |= {f"{mode}_{kind}_hits": hit, f"{mode}_{kind}_listed": 1, f"{mode}_{kind}_relevant": 1}
        return detail

    details = {"t:hit": target(1), "t:miss": target(0)}
    assert metrics.setting_figures(details, mode="strict")["p10"] == pytest.approx(50.0)
    intervals = metrics.bootstrap_intervals(details, mode="strict", resamples=2000, seed=7, level=0.95)
    assert intervals["p10"] == [0.0, 100.0]
    assert intervals["gap"] == [0.0, 100.0]
    # At a level of 40 % the central draws are all the middle value.
    assert metrics.bootstrap_intervals(details, mode="strict", resamples=2000, seed=7, level=0.4)["p10"] == [
        50.0,
        50.0,
    ]
    # Seeded: the same seed gives the same intervals; identical targets give no spread at all.
    assert metrics.bootstrap_intervals(details, mode="strict", resamples=50, seed=1, level=0.9) == (
        metrics.bootstrap_intervals(details, mode="strict", resamples=50, seed=1, level=0.9)
    )
    same = {"a": target(1), "b": target(1)}
    assert metrics.bootstrap_intervals(same, mode="lenient", resamples=100, seed=0, level=0.95)["f10"] == [
        100.0,
        100.0,
    ]


def test_an_older_result_is_reproduced_on_its_version_and_scored_again_on_the_grown_benchmark(
    benchmark: Benchmark, tmp_path: Path
) -> None:
    result = result_load(benchmark=benchmark, source=_result_file(benchmark, tmp_path), keep=True)
    saved = system_evaluation_save(
        benchmark=benchmark, system="old", figures=system_evaluate(benchmark=benchmark, result=result), result=result
    )
    old_figures, old_version = dict(saved.figures), dict(saved.version)
    # The benchmark grows: "gifted" is collected and accepted by all.
    bright = Target.objects.filter(benchmark=benchmark).order_by("pk").first()
    assert bright is not None
    gifted = Candidate.objects.create(target=bright, text="gifted", sources=["coinco"])
    gifted.labels.bulk_create(
        gifted.labels.model(candidate=gifted, value="accept", origin="later", position=position)
        for position in range(3)
    )
    # Its tally written as an import writes it (docs/design.md §7, "Tallies").
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    assert benchmark_version(benchmark=benchmark).candidates == old_version["candidates"] + 1
    # Its own version still gives the saved figures.
    assert evaluation_reproduce(evaluation=saved) == old_figures
    rescored = system_evaluation_rescore(evaluation=saved)
    assert rescored.version["candidates"] == old_version["candidates"] + 1
    assert rescored.history == [
        {
            "version": old_version,
            "figures": old_figures,
            "at": rescored.history[0]["at"],
            "result_sha256": result.sha256,
        }
    ]
    # gifted is now an acceptable hit at the top of bright's list: strict precision 3/8 -> 4/8.
    assert old_figures["p10_strict"] == pytest.approx(37.5)
    assert rescored.figures["p10_strict"] == pytest.approx(50.0)
    out = StringIO()
    call_command("evaluate_system", "complete", "--rescore", "old", "--json", stdout=out)
    again = json.loads(out.getvalue())
    assert again["version_before"] == rescored.version and again["p10_strict"] == pytest.approx(50.0)


def test_nothing_is_proposed_where_nothing_is_unscored_nor_beyond_the_limits(
    benchmark: Benchmark, tmp_path: Path, settings: object
) -> None:
    bright, quick = (tid for _pk, tid in swords_target_ids(benchmark))
    path = tmp_path / "scored.json"
    path.write_text(json.dumps({"substitutes": {bright: ["clever", "smart"], quick: ["fast"]}}))
    result = result_load(benchmark=benchmark, source=path, keep=True)
    saved = system_evaluation_save(
        benchmark=benchmark, system="scored", figures=system_evaluate(benchmark=benchmark, result=result), result=result
    )
    with pytest.raises(JudgingError, match="nothing to judge"):
        judgement_propose(evaluation=saved)
    with pytest.raises(JudgingError, match="EVALUATION_JUDGE_MAX_TOP_K"):
        judgement_propose(evaluation=saved, top_k=0)
    full = result_load(benchmark=benchmark, source=_result_file(benchmark, tmp_path), keep=True)
    saved = system_evaluation_save(
        benchmark=benchmark, system="full", figures=system_evaluate(benchmark=benchmark, result=full), result=full
    )
    settings.EVALUATION_JUDGE_MAX_SUBSTITUTES = 2  # type: ignore[attr-defined]
    with pytest.raises(JudgingError, match="EVALUATION_JUDGE_MAX_SUBSTITUTES"):
        judgement_propose(evaluation=saved)
    # Top 1: gifted and speedy only.
    assert judgement_propose(evaluation=saved, top_k=1).substitute_count == 2


def test_a_scheme_whose_evaluation_does_not_judge_says_why() -> None:
    tsar = Benchmark.objects.create(name="simple", scheme="tsar")
    with pytest.raises(JudgingError, match="annotators suggested themselves"):
        from analysis.services import judging_check

        judging_check(benchmark=tsar)
    with pytest.raises(CommandError, match="annotators suggested themselves"):
        call_command("evaluate_system", "simple", "--result", "x.tsv", "--judge-unscored")


def test_the_truth_file_names_the_line_and_field_at_fault(benchmark: Benchmark, tmp_path: Path) -> None:
    bright = Target.objects.filter(benchmark=benchmark).order_by("pk").first()
    assert bright is not None
    for body, where in (
        (f"target,candidate,accept\n{bright.pk},gifted,maybe\n", "truth.csv, line 2, field accept"),
        (f"target,candidate,accept\n{bright.pk},gifted,1\n999999,x,1\n", "truth.csv, line 3, field target"),
        (f"target,candidate,accept\n{bright.pk},gifted,1.5\n", "truth.csv, line 2, field accept"),
        (f"target,candidate,accept\n{bright.pk}, ,1\n", "truth.csv, line 2, field candidate"),
        ("target,text\n1,x\n", "truth.csv, line 1: the truth file has no column candidate, accept"),
    ):
        path = tmp_path / "truth.csv"
        path.write_text(body)
        with pytest.raises(SimulationError, match=where.replace(".", r"\.")):
            truth_load(benchmark=benchmark, source=path)
    path.write_text(f"target,candidate,accept\n{bright.pk}, Gifted ,0.25\n")
    assert truth_load(benchmark=benchmark, source=path) == {(bright.pk, "gifted"): 0.25}


def test_the_command_prices_a_dry_run_then_judges_and_reports(benchmark: Benchmark, tmp_path: Path) -> None:
    path = str(_result_file(benchmark, tmp_path))
    before = benchmark_version(benchmark=benchmark)
    out = StringIO()
    call_command("evaluate_system", "complete", "--result", path, "--judge-unscored", "--dry-run", stdout=out)
    assert "3 substitutes of 2 targets" in out.getvalue() and "dry run: nothing added" in out.getvalue()
    assert benchmark_version(benchmark=benchmark) == before
    assert not UnscoredJudgement.objects.exists()

    out = StringIO()
    call_command(
        "evaluate_system", "complete", "--result", path, "--judge-unscored", "--backend", "mturk", "--json", stdout=out
    )
    summary = json.loads(out.getvalue())
    assert summary["system"] == "newsys" and summary["substitutes"] == 3 and summary["backend"] == "mturk"
    # MTurk takes its fee: the total is above the rewards.
    assert float(summary["cost"]["total"]) > float(summary["cost"]["rewards_total"])
    assert Batch.objects.get(pk=summary["batch"]).backend == "mturk"
    out = StringIO()
    call_command("evaluate_system", "complete", "--complete", "newsys", stdout=out)
    assert "0 of 3 substitutes judged so far" in out.getvalue()
    with pytest.raises(CommandError, match="never sent to be judged"):
        call_command("evaluate_system", "complete", "--result", path, "--save", "other")
        call_command("evaluate_system", "complete", "--complete", "other")
    with pytest.raises(CommandError, match="give one of"):
        call_command("evaluate_system", "complete")


def _upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes(), content_type="application/json")


def test_the_page_proposes_asks_with_the_cost_then_judges(benchmark: Benchmark, tmp_path: Path, cast: Cast) -> None:
    client = Client()
    client.force_login(cast.researcher)
    page = "/benchmarks/complete/evaluation/"
    refused = client.post(page, {"result": _upload(_result_file(benchmark, tmp_path)), "judge": "on"})
    assert refused.status_code == 400 and "Name the system" in refused.content.decode()
    response = client.post(
        page,
        {"result": _upload(_result_file(benchmark, tmp_path)), "system": "newsys", "judge": "on", "top_k": "10"},
    )
    assert response.status_code == 302 and response["Location"].endswith("#judging")
    judgement = UnscoredJudgement.objects.get()
    assert judgement.status == JudgementStatus.PROPOSED and judgement.substitute_count == 3
    shown = client.get(page).content.decode()
    assert "Judge them" in shown and f"${judgement.cost['total']}" in shown
    assert "3 unscored substitutes of 2 targets" in shown
    # The button asks first, saying what it adds, creates and costs; nothing is added yet.
    asked = client.post("/benchmarks/complete/evaluation/judge", {"judgement": judgement.pk})
    text = asked.content.decode()
    assert asked.status_code == 200 and "add 3 substitutes of 2 targets as candidates" in text
    assert f"cost ${judgement.cost['total']}" in text and 'name="confirmed" value="yes"' in text
    assert not Import.objects.filter(origin="system:newsys").exists()
    done = client.post("/benchmarks/complete/evaluation/judge", {"judgement": judgement.pk, "confirmed": "yes"})
    assert done.status_code == 302
    judgement.refresh_from_db()
    assert judgement.status == JudgementStatus.STARTED and judgement.batch is not None
    again = client.post("/benchmarks/complete/evaluation/judge", {"judgement": judgement.pk, "confirmed": "yes"})
    assert again.status_code == 302 and Batch.objects.count() == 1
    shown = client.get(page).content.decode()
    assert "0 of 3 judged" in shown and f"batch {judgement.batch_id}" in shown
    # The leaderboard says which version newsys was scored on, and scores it again on request.
    assert "the benchmark has 3 more candidates now" in shown and "Score again" in shown
    client.post("/benchmarks/complete/evaluation/rescore", {"system": "newsys"})
    assert "the benchmark has 3 more candidates now" not in client.get(page).content.decode()


def test_the_page_keeps_the_figures_when_nothing_is_left_to_judge(
    benchmark: Benchmark, tmp_path: Path, cast: Cast
) -> None:
    bright, quick = (tid for _pk, tid in swords_target_ids(benchmark))
    path = tmp_path / "scored.json"
    path.write_text(json.dumps({"substitutes": {bright: ["clever"], quick: ["fast"]}}))
    client = Client()
    client.force_login(cast.researcher)
    shown = client.post(
        "/benchmarks/complete/evaluation/", {"result": _upload(path), "system": "scored", "judge": "on"}
    )
    text = shown.content.decode()
    assert shown.status_code == 200 and 'id="figures"' in text
    assert "nothing is sent to be judged: nothing to judge" in text
    assert not UnscoredJudgement.objects.exists()


def test_a_page_of_a_scheme_that_does_not_judge_says_why(cast: Cast) -> None:
    Benchmark.objects.create(name="simple", scheme="tsar")
    client = Client()
    client.force_login(cast.researcher)
    shown = client.get("/benchmarks/simple/evaluation/").content.decode()
    assert 'id="judging-refusal"' in shown and "annotators suggested themselves" in shown
    assert 'name="judge"' not in shown


def test_the_api_judges_at_once_lists_the_judgements_and_scores_again(
    benchmark: Benchmark, tmp_path: Path, cast: Cast
) -> None:
    client = APIClient()
    client.force_authenticate(cast.researcher)
    url = "/api/benchmarks/complete/evaluations/judgements"
    dry = client.post(url, {"result": _upload(_result_file(benchmark, tmp_path)), "system": "newsys", "dry_run": True})
    assert dry.status_code == 200, dry.content
    assert dry.json()["id"] is None and dry.json()["substitutes"] == 3 and not UnscoredJudgement.objects.exists()
    started = client.post(url, {"result": _upload(_result_file(benchmark, tmp_path)), "system": "newsys"})
    assert started.status_code == 201, started.content
    body = started.json()
    assert body["status"] == "started" and body["targets"] == 2 and body["batch"] is not None
    assert body["report"] is None and body["candidates_judged"] == 0
    listed = client.get(url).json()["results"]
    assert [row["system"] for row in listed] == ["newsys"]
    rescored = client.post("/api/benchmarks/complete/evaluations/rescore", {"system": "newsys"}, format="json").json()
    assert rescored["version"]["candidates"] == body["version_before"]["candidates"] + 3
    assert len(rescored["history"]) == 1
    missing = client.post("/api/benchmarks/complete/evaluations/rescore", {"system": "nobody"}, format="json")
    assert missing.status_code == 400 and "no system named" in missing.json()["system"][0]
    Benchmark.objects.create(name="simple", scheme="tsar")
    assert client.get("/api/benchmarks/simple/evaluations/judgements").status_code == 404
