"""A researcher excludes a flagged candidate: it is collected no further, its target goes on without
it, and statistics and exports leave it and its labels out (docs/annotator.md)."""

import csv
import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from analysis.services import benchmark_export, benchmark_statistics
from annotation.models import Benchmark, Candidate, CandidateStage, Target, TargetStage
from hits.models import HITItem
from hits.services import candidate_exclude
from review.selectors import pipeline_progress
from review.services import benchmark_refresh
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db


def fill(benchmark: Benchmark, verdicts: dict[str, str] | None = None) -> None:
    """Three honest workers take every open slot, then the pipeline refreshes."""
    crowd = [simulated(f"honest-{index}") for index in range(3)]
    while any([work_once(worker, benchmark, honest(verdicts)) is not None for worker in crowd]):
        pass
    benchmark_refresh(benchmark=benchmark)


def candidate(benchmark: Benchmark, text: str) -> Candidate:
    return Candidate.objects.get(target__benchmark=benchmark, text=text)


def export(benchmark: Benchmark, format: str) -> str:
    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format=format, out=out)
    return out.getvalue()


def test_an_excluded_candidate_is_never_put_in_a_hit() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    assert candidate_exclude(candidate=candidate(benchmark, "rested"))

    step2_batch(benchmark)

    texts = set(HITItem.objects.filter(candidate__isnull=False).values_list("text", flat=True))
    assert texts == {"perched", "squatted", "lounged"}


def test_a_target_that_waits_only_on_an_excluded_candidate_goes_on_without_it() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    target = Target.objects.get(benchmark=benchmark)
    # Proposed after the HITs were made: it has no label, so the target cannot leave step 2.
    late = Candidate.objects.create(target=target, text="crouched", sources=["model"])
    fill(benchmark)
    target.refresh_from_db()
    assert target.stage == TargetStage.REDUCE
    step2 = pipeline_progress(benchmark=benchmark).steps[0]
    assert (step2.labels_collected, step2.labels_needed) == (12, 15)

    candidate_exclude(candidate=late)
    benchmark_refresh(benchmark=benchmark)

    target.refresh_from_db()
    late.refresh_from_db()
    assert target.stage == TargetStage.DONE
    assert late.stage == CandidateStage.EXCLUDED
    progress = pipeline_progress(benchmark=benchmark)
    assert (progress.steps[0].labels_collected, progress.steps[0].labels_needed) == (12, 12)
    assert progress.candidates_by_stage[CandidateStage.EXCLUDED] == 1


def test_statistics_and_exports_leave_an_excluded_candidate_and_its_labels_out() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    fill(benchmark, {"perched": "accept"})
    before = benchmark_statistics(benchmark=benchmark)
    assert (before["candidates"], before["labels"]) == (4, 12)

    candidate_exclude(candidate=candidate(benchmark, "squatted"))

    after = benchmark_statistics(benchmark=benchmark)
    assert (after["candidates"], after["labels"]) == (3, 9)
    candidates = [row["text"] for row in csv.DictReader(io.StringIO(export(benchmark, "candidates-csv")))]
    labels = {row["candidate"] for row in csv.DictReader(io.StringIO(export(benchmark, "labels-csv")))}
    substitutes = json.loads(export(benchmark, "swords"))["substitutes"].values()
    assert sorted(candidates) == sorted(labels) == ["lounged", "perched", "rested"]
    assert sorted(substitute["substitute"] for substitute in substitutes) == ["lounged", "perched", "rested"]


def test_excluding_is_a_researchers_post_that_returns_to_the_page_it_came_from(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    rested = candidate(benchmark, "rested")
    url = reverse("candidate-exclude", args=[rested.pk])
    annotator, researcher = Client(), Client()
    annotator.force_login(cast.alice)
    researcher.force_login(cast.researcher)

    assert annotator.post(url, {"next": "/"}).status_code == 403
    rested.refresh_from_db()
    assert rested.stage == CandidateStage.REDUCE

    response = researcher.post(url, {"next": "/hits/7/", "confirmed": "yes"})
    offsite = researcher.post(url, {"next": "https://elsewhere.example/", "confirmed": "yes"})

    assert response["Location"] == "/hits/7/"
    assert offsite["Location"] == reverse("benchmark-flags", args=[benchmark.name])
    rested.refresh_from_db()
    assert rested.stage == CandidateStage.EXCLUDED
    assert not candidate_exclude(candidate=rested)
