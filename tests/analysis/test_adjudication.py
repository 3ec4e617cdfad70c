"""Adjudication (docs/adjudication.md): an item with every submission side by side, a researcher's
decision with a reason kept apart from the crowd's labels, the setting that lets the figures follow
decisions, and the queue of disagreements."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from analysis.exports import candidate_rows
from analysis.exports.tables import CANDIDATE_COLUMNS
from analysis.services import benchmark_statistics
from annotation.access import Role, access_grant
from annotation.models import Activity, ActivityKind, Benchmark, Candidate, Context, Label, Target, Worker
from annotation.tallies import tallies_targets_recount
from hits.models import Assignment, HITItem
from hits.services import assignment_claim_next, assignment_submit
from review.adjudication import OverrideRefused, candidate_override_set, item_resolve, overrides_apply_set
from review.models import CandidateOverride
from review.services import activity_undo
from schemes import get_scheme
from tests.base import Cast, make_user
from tests.hits.assignment_data import worker
from tests.scheme_benchmarks import scheme_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client: Client, cast: Cast) -> Client:
    client.force_login(cast.researcher)
    return client


def _target(benchmark: Benchmark, text: str, word: str) -> Target:
    context = Context.objects.create(benchmark=benchmark, text=text)
    return Target.objects.create(benchmark=benchmark, context=context, word=word, offset=text.index(word), pos="adj")


def _labels(candidate: Candidate, values: list[str]) -> None:
    for position, value in enumerate(values):
        Label.objects.create(
            candidate=candidate,
            value=value,
            origin="file.json",
            position=position,
            worker=worker(f"w{position}"),
        )
    # As an import's writer keeps them (docs/design.md §7, "Tallies").
    tallies_targets_recount(target_ids=[candidate.target_id])


@pytest.fixture
def labelled() -> Benchmark:
    """Three targets: clever 2/3 accepts (acceptable), dim 0/3 (inconceivable), rested 1/3 (conceivable)."""
    benchmark = Benchmark.objects.create(name="labelled")
    bright = _target(benchmark, "She is a bright student.", "bright")
    _labels(Candidate.objects.create(target=bright, text="clever", sources=["coinco"]), ["accept", "accept", "reject"])
    _labels(Candidate.objects.create(target=bright, text="dim", sources=["thesaurus"]), ["reject", "abstain", "reject"])
    sat = _target(benchmark, "The cat sat on the mat.", "sat")
    _labels(Candidate.objects.create(target=sat, text="rested", sources=["coinco"]), ["accept", "reject", "reject"])
    _target(benchmark, "He ran home quickly.", "quickly")
    return benchmark


def _submit(benchmark: Benchmark, user: User, choice: int) -> None:
    """Another annotator's submission of a HIT of the benchmark, every item answered with one choice."""
    scheme = get_scheme(benchmark)
    annotator = Worker.objects.get(user=user)
    assignment = assignment_claim_next(worker=annotator, benchmark=benchmark)
    assert assignment is not None
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme.page.choices[choice].value for item in items})


def test_a_decision_is_kept_apart_from_the_labels_and_logged(labelled: Benchmark, cast: Cast) -> None:
    dim = Candidate.objects.get(text="dim")
    labels_before = Label.objects.count()
    candidate_override_set(
        candidate=dim, decision="acceptable", reason="a dim light: the sense fits", by=cast.researcher
    )
    assert Label.objects.count() == labels_before
    assert list(dim.labels.values_list("value", flat=True).order_by("position")) == ["reject", "abstain", "reject"]
    override = CandidateOverride.objects.get(candidate=dim)
    assert (override.decision, override.reason, override.benchmark_id) == (
        "acceptable",
        "a dim light: the sense fits",
        labelled.pk,
    )
    entry = Activity.objects.get(benchmark=labelled, kind=ActivityKind.OVERRIDDEN)
    assert entry.actor == cast.researcher
    assert entry.result["candidate"] == dim.pk and entry.result["previous"] is None
    assert "a dim light" in entry.summary


def test_a_decision_needs_a_reason_and_a_known_category(labelled: Benchmark) -> None:
    dim = Candidate.objects.get(text="dim")
    with pytest.raises(OverrideRefused, match="reason"):
        candidate_override_set(candidate=dim, decision="acceptable", reason="   ")
    with pytest.raises(OverrideRefused, match="not a decision"):
        candidate_override_set(candidate=dim, decision="great", reason="why not")
    assert not CandidateOverride.objects.exists()
    assert not Activity.objects.filter(kind=ActivityKind.OVERRIDDEN).exists()


def test_undoing_a_decision_puts_back_the_one_it_replaced(labelled: Benchmark, cast: Cast) -> None:
    dim = Candidate.objects.get(text="dim")
    candidate_override_set(candidate=dim, decision="conceivable", reason="first look")
    candidate_override_set(candidate=dim, decision="acceptable", reason="second look")
    first, second = Activity.objects.filter(kind=ActivityKind.OVERRIDDEN).order_by("pk")
    activity_undo(activity=second, by=cast.researcher)
    assert CandidateOverride.objects.values_list("decision", "reason").get() == ("conceivable", "first look")
    # The first decision is the candidate's again: undoing it leaves the candidate to the crowd.
    activity_undo(activity=first, by=cast.researcher)
    assert not CandidateOverride.objects.exists()
    assert Activity.objects.filter(kind=ActivityKind.OVERRIDE_REMOVED).count() == 1


