"""The pipeline in each scheme's own words: ProLex's judgments per expert, Smart Word Suggestions'
sentences marked, the stages each scheme names, and the refresh's decisions as pure rules."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Benchmark, Context, Target, TargetStage
from hits.models import Assignment, AssignmentStatus, HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from review.selectors import pipeline_progress
from review.services import benchmark_refresh
from schemes.progress import (
    CANDIDATE,
    STAGE_DONE,
    STAGE_OPEN,
    TARGET,
    CollectedWork,
    StageMove,
    done_when_collected,
    target_item_moves,
)
from schemes.swords.pipeline import CandidateProgress, refresh_moves
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_target

pytestmark = pytest.mark.django_db


def _submit_all(worker_user: object, benchmark: Benchmark, answer: object) -> int:
    worker = worker_user.worker  # type: ignore[attr-defined]
    done = 0
    while (claim := assignment_claim_next(worker=worker, benchmark=benchmark)) is not None:
        items = HITItem.objects.filter(hit=claim.hit)
        assignment_submit(assignment=claim, answers={item.pk: answer for item in items})
        done += 1
    return done


@pytest.fixture
def prolex() -> Benchmark:
    benchmark = make_benchmark("experts", scheme="prolex")
    for word in ("calm", "bright", "quick"):
        make_target(benchmark, word=word, pos="", candidates=["still", "serene"])
    return benchmark


def test_prolex_counts_judgments_per_expert_and_a_target_is_judged_once_its_experts_are_done(
    prolex: Benchmark, cast: Cast
) -> None:
    hits_generate(benchmark=prolex, step=1, seed=1, annotators=[cast.alice.worker, cast.bob.worker], overlap=1)
    alice_hits = _submit_all(cast.alice, prolex, "1")
    benchmark_refresh(benchmark=prolex)

    progress = pipeline_progress(benchmark=prolex)
    [step] = progress.steps
    assert (step.title, step.unit, step.item_noun) == ("judge the substitutes", "judgments", "substitutes")
    # Three targets of two substitutes; the overlap target needs both experts: 8 judgments in all.
    assert step.labels_needed == 8 and step.labels_collected == 2 * alice_hits
    [experts] = progress.tables
    rows = dict(experts.rows)
    assert experts.columns == ("judged", "to judge")
    assert rows["alice"] == (2 * alice_hits, 0)
    bob_targets = 3 - alice_hits + 1
    assert rows["bob"] == (0, 2 * bob_targets)
    # Alice's own targets (not the one she shares with Bob) are judged.
    judged = Target.objects.filter(benchmark=prolex, stage=TargetStage.DONE).count()
    assert judged == alice_hits - 1
    assert progress.targets_by_stage == {"reduce": 3 - judged, "done": judged}

    _submit_all(cast.bob, prolex, "-1")
    benchmark_refresh(benchmark=prolex)
    assert Target.objects.filter(benchmark=prolex, stage=TargetStage.DONE).count() == 3
    assert pipeline_progress(benchmark=prolex).finished

    client = Client()
    client.force_login(cast.researcher)
    page = client.get(f"/benchmarks/{prolex.name}/pipeline/").content.decode()
    assert "Per expert" in page and "judged" in page and "to judge" in page
    assert "step 2" not in page.lower() and "step 3" not in page.lower()
    targets = client.get(f"/benchmarks/{prolex.name}/targets/").content.decode()
    assert "judged" in targets and "step 2" not in targets
    detail = client.get(f"/targets/{Target.objects.filter(benchmark=prolex).first().pk}/").content.decode()  # type: ignore[union-attr]
    assert "judged" in detail and "step 2" not in detail


def test_a_judged_prolex_target_is_judged_again_when_its_judgments_stop_counting(prolex: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=prolex, step=1, seed=1, annotators=[cast.alice.worker])
    _submit_all(cast.alice, prolex, "1")
    benchmark_refresh(benchmark=prolex)
    assert set(Target.objects.filter(benchmark=prolex).values_list("stage", flat=True)) == {TargetStage.DONE}

    # Work rejected on its crowd never counts: the refresh filters it, and the targets lack judgments.
    Assignment.objects.filter(hit__batch__benchmark=prolex).update(status=AssignmentStatus.REJECTED)
    result = benchmark_refresh(benchmark=prolex)
    everything = Target.objects.filter(benchmark=prolex).values_list("pk", flat=True)
    assert sorted(result.reopened_targets) == sorted(everything)
    assert set(Target.objects.filter(benchmark=prolex).values_list("stage", flat=True)) == {TargetStage.REDUCE}


@pytest.fixture
def sws() -> Benchmark:
    benchmark = make_benchmark("marks", scheme="sws", scheme_settings={"annotators_per_sentence": 1})
    for index in range(2):
        text = f"The results were very good in test number {index}."
        context = Context.objects.create(benchmark=benchmark, text=text)
        Target.objects.create(context=context, benchmark=benchmark, word=text, offset=0, pos="")
    return benchmark


def test_sws_counts_sentences_marked_and_to_mark(sws: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=sws, step=1, seed=1)
    claim = assignment_claim_next(worker=cast.alice.worker, benchmark=sws)  # type: ignore[attr-defined]
    assert claim is not None
    [item] = HITItem.objects.filter(hit=claim.hit)
    assignment_submit(assignment=claim, answers={item.pk: {"targets": [], "discard": "garbled"}})
    benchmark_refresh(benchmark=sws)

    progress = pipeline_progress(benchmark=sws)
    [step] = progress.steps
    assert (step.unit, step.item_noun, step.labels_collected, step.labels_needed) == ("marks", "sentences", 1, 2)
    [sentences] = progress.tables
    assert sentences.columns == ("marked", "to mark") and sentences.rows == (("sentences", (1, 1)),)
    assert progress.targets_by_stage == {"reduce": 1, "done": 1}
    assert progress.candidates_by_stage == {}

    client = Client()
    client.force_login(cast.researcher)
    page = client.get(f"/benchmarks/{sws.name}/pipeline/").content.decode()
    assert "being marked" in page and "to mark" in page and "step 2" not in page.lower()
    api = client.get(f"/api/benchmarks/{sws.name}/pipeline/").json()
    assert api["target_stage_names"] == {"reduce": "being marked", "done": "marked"}
    assert sorted(target["stage_name"] for target in api["targets"]) == ["being marked", "marked"]
    assert api["tables"] == [{"title": "Sentences", "columns": ["marked", "to mark"], "rows": [
        {"name": "sentences", "values": [1, 1]}
    ]}]  # fmt: skip


def _candidate(pk: int, stage: str, step2: int, accepts: int, total: int) -> CandidateProgress:
    return CandidateProgress(candidate_id=pk, stage=stage, step2_valid=step2, step2_accepts=accepts, valid_total=total)


def test_swords_refresh_moves_a_decided_target_on_and_finishes_a_scored_one() -> None:
    moves = refresh_moves(
        {1: "reduce", 2: "score", 3: "reduce"},
        {
            1: [_candidate(10, "reduce", 3, 1, 3), _candidate(11, "reduce", 3, 0, 3)],
            2: [_candidate(20, "score", 3, 2, 10), _candidate(21, "dropped", 3, 0, 3)],
            3: [_candidate(30, "reduce", 2, 2, 2)],
        },
        step2_labels=3,
        step3_labels=7,
        pass_min_accepts=1,
    )
    assert (moves.advanced, moves.followup, moves.done, moves.reopened) == ([1], [1], [2], [])
    assert moves.moves == [
        StageMove(CANDIDATE, "reduce", "score", (10,)),
        StageMove(CANDIDATE, "reduce", "dropped", (11,)),
        StageMove(TARGET, "reduce", "score", (1,)),
        StageMove(CANDIDATE, "score", "final", (20,)),
        StageMove(TARGET, "score", "done", (2,)),
    ]


def test_swords_refresh_finishes_at_once_a_target_whose_candidates_are_all_dropped() -> None:
    moves = refresh_moves(
        {1: "reduce"}, {1: [_candidate(10, "reduce", 3, 0, 3)]}, step2_labels=3, step3_labels=7, pass_min_accepts=1
    )
    assert (moves.advanced, moves.followup, moves.done) == ([1], [], [1])


def test_swords_refresh_reopens_a_done_target_that_lacks_labels_again() -> None:
    moves = refresh_moves(
        {1: "done"}, {1: [_candidate(10, "final", 3, 3, 6)]}, step2_labels=3, step3_labels=7, pass_min_accepts=1
    )
    assert moves.reopened == [1]
    assert moves.moves == [StageMove(CANDIDATE, "final", "score", (10,)), StageMove(TARGET, "done", "score", (1,))]


def test_a_one_step_target_is_done_when_collected_and_open_again_when_not() -> None:
    moves = done_when_collected({1: STAGE_OPEN, 2: STAGE_OPEN, 3: STAGE_DONE, 4: STAGE_DONE}, lambda pk: pk in (1, 4))
    assert (moves.done, moves.reopened, moves.advanced, moves.followup) == ([1], [3], [], [])


def test_a_target_item_needs_what_its_hits_require_else_the_setting() -> None:
    work = CollectedWork(valid_assignments={(1, 1): 2, (2, 1): 2, (3, 1): 1}, required_assignments={(2, 1): 4})
    moves = target_item_moves(stages={1: STAGE_OPEN, 2: STAGE_OPEN, 3: STAGE_OPEN}, work=work, step=1, default=2)
    # 1 has the setting's two; 2 has two of the four its HITs ask for; 3 has one of two.
    assert moves.done == [1]
