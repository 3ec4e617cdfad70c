"""The generation task runs step 1 of a SWORDS benchmark: proposals become candidates from the crowd,
judged in step 2 like any other, counted in the statistics by source and listed with their votes."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client

from analysis.services import benchmark_export, benchmark_statistics
from annotation.models import Benchmark, Candidate, Context, Target
from hits.models import HITItem
from hits.services import AnswersInvalid, assignment_claim_next, assignment_submit, hits_generate
from schemes import get_scheme
from schemes.swords.proposals import GENERATION
from tests.base import PASSWORD, Cast

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark = Benchmark.objects.create(name="gen", scheme_settings={"step1_proposers": 2})
    context = Context.objects.create(benchmark=benchmark, text="The cat sat on the mat.")
    target = Target.objects.create(context=context, benchmark=benchmark, word="sat", offset=8, pos="verb", lemma="sit")
    Candidate.objects.create(target=target, text="rest", sources=["coinco"])
    return benchmark


def _propose(worker: object, answer: object) -> None:
    claim = assignment_claim_next(worker=worker)  # type: ignore[arg-type]
    assert claim is not None
    item = HITItem.objects.get(hit=claim.hit)
    assignment_submit(assignment=claim, answers={item.pk: json.dumps(answer)})


def test_step_one_of_a_swords_benchmark_is_run_by_the_generation_task(benchmark: Benchmark) -> None:
    assert get_scheme(benchmark, step=1) is GENERATION
    assert get_scheme(benchmark, step=2) is get_scheme(benchmark)
    batch = hits_generate(benchmark=benchmark, step=1, seed=1)
    assert batch.assignments_per_hit == 2
    [item] = HITItem.objects.filter(hit__batch=batch)
    assert (item.kind, item.text, item.candidate_id) == ("propose-verb", "sat", None)


def test_proposals_become_crowd_candidates_that_step_two_judges(benchmark: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=1)
    claim = assignment_claim_next(worker=cast.alice.worker)
    assert claim is not None
    item = HITItem.objects.get(hit=claim.hit)
    with pytest.raises(AnswersInvalid, match="Type at least one substitute"):
        assignment_submit(assignment=claim, answers={item.pk: json.dumps({"substitutes": []})})
    assignment_submit(assignment=claim, answers={item.pk: {"substitutes": ["perched", "Rested", "was seated"]}})
    _propose(cast.bob.worker, {"substitutes": ["perching"]})

    sources = dict(Candidate.objects.values_list("text", "sources"))
    assert sources == {"rest": ["coinco", "crowd"], "perch": ["crowd"], "be seated": ["crowd"]}
    step2 = hits_generate(benchmark=benchmark, step=2, seed=1)
    judged = set(HITItem.objects.filter(hit__batch=step2, candidate__isnull=False).values_list("text", flat=True))
    assert judged == {"rest", "perch", "be seated"}
    by_source = benchmark_statistics(benchmark=benchmark)["by_source"]
    assert (by_source["crowd-only"]["candidates"], by_source["coinco-only"]["candidates"]) == (2, 1)


def test_the_proposals_page_and_csv_show_the_votes(benchmark: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=1)
    _propose(cast.alice.worker, {"substitutes": ["perched", "rested"]})
    _propose(cast.bob.worker, {"substitutes": [], "none": True})

    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format="proposals-csv", out=out)
    rows = [
        (row["proposal"], row["votes"], row["proposers"], row["none"])
        for row in csv.DictReader(io.StringIO(out.getvalue()))
    ]
    assert rows == [("perch", "1", "2", "1"), ("rest", "1", "2", "1")]
    client = Client()
    client.login(username="rita", password=PASSWORD)
    page = client.get("/benchmarks/gen/proposals/").content.decode()
    assert "perch (1), rest (1)" in page
    assert "Proposals of the generation task (step 1)" in client.get("/benchmarks/gen/").content.decode()
    [target] = client.get("/api/benchmarks/gen/proposals").json()["results"]
    assert (target["word"], target["proposers"], target["none"], target["votes"]) == (
        "sat",
        2,
        1,
        {"perch": 1, "rest": 1},
    )