def test_the_figures_follow_decisions_only_when_the_benchmark_applies_them(labelled: Benchmark) -> None:
    candidate_override_set(candidate=Candidate.objects.get(text="dim"), decision="acceptable", reason="fits")
    candidate_override_set(candidate=Candidate.objects.get(text="clever"), decision="inconceivable", reason="no")
    # Crowd alone: clever acceptable, dim inconceivable, rested conceivable; three targets.
    crowd = benchmark_statistics(benchmark=labelled)
    assert crowd["per_target"]["acceptable"] == pytest.approx(1 / 3)
    assert crowd["per_target"]["inconceivable"] == pytest.approx(1 / 3)
    assert crowd["per_target"]["conceivable"] == pytest.approx(2 / 3)
    assert crowd["labels"] == 9
    overrides_apply_set(benchmark=labelled, apply=True)
    # Decisions applied: dim acceptable (score 1), clever inconceivable (score 0), rested unchanged.
    decided = benchmark_statistics(benchmark=labelled)
    assert decided["per_target"]["acceptable"] == pytest.approx(1 / 3)
    assert decided["per_target"]["inconceivable"] == pytest.approx(1 / 3)
    assert decided["by_source"]["thesaurus-only"]["acceptable"] == 1
    assert decided["by_source"]["coinco-only"]["acceptable"] == 0
    assert decided["by_source"]["coinco-only"]["mean_score"] == pytest.approx((0 + 1 / 3) / 2)
    assert decided["labels"] == 9
    overrides_apply_set(benchmark=labelled, apply=False)
    assert benchmark_statistics(benchmark=labelled)["by_source"] == crowd["by_source"]
    assert Activity.objects.filter(kind=ActivityKind.SETTING_CHANGED).count() == 2


def test_the_candidates_table_shows_the_decision_and_its_reason(labelled: Benchmark) -> None:
    candidate_override_set(candidate=Candidate.objects.get(text="dim"), decision="acceptable", reason="fits, here")
    column = {name: index for index, name in enumerate(CANDIDATE_COLUMNS)}

    def dim_row() -> tuple[object, ...]:
        return next(row for row in candidate_rows(benchmark=labelled) if row[column["text"]] == "dim")

    row = dim_row()
    assert (row[column["override"]], row[column["override_reason"]]) == ("acceptable", "fits, here")
    assert (row[column["score"]], row[column["category"]], row[column["labels"]]) == (0.0, "inconceivable", 3)
    overrides_apply_set(benchmark=labelled, apply=True)
    row = dim_row()
    assert (row[column["score"]], row[column["category"]], row[column["labels"]]) == (1.0, "acceptable", 3)
    clever = next(row for row in candidate_rows(benchmark=labelled) if row[column["text"]] == "clever")
    assert (clever[column["override"]], clever[column["override_reason"]]) == ("", "")


def test_the_candidates_csv_download_has_the_decision_columns(labelled: Benchmark, researcher: Client) -> None:
    candidate_override_set(candidate=Candidate.objects.get(text="rested"), decision="acceptable", reason="sat, rested")
    response = researcher.get(reverse("analysis-export-direct", args=[labelled.name, "candidates-csv"]))
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))  # type: ignore[attr-defined]
    rested = next(row for row in rows if row["text"] == "rested")
    assert (rested["override"], rested["override_reason"]) == ("acceptable", "sat, rested")


def test_the_swords_item_page_shows_each_submission_side_by_side(cast: Cast, researcher: Client) -> None:
    benchmark, _ = scheme_benchmark("swords", cast)
    _submit(benchmark, cast.bob, 1)
    target = Target.objects.filter(benchmark=benchmark, hits__assignments__worker__user=cast.bob).first()
    assert target is not None
    response = researcher.get(reverse("adjudication-item", args=[benchmark.name, target.pk]))
    assert response.status_code == 200
    page = response.context["page"]
    workers = [submission.worker for submission in page.submissions]
    # Pseudonyms, as in the exports: never the annotators' account names.
    assert len(workers) >= 1 and all(re.fullmatch(r"w-[0-9a-f]{16}", name) for name in workers)
    html = response.content.decode()
    assert "bob" not in html and "alice" not in html
    bob = Assignment.objects.get(hit__target=target, worker__user=cast.bob)
    bob_column = [index for index, submission in enumerate(page.submissions) if submission.assignment_id == bob.pk]
    assert len(bob_column) == 1 and len(workers) == len(set(workers))
    perched = next(line for line in page.candidates if line.candidate.text == "perched")
    assert perched.cells[bob_column[0]] == "reject"
    assert "Krippendorff" in html and 'id="side-by-side"' in html


