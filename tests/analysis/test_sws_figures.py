"""Smart Word Suggestions' figures: counts over released and merged substitutes, PA-det and PA-sug
of the annotators here (or "not available"), the merged suggestions page, the CSV and the frame."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from analysis.services import benchmark_export
from annotation.models import Benchmark
from annotation.services import benchmark_import
from hits.models import HITItem
from hits.services import AnswersInvalid, assignment_claim_next, assignment_submit, hits_generate
from schemes.sws.figures import sws_frame, sws_statistics
from schemes.sws.formats import SwsEntry
from tests.base import PASSWORD, Cast

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "sws_small.json"
SENTENCE = "The results were very good and quick."


def test_the_statistics_count_spans_suggestions_votes_types_and_multiword_targets() -> None:
    entries = [
        SwsEntry("a", "x", ["x"], [[[0, 1], {"p": 2, "q": 1}, 1], [[1, 3], {"r": 1}, 2]]),
        SwsEntry("b", "y", ["y"], []),
    ]
    assert sws_statistics(entries) == {
        "contexts": 2,
        "targets": 2,
        "suggestions": 3,
        "votes": 4,
        "types": {"refine-usage": 1, "diversify-expression": 1},
        "multiword_targets": 1,
        "per_target": {"suggestions": 1.5, "votes": 2.0},
        "per_suggestion": {"votes": 4 / 3},
    }


def _stats(name: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("benchmark_stats", name, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_an_imported_release_reports_its_counts_and_agreement_not_available(cast: Cast) -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="sws", fmt="sws")
    stats = _stats("sws")
    assert (stats["contexts"], stats["targets"], stats["suggestions"], stats["votes"]) == (3, 5, 8, 13)
    assert stats["agreement"] == {
        "available": False,
        "note": "not available: no sentence was marked here by two annotators",
        "pa_det": None,
        "pa_sug": None,
        "pairs": 0,
        "shared_targets": 0,
    }
    client = Client()
    client.login(username="rita", password=PASSWORD)
    assert client.get("/api/benchmarks/sws/statistics").json()["types"] == {
        "refine-usage": 3,
        "diversify-expression": 2,
    }
    page = client.get("/benchmarks/sws/statistics/").content.decode()
    assert "Not available." in page
    suggestions = client.get("/benchmarks/sws/suggestions/").content.decode()
    assert "big concept (2)" in suggestions and "released" in suggestions


def _target(word: str, suggestions: str, kind: str) -> dict[str, object]:
    start = SENTENCE.index(word)
    return {"start": start, "end": start + len(word), "suggestions": suggestions, "type": kind}


def test_annotators_work_is_merged_exported_and_compared(cast: Cast, tmp_path: Path) -> None:
    path = tmp_path / "new.json"
    path.write_text(json.dumps({"n-1": {"sentence": SENTENCE, "substitutes": []}}))
    benchmark_import(path_or_file=path, benchmark_name="fresh", fmt="sws")
    benchmark = Benchmark.objects.get(name="fresh")
    benchmark.scheme_settings = {"min_targets": 2}
    benchmark.save()
    hits_generate(benchmark=benchmark, step=1, seed=1)
    work = {
        cast.alice: [
            _target("very good", "excellent; great", "refine-usage"),
            _target("quick", "fast", "refine-usage"),
        ],
        cast.bob: [
            _target("very good", "Excellent", "diversify-expression"),
            _target("results", "outcomes", "refine-usage"),
        ],
        cast.carol: [
            _target("very good", "superb", "diversify-expression"),
            _target("quick", "rapid; fast", "refine-usage"),
        ],
    }
    for user, targets in work.items():
        claim = assignment_claim_next(worker=user.worker)
        assert claim is not None
        item = HITItem.objects.get(hit=claim.hit)
        if user == cast.alice:
            with pytest.raises(AnswersInvalid, match="Mark at least 2 targets"):
                assignment_submit(assignment=claim, answers={item.pk: json.dumps({"targets": targets[:1]})})
        assignment_submit(assignment=claim, answers={str(item.pk): json.dumps({"targets": targets})})

    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format="sws", out=out)
    exported = json.loads(out.getvalue())["n-1"]
    assert exported["sentence_split"] == ["The", "results", "were", "very", "good", "and", "quick", "."]
    # "results" was marked by one annotator only; "very good" goes to the majority type.
    assert exported["substitutes"] == [
        [[3, 5], {"excellent": 2, "great": 1, "superb": 1}, 2],
        [[6, 7], {"fast": 2, "rapid": 1}, 1],
    ]
    stats = _stats("fresh")
    assert stats["agreement"]["available"] is True
    assert stats["agreement"]["pa_det"] == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)
    assert stats["collected"] == {
        "sentences_marked": 1,
        "discarded": 0,
        "merged_targets": 2,
        "voting_index": 2 / 3 * 0 + (1 + 2 / 3) / 2,
    }

    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format="sws-csv", out=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(row["target"], row["suggestion"], row["votes"], row["origin"]) for row in rows[:2]] == [
        ("very good", "excellent", "2", "collected"),
        ("very good", "great", "1", "collected"),
    ]
    frame = sws_frame(benchmark=benchmark)
    assert frame.groupby("target")["votes"].sum().to_dict() == {"quick": 3, "very good": 4}

    client = Client()
    client.login(username="rita", password=PASSWORD)
    [sentence] = client.get("/api/benchmarks/fresh/suggestions").json()["results"]
    assert (sentence["id"], sentence["annotators"]) == ("n-1", 3)
    assert [(target["text"], target["origin"], target["voting_index"]) for target in sentence["targets"]] == [
        ("very good", "collected", 1.0),
        ("quick", "collected", 2 / 3),
    ]
