"""The dataset folders of ProLex and Smart Word Suggestions: tables that pyarrow and the ``datasets``
library load, JSONL beside them, the released format, and a card that names the tables, counts
what the scheme counts and cites its method."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from analysis import services
from annotation.models import Benchmark
from tests.base import Cast
from tests.hits.submitted_work import PROLEX_ANSWERS, SWS_SENTENCE, prolex_work, sws_work

pytestmark = pytest.mark.django_db


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """datasets never reaches the network, and caches under the test's own folder."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def _write(benchmark: Benchmark, folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Write the folder; every table's rows as pyarrow reads them, checked equal to its JSONL."""
    written = services.benchmark_dataset_write(benchmark=benchmark, directory=folder, license="cc-by-4.0")
    tables = {}
    for table, splits in written.rows.items():
        rows = pq.read_table(folder / table / "full.parquet").to_pylist()
        lines = [json.loads(line) for line in (folder / table / "full.jsonl").read_text().splitlines()]
        assert rows == lines and splits == {"full": len(rows)}
        tables[table] = rows
    return tables


def _card(folder: Path) -> tuple[dict[str, Any], str]:
    card = (folder / "README.md").read_text()
    _, header, _ = card.split("---\n", 2)
    return yaml.safe_load(header), card


@pytest.mark.usefixtures("offline")
def test_the_prolex_folder_holds_its_targets_judgments_and_the_csv(cast: Cast, tmp_path: Path) -> None:
    benchmark, _ = prolex_work(cast)
    folder = tmp_path / "prolex"
    tables = _write(benchmark, folder)

    # "overall": generally has two 1s (acceptable); "calm" has no acceptable substitute, so no row.
    [target] = tables["targets"]
    assert (target["target"], target["sentence"]) == ("overall", "Both matter, but overall, I disagree.")
    assert target["marked_sentence"] == "Both matter, but **overall**, I disagree."
    assert target["acceptable"] == ["generally"] and target["unacceptable"] == ["fundamentally", "mostly"]
    assert target["proficiency_acceptable"] + target["other_acceptable"] == ["generally"]
    assert len(target["proficiency_acceptable_levels"] or []) == len(target["proficiency_acceptable"])
    judgments = sorted((row["worker"], row["substitute"], row["judgment"]) for row in tables["judgments"])
    assert sorted((substitute, judgment) for _, substitute, judgment in judgments) == sorted(
        (text, value) for answers in PROLEX_ANSWERS.values() for text, value in answers.items()
    )
    assert {row["sentence"] for row in tables["judgments"]} == {
        "Both matter, but overall, I disagree.",
        "The sea was calm.",
    }
    assert not {"alice", "bob", "local:alice"} & {worker for worker, _, _ in judgments}

    with (folder / "prolex" / "full.csv").open(newline="") as file:
        [released] = list(csv.DictReader(file))
    assert released["Sentence"] == target["marked_sentence"] and released["acc_subs"] == "['generally']"

    header, card = _card(folder)
    assert [config["config_name"] for config in header["configs"]] == ["targets", "judgments"]
    assert "### `targets`" in card and "### `judgments`" in card
    assert "| full | 1 | 1 |" in card and "Cohen's kappa between the two experts over 2 substitutes" in card
    assert "@inproceedings{zhang-etal-2024-prolex" in card and "Krippendorff" not in card

    import datasets

    loaded = datasets.load_dataset(str(folder), "judgments")
    assert loaded["full"].num_rows == 8 and set(loaded["full"]["judgment"]) == {"1", "-1", "0"}
    assert datasets.load_dataset(str(folder))["full"]["target"] == ["overall"]


@pytest.mark.usefixtures("offline")
def test_the_sws_folder_holds_sentences_suggestions_raw_marks_and_the_json(cast: Cast, tmp_path: Path) -> None:
    benchmark, submitted = sws_work(cast, tmp_path)
    folder = tmp_path / "sws"
    tables = _write(benchmark, folder)

    # No span was marked by two annotators, so nothing merges: the sentence has no target.
    [sentence] = tables["sentences"]
    assert (sentence["sentence_id"], sentence["sentence"]) == ("n-1", SWS_SENTENCE)
    assert sentence["tokens"] == ["The", "results", "were", "very", "good", "and", "quick", "."]
    assert (sentence["annotators"], sentence["discarded"], sentence["targets"]) == (3, 1, [])
    assert json.loads(sentence["substitutes"]) == [] and tables["suggestions"] == []

    marks = [(row["answer"], row["number"], row["target"], row["suggestions"], row["type"]) for row in tables["marks"]]
    assert marks == [
        ("marked", 1, "very good", ["excellent", "great"], "refine-usage"),
        ("marked", 2, "quick", ["fast"], "diversify-expression"),
        ("marked", 1, "results", ["<b>outcomes</b>"], "refine-usage"),
        ("discarded", None, None, None, None),
    ]
    assert tables["marks"][3]["discard_reason"] == "It is <i>garbled</i>."
    start = SWS_SENTENCE.index("very good")
    assert (tables["marks"][0]["start"], tables["marks"][0]["end"]) == (start, start + len("very good"))
    workers = [row["worker"] for row in tables["marks"]]
    assert len(set(workers)) == 3 and not {"alice", "bob", "carol"} & set(workers)
    assert [row["assignment"] for row in tables["marks"]] == [
        submitted[0].assignment.pk,
        submitted[0].assignment.pk,
        submitted[1].assignment.pk,
        submitted[2].assignment.pk,
    ]

    released = json.loads((folder / "sws" / "full.json").read_text())
    assert released == {"n-1": {"sentence": SWS_SENTENCE, "sentence_split": sentence["tokens"], "substitutes": []}}

    header, card = _card(folder)
    assert [config["config_name"] for config in header["configs"]] == ["sentences", "suggestions", "marks"]
    assert all(f"### `{name}`" in card for name in ("sentences", "suggestions", "marks"))
    assert "| full | 1 | 0 | 0 | 0 |" in card and "answers setting a sentence aside: 1" in card
    assert "@inproceedings{wang-etal-2023-smart" in card

    import datasets

    assert datasets.load_dataset(str(folder), "marks")["full"].num_rows == 4
    assert datasets.load_dataset(str(folder))["full"]["sentence_id"] == ["n-1"]


def test_a_sws_release_imported_becomes_sentences_and_suggestions(cast: Cast, tmp_path: Path) -> None:
    from annotation.services import benchmark_import

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "sws_small.json"
    benchmark_import(path_or_file=fixture, benchmark_name="sws-release", fmt="sws")
    tables = _write(Benchmark.objects.get(name="sws-release"), tmp_path / "release")
    release = json.loads(fixture.read_text())
    assert [row["sentence_id"] for row in tables["sentences"]] == list(release)
    assert [json.loads(row["substitutes"]) for row in tables["sentences"]] == [
        entry["substitutes"] for entry in release.values()
    ]
    votes = sum(votes for entry in release.values() for target in entry["substitutes"] for votes in target[1].values())
    assert sum(row["votes"] for row in tables["suggestions"]) == votes
    assert {row["origin"] for row in tables["suggestions"]} == {"released"} and tables["marks"] == []
    assert json.loads((tmp_path / "release" / "sws" / "full.json").read_text()) == release
