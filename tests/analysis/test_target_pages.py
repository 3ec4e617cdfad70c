"""A page per target and the search over targets, for every scheme (what the scheme has)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Benchmark, Candidate, CandidateStage, Context, Label, Target, TargetStage, Worker
from annotation.services import benchmark_import
from hits.models import Answer, Assignment, AssignmentStatus, HITFlag
from hits.selectors import VALID_ASSIGNMENT
from hits.services import hits_generate
from tests.base import Cast
from tests.hits.assignment_data import make_assignment, worker
from tests.hits.factories import make_batch, make_hit

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def researcher(client: Client, cast: Cast) -> Client:
    client.force_login(cast.researcher)
    return client


def _target(benchmark: Benchmark, text: str, word: str, pos: str, *, stage: str = TargetStage.REDUCE) -> Target:
    context = Context.objects.create(benchmark=benchmark, text=text)
    return Target.objects.create(
        benchmark=benchmark, context=context, word=word, offset=text.index(word), pos=pos, lemma=word, stage=stage
    )


def _labels(candidate: Candidate, values: list[str]) -> None:
    for position, value in enumerate(values):
        Label.objects.create(
            candidate=candidate, value=value, origin="file.json", position=position, worker=worker(f"w{position}")
        )


@pytest.fixture
def benchmark() -> Benchmark:
    """bright (adj): clever 2/3 accepts, dim 0/3; sat (verb, score stage): rested 1/3; quickly (adv): none."""
    benchmark = Benchmark.objects.create(name="found")
    bright = _target(benchmark, "She is a <b>bright</b> student & more.", "bright", "adj")
    clever = Candidate.objects.create(target=bright, text="clever", sources=["coinco", "thesaurus"])
    dim = Candidate.objects.create(target=bright, text="dim", sources=["thesaurus"])
    _labels(clever, ["accept", "accept", "reject"])
    _labels(dim, ["reject", "abstain", "reject"])
    sat = _target(benchmark, "The cat sat on the mat.", "sat", "verb", stage=TargetStage.SCORE)
    _labels(Candidate.objects.create(target=sat, text="rested", sources=["coinco"]), ["accept", "reject", "reject"])
    _target(benchmark, "He ran home quickly.", "quickly", "adv")
    return benchmark


def _found(client: Client, benchmark: Benchmark, **query: str) -> list[str]:
    response = client.get(reverse("target-list", args=[benchmark.name]), query)
    assert response.status_code == 200, response.content
    return [target["word"] for target in response.context["page"]]


def test_targets_are_found_by_word_part_of_speech_stage_and_score(researcher: Client, benchmark: Benchmark) -> None:
    assert _found(researcher, benchmark) == ["bright", "sat", "quickly"]
    assert _found(researcher, benchmark, word="BRI") == ["bright"]
    sat = Target.objects.get(word="sat")
    assert _found(researcher, benchmark, word=str(sat.pk)) == ["sat"]
    assert _found(researcher, benchmark, word="9" * 30) == []
    assert _found(researcher, benchmark, pos="adv") == ["quickly"]
    assert _found(researcher, benchmark, stage="score") == ["sat"]
    # clever scores 0.67, dim 0, rested 0.33.
    assert _found(researcher, benchmark, score_min="0.5") == ["bright"]
    assert _found(researcher, benchmark, score_min="0.3", score_max="0.4") == ["sat"]
    assert _found(researcher, benchmark, score_max="0") == ["bright"]
    assert _found(researcher, benchmark, word="bright", score_min="0.9") == []


def test_a_bad_search_says_what_is_wrong(researcher: Client, benchmark: Benchmark) -> None:
    response = researcher.get(reverse("target-list", args=[benchmark.name]), {"score_min": "0.8", "score_max": "0.2"})
    assert response.status_code == 400
    assert "must not be below the lower end" in response.content.decode()
    response = researcher.get(reverse("target-list", args=[benchmark.name]), {"pos": "pronoun"})
    assert response.status_code == 400


def test_the_search_pages_keep_their_query(researcher: Client) -> None:
    benchmark = Benchmark.objects.create(name="many")
    for number in range(105):
        _target(benchmark, f"Sentence {number} is bright.", "bright", "adj")
    page = researcher.get(reverse("target-list", args=["many"]), {"word": "bright"}).content.decode()
    assert "105 targets found" in page
    assert "?word=bright&amp;page=2" in page


def test_the_target_page_shows_its_context_candidates_labels_and_who_gave_them(
    researcher: Client, benchmark: Benchmark
) -> None:
    bright = Target.objects.get(word="bright")
    response = researcher.get(reverse("target-detail", args=[bright.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    # The context is escaped, the target highlighted.
    assert 'She is a &lt;b&gt;<mark class="target">bright</mark>&lt;/b&gt; student &amp; more.' in page
    rows = {row.candidate.text: row for row in response.context["page"].candidates}
    assert rows["clever"].counts == {"accept": 2, "reject": 1, "abstain": 0}
    assert rows["clever"].score == pytest.approx(2 / 3) and rows["clever"].category == "acceptable"
    assert (rows["dim"].score, rows["dim"].category) == (0.0, "inconceivable")
    assert "coinco, thesaurus" in page
    assert "w0, w1" in page  # the two who accepted clever
    assert f"Target {bright.pk}" in page


def test_the_target_page_lists_its_hits_flags_and_leaves_filtered_labels_uncounted(
    researcher: Client, benchmark: Benchmark
) -> None:
    bright = Target.objects.get(word="bright")
    hit = make_hit(make_batch(benchmark), bright)
    kept = make_assignment(hit, "kept")
    filtered = make_assignment(hit, "spam", filtered=True)
    clever = Candidate.objects.get(text="clever")
    for assignment in (kept, filtered):
        Label.objects.create(candidate=clever, value="accept", assignment=assignment, worker=assignment.worker)
    item = hit.items.get(candidate=clever)
    HITFlag.objects.create(assignment=kept, item=item, reason="offensive", note="rude <word>")
    response = researcher.get(reverse("target-detail", args=[bright.pk]))
    page = response.content.decode()
    row = next(row for row in response.context["page"].candidates if row.candidate.text == "clever")
    assert row.counts["accept"] == 3 and row.not_counted == 1 and row.flags == 1
    assert reverse("hit-detail", args=[hit.pk]) in page and "1 / 3" in page
    assert "rude &lt;word&gt;" in page
    assert reverse("candidate-exclude", args=[clever.pk]) in page


def test_the_target_page_counts_a_hits_valid_work_as_the_batch_pages_do(
    researcher: Client, benchmark: Benchmark
) -> None:
    """Valid: submitted or approved, not filtered, and confirmed by its crowd when it came from one;
    the labels counted are the target's candidates' own, whatever other targets hold."""
    bright = Target.objects.get(word="bright")
    hit = make_hit(make_batch(benchmark), bright)
    submitted = make_assignment(hit, "submitted")
    make_assignment(hit, "approved", status=AssignmentStatus.APPROVED)
    filtered = make_assignment(hit, "filtered", filtered=True)
    make_assignment(hit, "rejected", status=AssignmentStatus.REJECTED)
    make_assignment(hit, "claimed", status=AssignmentStatus.CLAIMED)
    unconfirmed = make_assignment(hit, "unconfirmed")
    confirmed = make_assignment(hit, "confirmed")
    Assignment.objects.filter(pk=unconfirmed.pk).update(external_id="crowd-1")
    Assignment.objects.filter(pk=confirmed.pk).update(external_id="crowd-2", external_status="Submitted")
    clever = Candidate.objects.get(target=bright, text="clever")
    Label.objects.create(candidate=clever, value="accept", assignment=submitted, worker=submitted.worker)
    Label.objects.create(candidate=clever, value="reject", assignment=filtered, worker=filtered.worker)
    other = Candidate.objects.create(target=Target.objects.get(word="sat"), text="clever")
    _labels(other, ["reject", "reject", "reject", "reject"])
    response = researcher.get(reverse("target-detail", args=[bright.pk]))
    (row,) = response.context["page"].hits
    assert row.assignments_valid == 3 == Assignment.objects.filter(hit=hit).filter(VALID_ASSIGNMENT).count()
    row = next(each for each in response.context["page"].candidates if each.candidate.text == "clever")
    assert row.counts == {"accept": 3, "reject": 1, "abstain": 0} and row.not_counted == 1
    assert [(value, workers) for value, _, workers in row.by_value] == [
        ("accept", ["w0", "submitted", "w1"]),
        ("reject", ["w2"]),
        ("abstain", []),
    ]


def test_an_excluded_candidate_is_shown_as_such_without_a_score(researcher: Client, benchmark: Benchmark) -> None:
    Candidate.objects.filter(text="clever").update(stage=CandidateStage.EXCLUDED)
    response = researcher.get(reverse("target-detail", args=[Target.objects.get(word="bright").pk]))
    row = next(row for row in response.context["page"].candidates if row.candidate.text == "clever")
    assert (row.score, row.category) == (None, "excluded")


def test_a_prolex_target_shows_its_experts_decision(researcher: Client) -> None:
    benchmark_import(path_or_file=FIXTURES / "prolex_small.csv", benchmark_name="experts", fmt="prolex")
    target = Target.objects.get(benchmark__name="experts", word="valid")
    response = researcher.get(reverse("target-detail", args=[target.pk]))
    assert response.status_code == 200
    categories = {row.candidate.text: row.category for row in response.context["page"].candidates}
    assert categories["good"] == "acceptable"
    # ProLex's own words for the values head the columns.
    labels = [label for _, label in response.context["page"].values]
    assert len(labels) == 3 and "1" in " ".join(labels)


def test_a_sentence_of_smart_word_suggestions_shows_the_answers_given(researcher: Client) -> None:
    benchmark_import(path_or_file=FIXTURES / "sws_small.json", benchmark_name="sentences", fmt="sws")
    benchmark = Benchmark.objects.get(name="sentences")
    batch = hits_generate(benchmark=benchmark, step=1, seed=1)
    hit = batch.hits.select_related("target").first()
    assert hit is not None
    assignment = make_assignment(hit, "marker", answer=None)
    Answer.objects.create(
        assignment=assignment,
        item=hit.items.get(),
        value="marked",
        data={"targets": [{"start": 0, "end": 1, "text": "?", "suggestions": ["<x>"], "type": "refine-usage"}]},
    )
    response = researcher.get(reverse("target-detail", args=[hit.target_id]))
    page = response.content.decode()
    assert response.status_code == 200
    assert "marker" in page and "&lt;x&gt;" in page and 'data-answer="marked"' in page
    # The answer is drawn as its scheme shows it: the target numbered on the sentence.
    assert '<mark class="target" title="target 1">' in page and "<x>" not in page
    assert Worker.objects.filter(external_id="marker").exists()


def test_the_benchmark_and_pipeline_pages_search_targets(researcher: Client, benchmark: Benchmark) -> None:
    action = f'action="{reverse("target-list", args=[benchmark.name])}"'
    assert action in researcher.get(reverse("benchmark-detail", args=[benchmark.name])).content.decode()
    pipeline = researcher.get(reverse("pipeline-progress", args=[benchmark.name])).content.decode()
    assert action in pipeline
    assert reverse("target-detail", args=[Target.objects.get(word="sat").pk]) in pipeline


def test_annotators_and_visitors_may_not_see_targets(client: Client, cast: Cast, benchmark: Benchmark) -> None:
    target = Target.objects.get(word="bright")
    urls = [reverse("target-list", args=[benchmark.name]), reverse("target-detail", args=[target.pk])]
    for url in urls:
        assert client.get(url).status_code == 302
    client.force_login(cast.alice)
    for url in urls:
        assert client.get(url).status_code == 403
