"""The import report lists candidates spelled like their target and says how HITs treat them (docs/design.md §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.importers import benchmark_import
from tests.annotation.import_helpers import record, write_jsonl

pytestmark = pytest.mark.django_db


def test_a_candidate_equal_to_its_target_is_listed_once_with_its_treatment(tmp_path: Path) -> None:
    candidates = [{"text": " Calm "}, {"text": "still"}]
    path = write_jsonl(tmp_path / "same.jsonl", [record(candidates=candidates)])

    report = benchmark_import(path_or_file=path, benchmark_name="same")
    again = benchmark_import(path_or_file=path, benchmark_name="same")

    assert (report.same_as_target_count, report.same_as_target) == (1, ["'Calm' for target 'calm' (line 1)"])
    assert "candidates equal to their target word: 1; each is shown once in its HIT" in report.summary()
    assert "'Calm' for target 'calm' (line 1)" in report.summary()
    assert again.same_as_target_count == 0  # nothing new was created
