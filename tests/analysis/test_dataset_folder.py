"""The dataset folder: what Hugging Face's ``datasets`` and pandas load, a card a reader
understands, pseudonymous workers, one file per table and split."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from django.core.management import CommandError, call_command

from analysis import services
from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark
from tests.analysis.labelled import labelled_benchmark

pytestmark = pytest.mark.django_db

WORKERS = [f"worker{number}" for number in range(4)]


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark = labelled_benchmark(
        "dataset",
        [
            ("quick", "adj", [("fast", ["coinco"], "AAAR"), ("slow", ["thesaurus"], "RRRU")]),
            ("ran", "verb", [("sprinted", ["coinco", "thesaurus"], "AARR")]),
            ("house", "noun", [("home", ["coinco"], "AAAA"), ("hut", ["thesaurus"], "ARRR")]),
            ("early", "adv", [("soon", ["thesaurus"], "AUUR")]),
        ],
        workers=WORKERS,
    )
    benchmark.title = "A small benchmark"
    benchmark.save()
    return benchmark


def _header(card: str) -> Any:
    _, header, _ = card.split("---\n", 2)
    return yaml.safe_load(header)


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """datasets never reaches the network, and caches under the test's own folder."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


@pytest.mark.usefixtures("offline")
def test_datasets_and_pandas_load_every_table_and_split_of_the_folder(benchmark: Benchmark, tmp_path: Path) -> None:
    services.benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 1), ("test", 1)], seed=0)
    folder = tmp_path / "folder"

    written = services.benchmark_dataset_write(benchmark=benchmark, directory=folder, license="cc-by-4.0")

    import datasets

    assert datasets.config.HF_HUB_OFFLINE and datasets.config.HF_DATASETS_OFFLINE
    targets = datasets.load_dataset(str(folder))
    labels = datasets.load_dataset(str(folder), "labels")
    candidates = datasets.load_dataset(str(folder), "candidates")
    assert set(targets) == {"dev", "test"}
    assert targets["dev"].num_rows + targets["test"].num_rows == 4
    assert labels["dev"].num_rows + labels["test"].num_rows == 24
    assert candidates["dev"].features["sources"].feature.dtype == "string"
    dev_ids = {tid for _pk, tid in swords_target_ids(benchmark, "dev")}
    assert set(candidates["dev"]["target_id"]) == dev_ids
    frame = pd.concat(pd.read_parquet(folder / "candidates" / f"{split}.parquet") for split in ("dev", "test"))
    lines = pd.concat(pd.read_json(folder / "candidates" / f"{split}.jsonl", lines=True) for split in ("dev", "test"))
    assert (
        sorted(frame["substitute"])
        == sorted(lines["substitute"])
        == ["fast", "home", "hut", "slow", "soon", "sprinted"]
    )
    assert frame.set_index("substitute").loc["fast", "score"] == 0.75
    assert written.rows["labels"] == {"dev": labels["dev"].num_rows, "test": labels["test"].num_rows}


@pytest.mark.usefixtures("offline")
def test_a_benchmark_without_splits_loads_as_one_split_named_full(benchmark: Benchmark, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    services.benchmark_dataset_write(benchmark=benchmark, directory=folder)

    import datasets

    targets = datasets.load_dataset(str(folder))
    labels = datasets.load_dataset(str(folder), "labels")

    assert set(targets) == {"full"} and targets["full"].num_rows == 4
    assert labels["full"].num_rows == 24


def test_workers_appear_under_pseudonyms_only(benchmark: Benchmark, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    services.benchmark_dataset_write(benchmark=benchmark, directory=folder)

    workers = set(pd.read_parquet(folder / "labels" / "full.parquet")["worker"])

    assert len(workers) == 4 and all(name.startswith("w-") for name in workers)
    text = "".join(path.read_text() for path in folder.rglob("*") if path.suffix in {".jsonl", ".json", ".md"})
    assert not any(worker in text for worker in WORKERS)


def test_the_card_names_its_configurations_license_and_what_a_reader_needs(
    benchmark: Benchmark, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    services.benchmark_dataset_write(benchmark=benchmark, directory=folder, license="cc-by-sa-4.0")

    card = (folder / "README.md").read_text()
    header = _header(card)

    assert header["license"] == "cc-by-sa-4.0"
    assert header["size_categories"] == ["n<1K"]
    assert [config["config_name"] for config in header["configs"]] == ["targets", "candidates", "labels"]
    assert header["configs"][0]["data_files"] == [{"split": "full", "path": "targets/full.parquet"}]
    for section in ("## How it was collected", "## Statistics", "## Agreement", "## Spam filtering", "## Filter audit"):
        assert section in card
    assert "Krippendorff's alpha" in card and "bootstrap interval" in card
    assert "| full | 4 | 4 | 6 | 24 |" in card
    assert "@inproceedings{lee-etal-2021-swords" in card


def test_the_released_format_is_the_swords_json_of_each_split(benchmark: Benchmark, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    services.benchmark_dataset_write(benchmark=benchmark, directory=folder)

    released = json.loads((folder / "swords" / "full.json").read_text())

    assert len(released["targets"]) == 4 and len(released["substitutes"]) == 6


def test_the_command_writes_the_folder_and_an_export_job_zips_it(benchmark: Benchmark, tmp_path: Path) -> None:
    folder = tmp_path / "out"
    call_command("export_benchmark", "dataset", "--format", "dataset", "--output", str(folder), "--license", "mit")
    path = services.benchmark_export_to_path(benchmark=benchmark, format="dataset", path=tmp_path / "d.zip")

    assert "license: mit" in (folder / "README.md").read_text()
    with zipfile.ZipFile(path) as archive:
        assert "dataset/README.md" in archive.namelist()
        assert "dataset/labels/full.parquet" in archive.namelist()
    with pytest.raises(CommandError, match="not empty"):
        call_command("export_benchmark", "dataset", "--format", "dataset", "--output", str(folder))
