"""Worker-aware aggregation of a stored benchmark: controls as known answers, the posteriors in
the candidates export beside the score, each worker's reliability in the raw answers export."""

from __future__ import annotations

import csv
import io
import json
import math
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from analysis import services
from analysis.aggregation import DAWID_SKENE, MACE, METHODS
from analysis.services.aggregation import benchmark_aggregation, candidate_posteriors
from annotation.models import Candidate, Label
from hits.models import Assignment
from tests.analysis.labelled import labelled_benchmark
from tests.base import make_cast
from tests.hits.submitted_work import swords_work

pytestmark = pytest.mark.django_db


def _csv(benchmark, format: str) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format=format, out=out)
    return list(csv.DictReader(io.StringIO(out.getvalue())))


@pytest.mark.parametrize("method", METHODS)
def test_controls_anchor_reliability_of_collected_work(method: str) -> None:
    cast = make_cast()
    benchmark, submitted = swords_work(cast)
    # alice accepts the copy and rejects the distractor; bob abstains on both.
    assert not Assignment.objects.filter(hit__batch__benchmark=benchmark, filtered=True).exists()
    fit = benchmark_aggregation(benchmark=benchmark, method=method)
    assert fit.controls == 2 * len(submitted)
    reliability = fit.reliability_of()
    assert reliability[cast.alice.worker.pk] > reliability[cast.bob.worker.pk]
    assert fit.workerless_reliability is None
    posterior = fit.posterior_of()
    perched = Candidate.objects.get(target__benchmark=benchmark, text="perched")
    rested = Candidate.objects.get(target__benchmark=benchmark, text="rested")
    # Both accepted "perched"; alice accepted "rested", bob rejected it.
    assert posterior[perched.pk] > posterior[rested.pk]
    assert all(0.0 <= value <= 1.0 for value in posterior.values())


def test_the_answers_export_gives_each_worker_reliability() -> None:
    cast = make_cast()
    benchmark, _ = swords_work(cast)
    rows = _csv(benchmark, "answers-csv")
    fits = {method: benchmark_aggregation(benchmark=benchmark, method=method).reliability_of() for method in METHODS}
    assert rows
    for row in rows:
        worker = cast.alice.worker if _worker_of(row) == cast.alice.worker.pk else cast.bob.worker
        assert float(row["worker_reliability_dawid_skene"]) == pytest.approx(fits[DAWID_SKENE][worker.pk], abs=1e-6)
        assert float(row["worker_reliability_mace"]) == pytest.approx(fits[MACE][worker.pk], abs=1e-6)
    values = {row["worker_reliability_dawid_skene"] for row in rows}
    assert len(values) == 2


def _worker_of(row: dict[str, str]) -> int:
    return Assignment.objects.get(pk=int(row["assignment_id"])).worker_id


def test_the_candidates_export_puts_the_posteriors_beside_the_score() -> None:
    benchmark = labelled_benchmark(
        "aggregated",
        [("bright", "adj", [("shiny", ["coinco"], "AAAAR"), ("dull", ["coinco"], "RRRRA"), ("lit", ["roget"], "")])],
        workers=["w1", "w2", "w3", "w4", "w5"],
    )
    rows = {row["text"]: row for row in _csv(benchmark, "candidates-csv")}
    assert float(rows["shiny"]["score"]) == pytest.approx(0.8)
    for column in ("posterior_dawid_skene", "posterior_mace"):
        assert float(rows["shiny"][column]) > 0.5 > float(rows["dull"][column])
        # A candidate without a valid label has a score of none and no posterior either.
        assert rows["lit"][column] == "" and rows["lit"]["score"] == ""
    assert Label.objects.filter(candidate__target__benchmark=benchmark).count() == 10


def test_labels_without_a_worker_are_one_pooled_worker() -> None:
    benchmark = labelled_benchmark(
        "pooled", [("run", "v", [("sprint", ["coinco"], "AAR"), ("walk", ["coinco"], "RRR")])]
    )
    fit = benchmark_aggregation(benchmark=benchmark, method=DAWID_SKENE)
    assert fit.worker_ids.size == 0 and fit.workerless_reliability is not None
    posterior = list(fit.posterior)
    assert posterior[0] > posterior[1] and not any(math.isnan(value) for value in posterior)


