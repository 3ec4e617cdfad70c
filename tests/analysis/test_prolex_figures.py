"""ProLex's figures: counts of its rows, Cohen's kappa on the doubly judged substitutes (or "not
available"), and the quadruplets of a benchmark judged here, through the command, the API and the page."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client
from sklearn.metrics import cohen_kappa_score

from analysis.agreement import cohen_kappa_interval
from analysis.services import benchmark_export
from annotation.models import Benchmark, Candidate
from annotation.services import benchmark_import, cefr_level_set
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from schemes.prolex.figures import prolex_statistics
from schemes.prolex.formats import ProlexRow
from schemes.scores import ACCEPT, REJECT
from tests.base import PASSWORD, Cast
from tests.hits.factories import make_benchmark, make_target

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "prolex_small.csv"


def _row(target: str, sentence: str, acc: list[str], prof: list[str], unacc: list[str] | None = None) -> ProlexRow:
    return ProlexRow(target, sentence, acc, unacc or [], prof, [])


def test_the_statistics_count_entries_as_listed_and_contexts_without_their_marks() -> None:
    rows = [
        _row("use", "It is **use**ful to **use** it.", ["employ", "employ"], ["employ"], ["abuse"]),
        _row("use", "It is useful to **use** it.", [], []),
        _row("map", "It is useful to use **map**.", ["chart"], []),
    ]
    stats = prolex_statistics(rows)
    assert {key: stats[key] for key in ("targets", "contexts", "target_words")} == {
        "targets": 3,
        "contexts": 2,
        "target_words": 2,
    }
    assert (stats["acceptable"], stats["unacceptable"], stats["proficiency_acceptable"]) == (3, 1, 1)
    assert stats["per_target"] == {"acceptable": 1.0, "unacceptable": 1 / 3, "proficiency_acceptable": 1 / 3}
    assert stats["share_targets_without_acceptable"] == 1 / 3
    assert stats["share_targets_without_proficiency_acceptable"] == 2 / 3


def test_kappa_is_cohens_with_an_interval_around_it() -> None:
    rng = np.random.default_rng(3)
    first = rng.choice([ACCEPT, REJECT], size=80)
    second = np.where(rng.random(80) < 0.85, first, np.where(first == ACCEPT, REJECT, ACCEPT))
    estimate = cohen_kappa_interval(first, second, resamples=500, seed=1)
    assert estimate.kappa == pytest.approx(cohen_kappa_score(first, second))
    assert estimate.low < estimate.kappa < estimate.high and estimate.items == 80
    assert cohen_kappa_interval(first, second, resamples=500, seed=1) == estimate
    # Both annotators said 1 throughout: chance agreement is 1 and kappa is undefined, never 0.
    assert cohen_kappa_interval([ACCEPT] * 5, [ACCEPT] * 5).as_dict()["kappa"] is None


def test_an_imported_release_reports_its_counts_and_kappa_not_available(cast: Cast) -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="px", fmt="prolex")
    out = io.StringIO()
    call_command("benchmark_stats", "px", "--json", stdout=out)
    stats = json.loads(out.getvalue())
    assert (stats["scheme"], stats["targets"], stats["acceptable"], stats["proficiency_acceptable"]) == (
        "prolex",
        3,
        5,
        4,
    )
    assert stats["agreement"]["available"] is False and stats["agreement"]["kappa"] is None
    assert stats["agreement"]["note"].startswith("not available")

    client = Client()
    client.login(username="rita", password=PASSWORD)
    api = client.get("/api/benchmarks/px/statistics").json()
    assert api["agreement"]["note"].startswith("not available") and api["target_words"] == 3
    page = client.get("/benchmarks/px/statistics/").content.decode()
    assert "not available" in page and "It is **use**ful to **use** a map" in page


def test_judgments_collected_here_become_quadruplets_and_give_kappa(cast: Cast) -> None:
    benchmark = make_benchmark("judged", scheme="prolex")
    overall = make_target(
        benchmark,
        text="Both matter, but overall, I disagree.",
        word="overall",
        pos="",
        candidates=["generally", "fundamentally", "mostly"],
    )
    make_target(benchmark, text="The sea was calm.", word="calm", pos="", candidates=["loud"])
    hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[cast.alice.worker, cast.bob.worker], overlap=2)
    answers = {"generally": "1", "fundamentally": "1", "mostly": "-1", "loud": "-1"}
    for worker in (cast.alice.worker, cast.bob.worker):
        while (claim := assignment_claim_next(worker=worker)) is not None:
            items = HITItem.objects.filter(hit=claim.hit)
            assignment_submit(assignment=claim, answers={item.pk: answers[item.text] for item in items})
    # The researcher sets a level: "generally" counts as C1, above the target's B2.
    cefr_level_set(target=overall, candidate=Candidate.objects.get(text="generally"), level="c1")

    out = io.StringIO()
    benchmark_export(benchmark=Benchmark.objects.get(name="judged"), format="prolex", out=out)
    [row] = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert row["Sentence"] == "Both matter, but **overall**, I disagree."
    assert row["acc_subs"] == "['generally', 'fundamentally']" and row["unacc_subs"] == "['mostly']"
    assert row["prof_acc_subs"] == "['generally', 'fundamentally']" and row["prof_acc_cefr"] == "[4, 4]"
    agreement = json.loads(_stats("judged"))["agreement"]
    assert agreement["available"] is True and agreement["items"] == 4


def _stats(name: str) -> str:
    out = io.StringIO()
    call_command("benchmark_stats", name, "--json", stdout=out)
    return out.getvalue()


def test_an_imported_row_whose_target_experts_judged_again_exports_the_judgments(cast: Cast) -> None:
    """The release's own labels count with the experts' here: a substitute the file listed only as
    proficiency-oriented ("don't", "legitimate") gets its first judgments, "exploit" (-1 in the file)
    ties with a 1 here and is no longer unacceptable; the levels the file gave stay, and the row
    never judged ("big") comes back as imported."""
    benchmark_import(path_or_file=FIXTURE, benchmark_name="px", fmt="prolex")
    benchmark = Benchmark.objects.get(name="px")
    hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[cast.alice.worker])
    answers = {"employ": "1", "utilize": "-1", "exploit": "1", "don't": "1", "TRUE": "-1", "good": "1"}
    answers["legitimate"] = "1"
    while (claim := assignment_claim_next(worker=cast.alice.worker)) is not None:
        items = HITItem.objects.filter(hit=claim.hit)
        assignment_submit(assignment=claim, answers={item.pk: answers[item.text] for item in items})

    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format="prolex", out=out)
    rows = {row["target word"]: row for row in csv.DictReader(io.StringIO(out.getvalue()))}
    imported = {row["target word"]: row for row in csv.DictReader(FIXTURE.open(encoding="utf-8"))}
    use, valid = rows["use"], rows["valid"]
    # employ: 1, 1 imported and 1 here; utilize: 1 imported, -1 here (a tie); exploit: -1 and 1 (a tie).
    assert use["Sentence"] == imported["use"]["Sentence"]
    assert (use["acc_subs"], use["unacc_subs"]) == ("['employ', \"don't\"]", "[]")
    # The file's levels: the target 1 (A2), employ 2 (B1); "don't" None, as a phrase, which is kept.
    assert use["t_words_cefr"] == "1" and use["prof_acc_subs"] == "['employ', \"don't\"]"
    assert use["prof_acc_cefr"] == "[2, 'None']"
    # TRUE: 1 imported, -1 here (a tie); good: 1 and 1; legitimate: 1 here.
    assert (valid["acc_subs"], valid["unacc_subs"]) == ("['good', 'legitimate']", "[]")
    assert rows["big"] == imported["big"]
