"""Which candidate source pays off (docs/design.md §14): per source, on small SWORDS and ProLex
benchmarks whose figures are worked out by hand below; the page, the API and the ``stats`` export."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from analysis.services import benchmark_source_yield, price_per_label
from analysis.source_yield import CountProfile, SourceCategories, source_yield
from annotation.models import Benchmark, Candidate, CandidateStage, Context, Label, Target, Worker
from annotation.tallies import tallies_benchmark_recount
from hits.models import HIT, Assignment, AssignmentStatus, Batch
from tests.base import Cast

LLM = "llm:m"


def _target(benchmark: Benchmark, text: str, word: str) -> Target:
    context = Context.objects.create(benchmark=benchmark, text=text)
    return Target.objects.create(benchmark=benchmark, context=context, word=word, offset=text.index(word), pos="verb")


def _imported(candidate: Candidate, *values: str) -> None:
    Label.objects.bulk_create(
        Label(candidate=candidate, value=value, origin="file.json", position=position)
        for position, value in enumerate(values)
    )


def _judged_benchmark(scheme: str) -> tuple[Benchmark, dict[str, Candidate]]:
    """Four candidates of one target, from CoInCo and a model, with imported labels:
    perched [coinco] accept accept reject; rested [coinco, llm:m] accept reject reject abstain;
    squatted [llm:m] reject reject reject (ProLex: abstain abstain); lounged [llm:m] none (ProLex: accept reject)."""
    benchmark = Benchmark.objects.create(name=f"yield-{scheme}", scheme=scheme)
    sat = _target(benchmark, "The cat sat on the mat.", "sat")
    made = {
        text: Candidate.objects.create(target=sat, text=text, sources=sources)
        for text, sources in (
            ("perched", ["coinco"]),
            ("rested", ["coinco", LLM]),
            ("squatted", [LLM]),
            ("lounged", [LLM]),
        )
    }
    _imported(made["perched"], "accept", "accept", "reject")
    _imported(made["rested"], "accept", "reject", "reject", "abstain")
    if scheme == "prolex":
        _imported(made["squatted"], "abstain", "abstain")
        _imported(made["lounged"], "accept", "reject")
    else:
        _imported(made["squatted"], "reject", "reject", "reject")
    # Written as an import writes them (docs/design.md §7, "Tallies"): the table reads them.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    return benchmark, made


def _assignment(batch: Batch, hit: HIT, user: Any, *, filtered: bool = False) -> Assignment:
    now = timezone.now()
    return Assignment.objects.create(
        hit=hit,
        worker=Worker.objects.get(user=user),
        status=AssignmentStatus.SUBMITTED,
        filtered=filtered,
        claimed_at=now,
        deadline=now + timedelta(minutes=30),
        submitted_at=now,
    )


@pytest.mark.django_db
def test_swords_sources_by_hand_with_the_price_of_collected_labels(cast: Cast) -> None:
    benchmark, made = _judged_benchmark("swords")
    ran = _target(benchmark, "He ran home.", "ran")
    sprinted = Candidate.objects.create(target=ran, text="sprinted", sources=["system:bert"])
    Candidate.objects.create(target=ran, text="dashed", sources=["thesaurus"], stage=CandidateStage.EXCLUDED)
    raced = Candidate.objects.create(target=ran, text="raced", sources=[])
    batch = Batch.objects.create(
        benchmark=benchmark, step=2, assignments_per_hit=3, backend="local", reward=Decimal("0.30")
    )
    hit = HIT.objects.create(batch=batch, target=ran, part=0, assignments_required=3)
    first, second = _assignment(batch, hit, cast.alice), _assignment(batch, hit, cast.bob)
    spam = _assignment(batch, hit, cast.spammer, filtered=True)
    Label.objects.create(candidate=sprinted, value="accept", assignment=first, worker=first.worker)
    Label.objects.create(candidate=sprinted, value="accept", assignment=second, worker=second.worker)
    Label.objects.create(candidate=raced, value="abstain", assignment=second, worker=second.worker)
    # Filtered work was paid but its label counts nowhere: squatted keeps its three rejects.
    Label.objects.create(candidate=made["squatted"], value="accept", assignment=spam, worker=spam.worker)
    # The tallies written as the submits and the refresh that filtered the spam would write them.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)

    # Three assignments at $0.30 paid for three labels that count.
    assert price_per_label(benchmark=benchmark) == Decimal("0.30")
    found = benchmark_source_yield(benchmark=benchmark)

    assert found is not None
    assert (found["acceptable"], found["price_per_label"]) == ("acceptable (score above 0.5)", "0.3000")
    rows = {row["source"]: row for row in found["sources"]}
    assert [row["source"] for row in found["sources"]] == [LLM, "coinco", "(no source)", "system:bert"]
    # coinco: perched 2/3 (acceptable), rested 1/4 (conceivable): 7 labels.
    assert rows["coinco"] == {
        "source": "coinco",
        "candidates": 2,
        "only_this_source": 1,
        "judged": 2,
        "labels": 7,
        "acceptable": 1,
        "conceivable": 2,
        "share_acceptable": 0.5,
        "share_conceivable": 1.0,
        "cost": "2.1000",
        "cost_per_acceptable": "2.1000",
    }
    # llm:m: rested 1/4, squatted 0/3, lounged unjudged.
    assert {key: rows[LLM][key] for key in ("candidates", "only_this_source", "judged", "labels")} == {
        "candidates": 3,
        "only_this_source": 2,
        "judged": 2,
        "labels": 7,
    }
    assert (rows[LLM]["acceptable"], rows[LLM]["conceivable"], rows[LLM]["share_conceivable"]) == (0, 1, 0.5)
    assert (rows[LLM]["cost"], rows[LLM]["cost_per_acceptable"]) == ("2.1000", None)
    assert (rows["system:bert"]["labels"], rows["system:bert"]["acceptable"]) == (2, 1)
    assert rows["system:bert"]["cost_per_acceptable"] == "0.6000"
    assert (rows["(no source)"]["judged"], rows["(no source)"]["acceptable"], rows["(no source)"]["labels"]) == (
        1,
        0,
        1,
    )
    assert "thesaurus" not in rows


@pytest.mark.django_db
def test_prolex_sources_by_hand_in_its_own_words_and_without_a_price() -> None:
    benchmark, _ = _judged_benchmark("prolex")

    found = benchmark_source_yield(benchmark=benchmark)

    assert found is not None
    assert found["acceptable"] == "acceptable (more 1s than -1s)"
    assert found["price_per_label"] is None
    rows = {row["source"]: row for row in found["sources"]}
    # perched 1 1 -1 acceptable; rested 1 -1 -1 0 has a 1; squatted 0 0 nothing; lounged 1 -1 a tie with a 1.
    assert {key: rows["coinco"][key] for key in ("judged", "labels", "acceptable", "conceivable", "cost")} == {
        "judged": 2,
        "labels": 7,
        "acceptable": 1,
        "conceivable": 2,
        "cost": None,
    }
    assert {key: rows[LLM][key] for key in ("judged", "labels", "acceptable", "conceivable")} == {
        "judged": 3,
        "labels": 8,
        "acceptable": 0,
        "conceivable": 2,
    }
    assert rows[LLM]["share_conceivable"] == pytest.approx(2 / 3)


def test_a_candidate_counts_for_each_of_its_sources_and_money_is_rounded_to_four_places() -> None:
    categories = SourceCategories("acceptable", "conceivable", lambda a, r, b: (a > r + b, a > 0))
    rows = source_yield(
        [
            CountProfile("a", False, 2, 1, 0, 3),  # three candidates, each 2 accepts 1 reject
            CountProfile("b", False, 2, 1, 0, 3),
            CountProfile("b", True, 0, 0, 0, 4),  # unjudged
        ],
        categories,
        Decimal("1") / 3,
    )
    assert [(row["source"], row["candidates"], row["judged"], row["labels"]) for row in rows] == [
        ("b", 7, 3, 9),
        ("a", 3, 3, 9),
    ]
    assert (rows[0]["cost"], rows[0]["cost_per_acceptable"]) == ("3.0000", "1.0000")


@pytest.mark.django_db
def test_the_statistics_page_the_api_and_the_stats_export_show_the_table(cast: Cast) -> None:
    benchmark, _ = _judged_benchmark("swords")
    sws = Benchmark.objects.create(name="yield-sws", scheme="sws")
    client = Client()
    client.force_login(cast.researcher)

    page = client.get(f"/benchmarks/{benchmark.name}/statistics/")
    api = client.get(f"/api/benchmarks/{benchmark.name}/statistics/sources")
    export = client.get(f"/benchmarks/{benchmark.name}/exports/stats/download")

    assert page.status_code == 200
    text = page.content.decode()
    assert "Which candidate source pays off" in text and f"<code>{LLM}</code>" in text and "No price" in text
    assert api.status_code == 200
    assert api.json()["sources"] == benchmark_source_yield(benchmark=benchmark)["sources"]  # type: ignore[index]
    assert export.status_code == 200
    document = json.loads(b"".join(export.streaming_content) if export.streaming else export.content)  # type: ignore[attr-defined]
    assert [row["source"] for row in document["by_candidate_source"]["sources"]] == [LLM, "coinco"]
    assert client.get(f"/api/benchmarks/{sws.name}/statistics/sources").status_code == 404
    assert "Which candidate source pays off" not in client.get(f"/benchmarks/{sws.name}/statistics/").content.decode()


def test_the_price_of_a_label_includes_the_crowds_fee(cast: Cast) -> None:
    benchmark, made = _judged_benchmark("swords")
    ran = _target(benchmark, "He ran home.", "ran")
    sprinted = Candidate.objects.create(target=ran, text="sprinted", sources=["thesaurus"])
    batch = Batch.objects.create(
        benchmark=benchmark, step=2, assignments_per_hit=3, backend="mturk", reward=Decimal("0.50")
    )
    hit = HIT.objects.create(batch=batch, target=ran, part=0, assignments_required=3)
    work = _assignment(batch, hit, cast.alice)
    forged = _assignment(batch, hit, cast.bob)
    # The first is MTurk's, found by a sync; the second carries an id no sync confirmed: not counted.
    Assignment.objects.filter(pk=work.pk).update(external_id="A1", external_status="Submitted")
    Assignment.objects.filter(pk=forged.pk).update(external_id="A2")
    for assignment in (work, forged):
        for candidate, value in ((sprinted, "accept"), (made["squatted"], "reject")):
            Label.objects.create(candidate=candidate, value=value, assignment=assignment, worker=assignment.worker)

    # One confirmed assignment: $0.50 and MTurk's 20 % fee ($0.10) for its two labels.
    assert price_per_label(benchmark=benchmark) == Decimal("0.30")
