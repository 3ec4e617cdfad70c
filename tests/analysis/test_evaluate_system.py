"""Evaluating a system against a benchmark from the database, WordNet normalisation included;
two targets are checked by hand (docs/evaluation.md)."""

from __future__ import annotations

import gzip
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from analysis.evaluation import ResultError
from analysis.services import benchmark_leaderboard, system_evaluate, system_evaluation_save
from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark
from tests.analysis.labelled import labelled_benchmark
from tests.base import Cast

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return labelled_benchmark(
        "eval",
        [
            (
                "ran",
                "verb",
                [
                    ("sprinted", ["coinco"], "AAAR"),
                    ("runs", ["thesaurus"], "AAAA"),
                    ("jogged", ["thesaurus"], "AR"),
                    ("jogging", ["thesaurus"], "RRRRRRRR"),
                    ("walked", ["thesaurus"], "RRU"),
                    ("dashed", ["thesaurus"], "UU"),
                ],
            ),
            (
                "quick",
                "adj",
                [
                    ("fast", ["coinco"], "AAA"),
                    ("rapid", ["coinco"], "AAR"),
                    ("swift", ["thesaurus"], "ARR"),
                    ("slow", ["thesaurus"], "RRR"),
                ],
            ),
        ],
    )


def _ids(benchmark: Benchmark) -> list[str]:
    return [tid for _pk, tid in swords_target_ids(benchmark)]


def _result(benchmark: Benchmark) -> dict[str, object]:
    ran, quick = _ids(benchmark)
    return {
        "substitutes_lemmatized": False,
        "substitutes": {
            ran: [["running", 5], ["walked", 4], ["jogs", 4], ["sprinted", 3], ["leap", 2], ["jogging", 1]],
            quick: ["swift", "fast", "quickly"],
        },
    }


def test_two_targets_give_the_figures_worked_out_by_hand(benchmark: Benchmark) -> None:
    # "ran": benchmark sprint 3/4, jog 1/10 (jogged and jogging pooled), walk 0/2 (abstain removed);
    # "runs" is the target's lemma, "dashed" has only abstains. System after normalisation:
    # walk, jog, sprint, leap ("running" is the target; the second "jog" merged).
    # "quick": fast 1, rapid 2/3, swift 1/3, slow 0; system swift, fast, quickly.
    figures = system_evaluate(benchmark=benchmark, result=_result(benchmark))

    # Lenient: 3 + 2 listed, acceptable hits 1 + 1 of min(10, 1) + min(10, 2).
    assert figures["p10_lenient"] == pytest.approx(40.0)
    assert figures["r10_lenient"] == pytest.approx(200 / 3)
    assert figures["f10_lenient"] == pytest.approx(50.0)
    # Conceivable: hits 2 + 2 of 5 listed, of min(10, 2) + min(10, 3).
    assert (figures["pc10_lenient"], figures["rc10_lenient"], figures["fc10_lenient"]) == pytest.approx(
        (80.0, 80.0, 80.0)
    )
    # Strict keeps "leap" and "quickly": 4 + 3 listed.
    assert figures["p10_strict"] == pytest.approx(200 / 7)
    assert figures["f10_strict"] == pytest.approx(40.0)
    assert figures["fc10_strict"] == pytest.approx(200 / 3)
    # GAP: (0.1/2 + 0.85/3) / (0.75 + 0.85/2) and (1/3 + (4/3)/2) / (1 + (5/3)/2 + 2/3).
    assert figures["gap"] == pytest.approx(100 * ((0.05 + 0.85 / 3) / 1.175 + 1 / 2.5) / 2)
    assert (figures["targets_evaluated"], figures["targets_missing"]) == (2, 0)


def test_an_unknown_target_id_is_a_clear_error(benchmark: Benchmark) -> None:
    with pytest.raises(ResultError, match="not in the benchmark: t:nope"):
        system_evaluate(benchmark=benchmark, result={"substitutes": {"t:nope": ["fast"]}})


def test_per_target_figures_come_on_request(benchmark: Benchmark) -> None:
    ran, _quick = _ids(benchmark)

    figures = system_evaluate(benchmark=benchmark, result=_result(benchmark), per_target=True)

    assert figures["per_target"][ran]["lenient_acceptable_hits"] == 1
    assert "per_target" not in system_evaluate(benchmark=benchmark, result=_result(benchmark))


def test_the_command_prints_json_and_saves_to_the_leaderboard_below_the_oracle(
    benchmark: Benchmark, tmp_path: Path
) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(_result(benchmark)))
    out = StringIO()

    call_command("evaluate_system", "eval", "--result", str(path), "--json", "--save", "by-hand", stdout=out)

    figures = json.loads(out.getvalue())
    assert figures["f10_lenient"] == pytest.approx(50.0)
    board = benchmark_leaderboard(benchmark=benchmark)
    assert [row["system"] for row in board] == ["oracle", "by-hand"]
    assert board[0]["gap"] == pytest.approx(100.0)
    assert board[0]["r10_lenient"] == pytest.approx(100.0)


def test_the_command_refuses_an_unknown_target(benchmark: Benchmark, tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"substitutes": {"t:nope": ["fast"]}}))

    with pytest.raises(CommandError, match="not in the benchmark"):
        call_command("evaluate_system", "eval", "--result", str(path))


def test_the_oracle_name_is_kept_for_the_benchmark_itself(benchmark: Benchmark) -> None:
    figures = system_evaluate(benchmark=benchmark, result=_result(benchmark))

    with pytest.raises(ValueError, match="oracle"):
        system_evaluation_save(benchmark=benchmark, system="oracle", figures=figures)


def _upload(document: object, name: str = "result.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, gzip.compress(json.dumps(document).encode()), content_type="application/gzip")


def test_the_api_evaluates_an_uploaded_result_and_lists_the_leaderboard(benchmark: Benchmark, cast: Cast) -> None:
    client = APIClient()
    client.force_authenticate(cast.researcher)

    response = client.post(
        "/api/benchmarks/eval/evaluations", {"result": _upload(_result(benchmark)), "system": "api"}, format="multipart"
    )
    refused = client.post(
        "/api/benchmarks/eval/evaluations", {"result": _upload({"substitutes": {"t:x": []}})}, format="multipart"
    )

    assert response.status_code == 200, response.content
    assert response.json()["f10_lenient"] == pytest.approx(50.0)
    assert refused.status_code == 400
    assert "not in the benchmark" in refused.content.decode()
    board = client.get("/api/benchmarks/eval/evaluations").json()["results"]
    assert [(row["system"], row["oracle"]) for row in board] == [("oracle", True), ("api", False)]


def test_the_page_shows_the_figures_of_an_upload_and_the_leaderboard(benchmark: Benchmark, cast: Cast) -> None:
    client = Client()
    client.force_login(cast.researcher)

    response = client.post("/benchmarks/eval/evaluation/", {"result": _upload(_result(benchmark)), "system": "page"})
    refused = client.post("/benchmarks/eval/evaluation/", {"result": _upload(["not a result"])})

    html = response.content.decode()
    assert 'id="figures"' in html and "50.00" in html
    assert "page is on the leaderboard." in html
    assert 'id="figures"' not in refused.content.decode()
    assert "substitutes" in refused.content.decode()
    assert Client().get("/benchmarks/eval/evaluation/").status_code == 302
