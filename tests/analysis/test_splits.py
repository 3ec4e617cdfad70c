"""Named splits of a benchmark's targets, by a seeded rule or an imported list; exports,
statistics and the evaluation honour them."""

from __future__ import annotations

import csv
import io
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from analysis import services
from analysis.evaluation import ResultError
from analysis.models import TargetSplit
from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark
from tests.analysis.labelled import labelled_benchmark
from tests.base import Cast

pytestmark = pytest.mark.django_db

WORDS = ["quick", "bright", "happy", "calm", "large", "small", "early", "late", "strong", "weak"]


@pytest.fixture
def benchmark() -> Benchmark:
    return labelled_benchmark("split", [(word, "adj", [(f"{word}-ish", ["thesaurus"], "AAR")]) for word in WORDS])


def _splits(benchmark: Benchmark) -> dict[str, str]:
    return dict(TargetSplit.objects.filter(benchmark=benchmark).values_list("target__word", "name"))


def test_a_seeded_split_is_reproducible_and_cut_in_the_given_shares(benchmark: Benchmark) -> None:
    counts = services.benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 0.3), ("test", 0.7)], seed=1)
    first = _splits(benchmark)
    services.benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 0.3), ("test", 0.7)], seed=1)
    again = _splits(benchmark)
    services.benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 0.3), ("test", 0.7)], seed=2)

    assert counts == {"dev": 3, "test": 7}
    assert first == again
    assert set(first) == set(WORDS)
    assert _splits(benchmark) != first


def test_a_split_from_a_list_names_targets_by_swords_id_or_id_and_refuses_unknown_ones(
    benchmark: Benchmark, tmp_path: Path
) -> None:
    (first_pk, first_id), (second_pk, _second_id) = list(swords_target_ids(benchmark))[:2]
    listed = tmp_path / "splits.csv"
    listed.write_text(f"target,split\n{first_id},dev\n{second_pk},test\n")
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("target,split\nt:nothing,dev\n")

    counts = services.benchmark_split_import(benchmark=benchmark, source=str(listed))

    assert counts == {"dev": 1, "test": 1}
    assert dict(TargetSplit.objects.values_list("target_id", "name")) == {first_pk: "dev", second_pk: "test"}
    with pytest.raises(services.SplitError, match="not in split: t:nothing"):
        services.benchmark_split_import(benchmark=benchmark, source=str(unknown))


def test_exports_and_statistics_keep_the_targets_of_the_split(benchmark: Benchmark) -> None:
    services.benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 0.3), ("test", 0.7)], seed=1)
    dev = {word for word, name in _splits(benchmark).items() if name == "dev"}

    def export(format: str) -> str:
        out = io.StringIO()
        services.benchmark_export(benchmark=benchmark, format=format, out=out, split="dev")
        return out.getvalue()

    labels = list(csv.DictReader(io.StringIO(export("labels-csv"))))
    candidates = list(csv.DictReader(io.StringIO(export("candidates-csv"))))
    swords = json.loads(export("swords"))
    stats = services.benchmark_statistics(
        benchmark=benchmark, data=services.benchmark_data(benchmark=benchmark, split="dev")
    )

    assert {row["target"] for row in labels} == dev and len(labels) == 3 * len(dev)
    assert {row["target"] for row in candidates} == dev
    assert {target["target"] for target in swords["targets"].values()} == dev
    assert len(swords["contexts"]) == len(dev)
    assert (stats["targets"], stats["contexts"], stats["labels"]) == (len(dev), len(dev), 3 * len(dev))
    assert json.loads(export("stats"))["split"] == "dev"


def test_the_evaluation_of_a_split_refuses_targets_of_another(benchmark: Benchmark) -> None:
    services.benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 0.5), ("test", 0.5)], seed=1)
    test_ids = [tid for _pk, tid in swords_target_ids(benchmark, "test")]

    figures = services.system_evaluate(benchmark=benchmark, result={"substitutes": {}}, split="dev")

    assert figures["targets_missing"] == 5
    with pytest.raises(ResultError, match="not in the benchmark"):
        services.system_evaluate(benchmark=benchmark, result={"substitutes": {test_ids[0]: ["x"]}}, split="dev")


def test_the_commands_split_and_refuse_an_unknown_split(benchmark: Benchmark) -> None:
    out = StringIO()

    call_command("benchmark_split", "split", "--shares", "dev=1", "test=1", "--seed", "3", stdout=out)

    assert "dev" in out.getvalue() and "test" in out.getvalue()
    with pytest.raises(CommandError, match="has no split 'train'"):
        call_command("benchmark_stats", "split", "--split", "train")
    with pytest.raises(CommandError, match="NAME=NUMBER"):
        call_command("benchmark_split", "split", "--shares", "dev")


def test_the_api_splits_by_a_rule_or_a_list_and_lists_the_splits(benchmark: Benchmark, cast: Cast) -> None:
    client = APIClient()
    client.force_authenticate(cast.researcher)
    first_id = next(swords_target_ids(benchmark))[1]
    listed = SimpleUploadedFile("splits.csv", f"target,split\n{first_id},dev\n".encode(), content_type="text/csv")

    seeded = client.post("/api/benchmarks/split/splits", {"shares": {"dev": 1, "test": 1}, "seed": 4}, format="json")
    neither = client.post("/api/benchmarks/split/splits", {"seed": 4}, format="json")
    refused = client.post("/api/benchmarks/split/splits", {"shares": {"dev-1": 1}}, format="json")

    assert seeded.status_code == 200 and sum(seeded.json().values()) == len(WORDS)
    assert neither.status_code == 400
    assert refused.status_code == 400 and "letters, digits or underscores" in refused.content.decode()
    assert client.post("/api/benchmarks/split/splits", {"list": listed}, format="multipart").json() == {"dev": 1}
    assert client.get("/api/benchmarks/split/splits").json() == {"dev": 1}


def test_a_split_has_its_own_leaderboard_and_page_table(benchmark: Benchmark, cast: Cast) -> None:
    services.benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 0.5), ("test", 0.5)], seed=1)
    figures = services.system_evaluate(benchmark=benchmark, result={"substitutes": {}}, split="dev")
    services.system_evaluation_save(benchmark=benchmark, system="nothing", figures=figures, split="dev")
    client = Client()
    client.force_login(cast.researcher)

    html = client.get("/benchmarks/split/evaluation/").content.decode()

    assert [row["system"] for row in services.benchmark_leaderboard(benchmark=benchmark, split="dev")] == [
        "oracle",
        "nothing",
    ]
    assert [row["system"] for row in services.benchmark_leaderboard(benchmark=benchmark)] == ["oracle"]
    assert "Leaderboard of split dev" in html and 'name="split"' in html


def test_all_is_no_split_name_because_datasets_reserves_it(benchmark: Benchmark) -> None:
    with pytest.raises(services.SplitError, match="union of every split"):
        services.benchmark_split_seeded(benchmark=benchmark, shares=[("all", 1), ("test", 1)], seed=0)

    assert not TargetSplit.objects.filter(benchmark=benchmark).exists()
