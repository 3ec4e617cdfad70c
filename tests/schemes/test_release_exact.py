"""A release format round-trips exactly: text that a spreadsheet would run as a formula is the
release's text there, and only the tables meant for spreadsheets neutralise it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from analysis.services import benchmark_dataset_write, benchmark_export
from annotation.models import Benchmark
from annotation.services import benchmark_import
from schemes.sws.tokens import tokenize

pytestmark = pytest.mark.django_db

TRIGGERS = ("-", "=", "+", "@")


def _export(name: str, fmt: str) -> str:
    out = io.StringIO()
    benchmark_export(benchmark=Benchmark.objects.get(name=name), format=fmt, out=out)
    return out.getvalue()


def _prolex_release() -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["target word", "Sentence", "acc_subs", "unacc_subs", "prof_acc_subs", "prof_unacc_subs"])
    for trigger in TRIGGERS:
        writer.writerow(
            [
                "calm",
                f"{trigger} The sea was **calm** that night.",
                str(["still", f"{trigger}placid"]),
                "['rough']",
                "['still']",
                "[]",
            ]
        )
    writer.writerow(["-1", "The score was **-1** at the end.", "['minus one']", "[]", "[]", "[]"])
    return buffer.getvalue().encode()


def test_a_prolex_release_whose_cells_start_with_formula_characters_round_trips_byte_exactly() -> None:
    release = _prolex_release()
    file = io.BytesIO(release)
    file.name = "prolex.csv"
    benchmark_import(path_or_file=file, benchmark_name="px", fmt="prolex")

    exported = _export("px", "prolex")

    assert exported.encode() == release
    assert "calm,- The sea" in exported and "\n-1,The score" in exported


def test_the_dataset_folder_holds_the_same_prolex_release_bytes_as_the_export(tmp_path: Path) -> None:
    release = _prolex_release()
    file = io.BytesIO(release)
    file.name = "prolex.csv"
    benchmark_import(path_or_file=file, benchmark_name="px", fmt="prolex")

    benchmark_dataset_write(benchmark=Benchmark.objects.get(name="px"), directory=tmp_path, license="cc-by-4.0")

    assert (tmp_path / "prolex" / "full.csv").read_bytes() == release


def test_the_labels_table_still_neutralises_the_same_text_for_a_spreadsheet() -> None:
    file = io.BytesIO(_prolex_release())
    file.name = "prolex.csv"
    benchmark_import(path_or_file=file, benchmark_name="px", fmt="prolex")

    rows = list(csv.DictReader(io.StringIO(_export("px", "candidates-csv"))))

    texts = {row["text"] for row in rows}
    assert {"'-placid", "'=placid", "'+placid", "'@placid"} <= texts
    assert not {"-placid", "=placid", "+placid", "@placid"} & texts


def test_an_sws_release_with_formula_characters_round_trips_byte_exactly() -> None:
    sentences = {f"s-{index}": f"{trigger} he left early ." for index, trigger in enumerate(TRIGGERS)}
    data = {
        key: {
            "sentence": text,
            "sentence_split": [token.text for token in tokenize(text)],
            "substitutes": [[[2, 3], {"=soon": 2, "-quickly": 1}, 1]],
        }
        for key, text in sentences.items()
    }
    release = json.dumps(data, indent=4)
    file = io.BytesIO(release.encode())
    file.name = "sws.json"
    benchmark_import(path_or_file=file, benchmark_name="sws", fmt="sws")

    assert _export("sws", "sws") == release