def test_the_target_page_shows_the_posteriors_beside_the_score_when_asked(client) -> None:  # type: ignore[no-untyped-def]
    cast = make_cast()
    client.force_login(cast.researcher)
    benchmark = labelled_benchmark(
        "target-posteriors",
        [("bright", "adj", [("shiny", ["coinco"], "AAAAR"), ("dull", ["coinco"], "RRRRA")])],
        workers=["w1", "w2", "w3", "w4", "w5"],
    )
    shiny = Candidate.objects.get(target__benchmark=benchmark, text="shiny")
    url = reverse("target-detail", args=[shiny.target_id])
    plain = client.get(url).content.decode()
    assert "MACE</th>" not in plain and "Show the worker-aware posteriors" in plain
    shown = client.get(url, {"posteriors": "1"})
    assert shown.status_code == 200
    page = shown.context["page"]
    assert page.with_posteriors
    expected = candidate_posteriors(benchmark=benchmark, candidate_ids=[shiny.pk])[shiny.pk]
    row = next(row for row in page.candidates if row.candidate.pk == shiny.pk)
    assert (row.posterior_dawid_skene, row.posterior_mace) == expected
    assert expected[0] is not None and expected[0] > 0.5
    html = shown.content.decode()
    assert "Dawid-Skene</th>" in html and "MACE</th>" in html
    assert f"{expected[0]:.2f}" in html


def test_the_statistics_sum_up_a_model_beside_the_score_when_asked() -> None:
    cast = make_cast()
    benchmark, _ = swords_work(cast)
    api = APIClient()
    api.force_authenticate(cast.researcher)
    url = f"/api/benchmarks/{benchmark.name}/statistics"
    plain = api.get(url).json()
    assert "aggregation" not in plain
    asked = api.get(url, {"aggregation": "mace"}).json()
    summary = asked["aggregation"]
    assert summary["method"] == "mace" and summary["controls"] == 4 and summary["workers"] == 2
    # The score's figures stay as they were.
    assert {key: value for key, value in asked.items() if key not in ("aggregation", "interaction")} == {
        key: value for key, value in plain.items() if key != "interaction"
    }
    assert summary["acceptable_by_both"] <= min(summary["acceptable_by_score"], summary["acceptable_by_posterior"])
    assert api.get(url, {"aggregation": "vote"}).status_code == 400
    out = StringIO()
    call_command("benchmark_stats", benchmark.name, "--json", "--aggregation", "dawid_skene", stdout=out)
    assert json.loads(out.getvalue())["aggregation"]["method"] == "dawid_skene"
    text = StringIO()
    call_command("benchmark_stats", benchmark.name, "--aggregation", "mace", stdout=text)
    assert "acceptable_by_posterior" in text.getvalue()


def test_the_statistics_page_lists_each_worker_reliability(client) -> None:  # type: ignore[no-untyped-def]
    cast = make_cast()
    benchmark, _ = swords_work(cast)
    client.force_login(cast.researcher)
    url = reverse("analysis-statistics", args=[benchmark.name])
    plain = client.get(url)
    assert "reliability (Dawid-Skene)" not in plain.content.decode()
    assert "reliability_mace" not in plain.context["workers"][0]
    response = client.get(url, {"reliability": "1"})
    assert response.status_code == 200
    rows = {row["worker_id"]: row for row in response.context["workers"]}
    fits = {method: benchmark_aggregation(benchmark=benchmark, method=method).reliability_of() for method in METHODS}
    for worker in (cast.alice.worker, cast.bob.worker):
        assert rows[worker.pk]["reliability_dawid_skene"] == fits[DAWID_SKENE][worker.pk]
        assert rows[worker.pk]["reliability_mace"] == fits[MACE][worker.pk]
    html = response.content.decode()
    assert "reliability (Dawid-Skene)" in html and f"{fits[MACE][cast.alice.worker.pk]:.3f}" in html
    workers_page = client.get(reverse("pipeline-workers", args=[benchmark.name])).content.decode()
    assert reverse("analysis-statistics", args=[benchmark.name]) + "?reliability=1#workers" in workers_page