def test_the_sws_item_page_draws_every_submissions_spans(cast: Cast, researcher: Client) -> None:
    benchmark, _ = scheme_benchmark("sws", cast)
    target = Target.objects.filter(benchmark=benchmark, hits__assignments__isnull=False).first()
    assert target is not None
    response = researcher.get(reverse("adjudication-item", args=[benchmark.name, target.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    # The four words alice marked, each drawn as a numbered span on the sentence.
    for number, word in enumerate(("cat", "sat", "mat", "afternoon"), start=1):
        assert f'<mark class="target" title="target {number}">{word}<sup>{number}</sup></mark>' in html
    assert "settled-comfortably-for-the-whole-afternoon" in html


def test_the_tsar_item_page_shows_each_simpler_word(cast: Cast, researcher: Client) -> None:
    benchmark, _ = scheme_benchmark("tsar", cast)
    target = Target.objects.filter(benchmark=benchmark, hits__assignments__isnull=False).first()
    assert target is not None
    response = researcher.get(reverse("adjudication-item", args=[benchmark.name, target.pk]))
    assert response.status_code == 200
    assert "rested" in response.content.decode()
    assert len(response.context["page"].submissions) == 1


def test_the_item_page_takes_a_fixed_number_of_statements(cast: Cast, researcher: Client) -> None:
    benchmark, _ = scheme_benchmark("swords", cast)
    target = Target.objects.filter(benchmark=benchmark, hits__assignments__isnull=False).first()
    assert target is not None
    url = reverse("adjudication-item", args=[benchmark.name, target.pk])
    researcher.get(url)
    with CaptureQueriesContext(connection) as small:
        assert researcher.get(url).status_code == 200
    _submit(benchmark, cast.bob, 1)
    _submit(benchmark, cast.carol, 2)
    for candidate in Candidate.objects.filter(target=target):
        candidate_override_set(candidate=candidate, decision="acceptable", reason="checked")
    with CaptureQueriesContext(connection) as large:
        assert researcher.get(url).status_code == 200
    assert len(large) == len(small), (len(small), len(large))
    assert len(small) == 12


def test_a_researcher_decides_on_the_page_with_a_reason(cast: Cast, researcher: Client) -> None:
    benchmark, _ = scheme_benchmark("prolex", cast)
    candidate = Candidate.objects.filter(target__benchmark=benchmark).order_by("pk").first()
    assert candidate is not None
    url = reverse("adjudication-decide", args=[benchmark.name, candidate.target_id])
    refused = researcher.post(url, {"candidate": candidate.pk, "decision": "acceptable", "reason": ""})
    assert refused.status_code == 400 and "Give a reason" in refused.content.decode()
    response = researcher.post(url, {"candidate": candidate.pk, "decision": "inconceivable", "reason": "off sense"})
    assert response.status_code == 302
    assert CandidateOverride.objects.values_list("candidate_id", "decision", "reason").get() == (
        candidate.pk,
        "inconceivable",
        "off sense",
    )
    page = researcher.get(reverse("adjudication-item", args=[benchmark.name, candidate.target_id]))
    assert "off sense" in page.content.decode()
    researcher.post(url, {"candidate": candidate.pk, "decision": ""})
    assert not CandidateOverride.objects.exists()


def test_the_queue_lists_contested_items_first_and_hides_resolved_ones(labelled: Benchmark, researcher: Client) -> None:
    sat = Target.objects.get(word="sat")
    bright = Target.objects.get(word="bright")
    more = Candidate.objects.create(target=sat, text="perched", sources=["coinco"])
    _labels(more, ["accept", "reject"])
    url = reverse("adjudication-queue", args=[labelled.name])
    # sat: rested 0.33 and perched 0.5 are within 0.2 of 0.5; bright: clever 0.67 is; dim 0 is not.
    shown = researcher.get(url).context["page"]
    assert [(target.word, target.contested) for target in shown] == [("sat", 2), ("bright", 1)]
    item_resolve(target=sat)
    assert [target.word for target in researcher.get(url).context["page"]] == ["bright"]
    assert [target.word for target in researcher.get(url, {"resolved": "1"}).context["page"]] == ["sat", "bright"]
    assert bright.pk


def test_outsiders_are_refused(labelled: Benchmark, cast: Cast) -> None:
    owner = make_user("olga", researcher=True)
    access_grant(benchmark=labelled, user=owner, role=Role.OWNER, by=None)
    outsider = Client()
    outsider.force_login(make_user("otto", researcher=True))
    target = Target.objects.get(word="bright")
    assert outsider.get(reverse("adjudication-item", args=[labelled.name, target.pk])).status_code == 404
    assert outsider.get(reverse("adjudication-queue", args=[labelled.name])).status_code == 404
    annotator = Client()
    annotator.force_login(cast.alice)
    response = annotator.get(reverse("adjudication-item", args=[labelled.name, target.pk]))
    assert response.status_code in (302, 403, 404)
    dim = Candidate.objects.get(text="dim")
    outsider.post(
        reverse("adjudication-decide", args=[labelled.name, target.pk]),
        {"candidate": dim.pk, "decision": "acceptable", "reason": "mine"},
    )
    assert not CandidateOverride.objects.exists()
