"""The public SWORDS JSON format: labels, ids, extras, and an exact round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annotation.models import Benchmark, Candidate, Context, Label, Target
from annotation.selectors import benchmark_counts
from annotation.services import benchmark_import
from schemes.swords.formats import substitute_id
from tests.annotation.import_helpers import FIXTURES, snapshot, swords_from_db

pytestmark = pytest.mark.django_db

PLAIN = FIXTURES / "swords_small.json"
GZIPPED = FIXTURES / "swords_small.json.gz"


@pytest.mark.parametrize("path", [PLAIN, GZIPPED], ids=["plain", "gzipped"])
def test_a_swords_file_is_imported_with_its_labels_and_verified_ids(path: Path) -> None:
    report = benchmark_import(path_or_file=path, benchmark_name="swords")

    assert report.format == "swords"
    assert report.id_mismatch_count == 0
    benchmark = Benchmark.objects.get(name="swords")
    assert benchmark_counts(benchmark=benchmark) == {"contexts": 4, "targets": 3, "candidates": 9, "labels": 55}
    assert benchmark.extra == {"swords": {"substitutes_lemmatized": True}}
    assert set(Label.objects.values_list("origin", flat=True)) == {path.name}


def test_swords_labels_map_to_accept_reject_abstain_and_keep_their_spelling() -> None:
    benchmark_import(path_or_file=PLAIN, benchmark_name="swords")
    send = Candidate.objects.get(text="send")
    assert list(send.labels.order_by("position").values_list("position", "value", "raw_value")) == [
        (0, "accept", "TRUE_IMPLICIT"),
        (1, "accept", "TRUE"),
        (2, "accept", "TRUE"),
    ]
    speak = Candidate.objects.get(text="speak to")
    assert list(speak.labels.order_by("position").values_list("value", flat=True)) == ["reject"] * 3
    still = Candidate.objects.get(text="still")
    values = list(still.labels.order_by("position").values_list("raw_value", flat=True))
    assert values == ["TRUE", "TRUE", "FALSE", "TRUE", "TRUE", "TRUE", "FALSE", "TRUE", "UNSURE", "TRUE"]
    assert still.labels.get(position=8).value == "abstain"
    assert list(still.labels.order_by("position").values_list("step", flat=True)) == [2] * 3 + [3] * 7


def test_swords_rows_keep_ids_extras_casing_and_the_original_part_of_speech() -> None:
    data = json.loads(PLAIN.read_text())
    benchmark_import(path_or_file=PLAIN, benchmark_name="swords")

    calm = Target.objects.get(word="calm")
    calm_id, calm_file = next((tid, t) for tid, t in data["targets"].items() if t["target"] == "calm")
    assert calm.external_id == calm_id
    assert (calm.pos, calm.lemma) == ("adj", "calm")
    assert calm.extra == {"swords": {"pos": "ADJ", "extra": calm_file["extra"]}}
    assert calm.context.external_id == calm_file["context_id"]
    assert calm.context.extra == {"swords": {"extra": data["contexts"][calm_file["context_id"]]["extra"]}}

    paris = Target.objects.get(word="Paris")
    assert (paris.pos, paris.extra) == ("noun", {"swords": {"pos": "PROPN"}})

    serene = Candidate.objects.get(normalized="serene")
    assert serene.text == "Serene"
    assert serene.external_id == substitute_id(target_id=calm_id, substitute="Serene")
    assert serene.sources == ["roget"]
    smooth = Candidate.objects.get(text="smooth")
    assert (smooth.sources, smooth.extra) == ([], {"swords": {}})
    assert Candidate.objects.get(text="still").sources == ["coinco", "roget"]

    lonely = Context.objects.get(text__startswith="Nobody answered")
    assert (lonely.targets.count(), lonely.extra) == (0, {"swords": {}})


@pytest.mark.parametrize("path", [PLAIN, GZIPPED], ids=["plain", "gzipped"])
def test_the_stored_rows_rebuild_the_swords_file_exactly(path: Path) -> None:
    benchmark_import(path_or_file=path, benchmark_name="swords")
    rebuilt = json.dumps(swords_from_db(Benchmark.objects.get(name="swords")), indent=2)
    assert rebuilt == PLAIN.read_text()


def test_importing_a_swords_file_twice_changes_nothing() -> None:
    benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")
    before = snapshot()
    again = benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")
    assert snapshot() == before
    assert not again.changed
    assert (again.candidates.skipped, again.labels.skipped) == (9, 55)


def _rename_substitute(data: dict[str, Any], old: str, new: str) -> None:
    data["substitutes"] = {new if sid == old else sid: value for sid, value in data["substitutes"].items()}
    data["substitute_labels"] = {new if sid == old else sid: v for sid, v in data["substitute_labels"].items()}


def test_an_id_that_does_not_match_its_fields_is_reported_and_kept(tmp_path: Path) -> None:
    data = json.loads(PLAIN.read_text())
    old = next(sid for sid, s in data["substitutes"].items() if s["substitute"] == "peaceful")
    _rename_substitute(data, old, "s:not-a-checksum")
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(data, indent=2))

    report = benchmark_import(path_or_file=path, benchmark_name="swords")

    assert report.id_mismatch_count == 1
    [mismatch] = report.id_mismatches
    assert (mismatch.kind, mismatch.file_id, mismatch.expected_id) == ("substitute", "s:not-a-checksum", old)
    assert "s:not-a-checksum (expected " in report.summary()
    # The import goes ahead and keeps the file's id, so an export gives the file back as it was.
    assert Candidate.objects.get(text="peaceful").external_id == "s:not-a-checksum"
    assert json.dumps(swords_from_db(Benchmark.objects.get()), indent=2) == path.read_text()


def test_a_target_matching_its_context_only_up_to_case_is_stored_as_the_text_spells_it(tmp_path: Path) -> None:
    data = json.loads(PLAIN.read_text())
    calm = next(t for t in data["targets"].values() if t["target"] == "calm")
    calm["target"] = "CALM"
    path = tmp_path / "upper.json"
    path.write_text(json.dumps(data, indent=2))

    report = benchmark_import(path_or_file=path, benchmark_name="swords")

    target = Target.objects.get(external_id__in=data["targets"].keys(), pos="adj")
    assert target.word == "calm"
    assert target.extra["swords"]["target"] == "CALM"
    # The target id is computed on the lower-cased word, so it still matches.
    assert report.id_mismatch_count == 0
    assert json.dumps(swords_from_db(Benchmark.objects.get()), indent=2) == path.read_text()


def test_a_second_swords_file_with_other_file_facts_warns(tmp_path: Path) -> None:
    benchmark_import(path_or_file=PLAIN, benchmark_name="swords")
    data = json.loads(PLAIN.read_text())
    data["substitutes_lemmatized"] = False
    path = tmp_path / "unlemmatized.json"
    path.write_text(json.dumps(data))
    report = benchmark_import(path_or_file=path, benchmark_name="swords", origin=PLAIN.name)
    assert report.warnings and "replace" in report.warnings[0]
    assert Benchmark.objects.get().extra["swords"]["substitutes_lemmatized"] is False


def test_progress_counts_every_target_and_lone_context() -> None:
    calls: list[tuple[int, int | None]] = []
    benchmark_import(
        path_or_file=PLAIN, benchmark_name="swords", progress=lambda done, total: calls.append((done, total))
    )
    assert calls[-1] == (4, 4)


@pytest.mark.parametrize(
    "order",
    [
        ["substitutes_lemmatized", "substitute_labels", "substitutes", "targets", "contexts"],
        ["extra", "targets", "contexts", "substitutes", "substitute_labels", "substitutes_lemmatized"],
    ],
    ids=["reversed", "extra-first"],
)
def test_a_swords_file_is_recognised_whatever_the_order_of_its_top_level_keys(tmp_path: Path, order: list[str]) -> None:
    data = {**json.loads(PLAIN.read_text()), "extra": {"release": "v1.1"}}
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps({key: data[key] for key in order}, indent=2))

    report = benchmark_import(path_or_file=path, benchmark_name="swords")

    assert report.format == "swords"
    assert swords_from_db(Benchmark.objects.get()) == {key: value for key, value in data.items() if key != "extra"}
