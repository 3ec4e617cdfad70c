"""The tallies kept of a benchmark's labels (annotation.tallies, docs/design.md §7 "Tallies"): for every
scheme, after each step of any sequence of submits, returns, imports and their removal, blocks and
unblocks, refreshes, exclusions and researchers' overrides, each candidate's kept tally equals its
valid labels counted afresh by value, and each worker's kept tally their labels in the benchmark."""

from __future__ import annotations

import contextlib
import io
import json
import random
from typing import Any

import pytest
from django.db import transaction
from django.db.models import Count, Q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.importers import benchmark_import, import_delete
from annotation.importers.removal import ImportRemovalRefused
from annotation.models import Benchmark, Candidate, CandidateTally, Label, Worker, WorkerTally
from annotation.selectors import labels_misplaced, valid_labels
from hits.models import Assignment, HITItem
from hits.services import (
    SubmissionRefused,
    assignment_claim_next,
    assignment_confirm,
    assignment_return,
    assignment_submit,
    candidate_exclude,
    worker_block,
)
from review.adjudication.services import candidate_override_set
from review.services import benchmark_refresh, worker_unblock
from schemes import get_scheme
from tests.base import Cast
from tests.crowds.crowd_helpers import make_batch, mturk_worker, publish_locally, submitted_assignment
from tests.review.builders import honest, simulated
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db

SENTENCES = tuple(f"The cat sat on mat number {number} all afternoon." for number in range(2))
WORDS = ("perched", "rested", "squatted", "lounged")
WORKERS = 3
STEPS = (
    "submit",
    "submit",
    "submit",
    "return",
    "import",
    "import new",
    "import new",
    "remove",
    "remove",
    "block",
    "unblock",
    "refresh",
    "refresh all",
    "exclude",
    "override",
)
steps = st.lists(
    st.tuples(
        st.sampled_from(STEPS), st.integers(min_value=0, max_value=WORKERS - 1), st.randoms(use_true_random=False)
    ),
    min_size=1,
    max_size=10,
)


Tally = tuple[int, int, int, int, int, int]


def kept(benchmark: Benchmark) -> tuple[dict[int, Tally], dict[int, int]]:
    """The kept tallies of the benchmark with a label in them (a row of zeros is no label): by value,
    in all, of step 2 and its accepts."""
    candidates = {
        pk: (a, r, b, n, n2, a2)
        for pk, a, r, b, n, n2, a2 in CandidateTally.objects.filter(
            candidate__target__benchmark=benchmark, labels__gt=0
        ).values_list("candidate_id", "accepts", "rejects", "abstains", "labels", "step2_labels", "step2_accepts")
    }
    workers = dict(WorkerTally.objects.filter(benchmark=benchmark, labels__gt=0).values_list("worker_id", "labels"))
    return candidates, workers


def fresh(benchmark: Benchmark) -> tuple[dict[int, Tally], dict[int, int]]:
    """The same counted from every label, by the definition of a valid label."""
    counted = (
        valid_labels()
        .filter(candidate__target__benchmark=benchmark)
        .order_by()
        .values("candidate_id")
        .annotate(
            a=Count("pk", filter=Q(value="accept")),
            r=Count("pk", filter=Q(value="reject")),
            b=Count("pk", filter=Q(value="abstain")),
            n=Count("pk"),
            n2=Count("pk", filter=Q(step=2)),
            a2=Count("pk", filter=Q(step=2, value="accept")),
        )
        .values_list("candidate_id", "a", "r", "b", "n", "n2", "a2")
    )
    workers = (
        Label.objects.filter(candidate__target__benchmark=benchmark, worker__isnull=False)
        .order_by()
        .values("worker_id")
        .annotate(n=Count("pk"))
        .values_list("worker_id", "n")
    )
    return {pk: (a, r, b, n, n2, a2) for pk, a, r, b, n, n2, a2 in counted}, dict(workers)


def _answers(scheme_name: str, assignment: Assignment, rng: random.Random) -> dict[int, Any]:
    """Each item answered with one of the scheme's choices at random (so controls pass or fail), or
    the answer every scheme accepts where it has no choices."""
    choices = get_scheme(scheme_name).page.choices
    return {
        item.pk: rng.choice(choices).value if choices else scheme_answer(scheme_name, item)
        for item in HITItem.objects.filter(hit_id=assignment.hit_id)
    }


def _import(benchmark: Benchmark, origin: str, rng: random.Random, *, new: bool) -> None:
    """A JSONL file of labels for the benchmark's first sentence's candidates, or for a sentence of its
    own (a target no HIT holds, so its import may be removed again)."""
    text = "A dog sat on the rug by the door." if new else SENTENCES[0]
    values = ("accept", "reject", "abstain")
    line = {
        "context": text,
        "target": "sat",
        "offset": text.index("sat"),
        "pos": "verb",
        "candidates": [
            {"text": word, "labels": [rng.choice(values) for _ in range(rng.randint(0, 3))]}
            for word in rng.sample(WORDS, rng.randint(1, len(WORDS)))
        ],
    }
    stream = io.BytesIO((json.dumps(line) + "\n").encode())
    benchmark_import(path_or_file=stream, benchmark_name=benchmark.name, fmt="jsonl", origin=origin, new_label_set=True)


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(sequence=steps)
def test_the_kept_tallies_equal_a_fresh_count_after_every_step(
    cast: Cast, scheme_name: str, sequence: list[tuple[str, int, random.Random]]
) -> None:
    with transaction.atomic():
        benchmark, _ = scheme_benchmark(scheme_name, cast, sentences=SENTENCES, candidates=WORDS)
        scheme = get_scheme(benchmark)
        # A scheme whose work goes to named annotators offers it to them alone (ProLex's expert: alice).
        alice = Worker.objects.get(user=cast.alice)
        workers = [alice] * WORKERS if scheme.assigned else [simulated(f"tally-{n}") for n in range(WORKERS)]
        origins: list[str] = []
        assert kept(benchmark) == fresh(benchmark)
        for number, (step, index, rng) in enumerate(sequence):
            worker = workers[index]
            if step in ("submit", "return"):
                assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
                if assignment is not None and step == "submit":
                    with contextlib.suppress(SubmissionRefused):
                        assignment_submit(assignment=assignment, answers=_answers(scheme_name, assignment, rng))
                elif assignment is not None:
                    assignment_return(assignment=assignment)
            elif step in ("import", "import new"):
                origins.append(f"file-{number}")
                _import(benchmark, origins[-1], rng, new=step == "import new")
            elif step == "remove" and origins:
                with contextlib.suppress(ImportRemovalRefused):
                    import_delete(benchmark=benchmark, origin=origins.pop(rng.randrange(len(origins))))
            elif step in ("block", "unblock"):
                # The refresh a block queues after its commit runs here: the test's transaction never commits.
                if step == "block":
                    worker_block(worker=worker, reason="tally test")
                else:
                    worker_unblock(worker=worker)
                benchmark_refresh(benchmark=benchmark, full=True)
            elif step in ("refresh", "refresh all"):
                benchmark_refresh(benchmark=benchmark, touched_only=step == "refresh", full=step == "refresh all")
            elif step == "exclude":
                candidates = list(Candidate.objects.filter(target__benchmark=benchmark).exclude(stage="excluded"))
                if candidates:
                    candidate_exclude(candidate=rng.choice(candidates), by=cast.researcher)
            elif step == "override":
                found = Candidate.objects.filter(target__benchmark=benchmark).exclude(stage="excluded").first()
                if found is not None:
                    candidate_override_set(candidate=found, decision="acceptable", reason="read it", by=cast.researcher)
            assert kept(benchmark) == fresh(benchmark), (step, number)
            # Every label written by any step names its candidate's benchmark.
            assert labels_misplaced() == 0, (step, number)
        transaction.set_rollback(True)


def test_a_blocked_workers_labels_leave_the_tallies_and_come_back_when_unblocked(cast: Cast) -> None:
    benchmark, _ = scheme_benchmark("swords", cast, sentences=SENTENCES, candidates=WORDS)
    benchmark_refresh(benchmark=benchmark, full=True)
    worker = simulated("tally-blocked")
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None
    # Controls right, so that no refresh filters the work but the block.
    answer = honest(default="accept")
    answers = {item.pk: answer(item) for item in HITItem.objects.filter(hit_id=assignment.hit_id)}
    assignment_submit(assignment=assignment, answers=answers)
    labels = Label.objects.filter(assignment=assignment)
    judged = sorted(set(labels.values_list("candidate_id", flat=True)))
    before = kept(benchmark)
    assert before == fresh(benchmark)
    assert before[1][worker.pk] == labels.count() > 0

    worker_block(worker=worker, reason="tally test")
    benchmark_refresh(benchmark=benchmark, full=True)
    assert Assignment.objects.get(pk=assignment.pk).filtered
    blocked = kept(benchmark)
    assert blocked == fresh(benchmark)
    # Each candidate it judged lost that label; the worker's own tally keeps every label they gave.
    for candidate_id in judged:
        assert blocked[0].get(candidate_id, (0, 0, 0, 0))[3] == before[0][candidate_id][3] - 1
    assert blocked[1][worker.pk] == before[1][worker.pk]

    worker_unblock(worker=worker)
    benchmark_refresh(benchmark=benchmark, full=True)
    assert kept(benchmark) == before == fresh(benchmark)


def test_removing_an_import_takes_its_labels_out_of_the_tallies_another_import_keeps(cast: Cast) -> None:
    benchmark, _ = scheme_benchmark("swords", cast, sentences=SENTENCES, candidates=WORDS)
    rng = random.Random(5)
    _import(benchmark, "first", rng, new=True)
    _import(benchmark, "second", rng, new=True)
    first = Label.objects.filter(candidate__target__benchmark=benchmark, origin="first").count()
    assert first > 0 and Label.objects.filter(candidate__target__benchmark=benchmark, origin="second").exists()
    both = kept(benchmark)
    assert both == fresh(benchmark)
    import_delete(benchmark=benchmark, origin="first")
    after = kept(benchmark)
    assert after == fresh(benchmark)
    assert sum(row[3] for row in after[0].values()) == sum(row[3] for row in both[0].values()) - first


def test_an_import_counts_its_labels_on_candidates_it_finds_and_on_those_it_creates(cast: Cast) -> None:
    benchmark, _ = scheme_benchmark("swords", cast, sentences=SENTENCES, candidates=WORDS)
    perched = Candidate.objects.get(target__benchmark=benchmark, target__context__text=SENTENCES[0], text="perched")
    before = kept(benchmark)[0].get(perched.pk, (0,) * 6)
    text = SENTENCES[0]
    line = {
        "context": text,
        "target": "sat",
        "offset": text.index("sat"),
        "pos": "verb",
        "candidates": [{"text": "perched", "labels": ["accept", "reject"]}, {"text": "hovered", "labels": ["abstain"]}],
    }
    benchmark_import(
        path_or_file=io.BytesIO((json.dumps(line) + "\n").encode()),
        benchmark_name=benchmark.name,
        fmt="jsonl",
        origin="more",
        new_label_set=True,
    )
    after = kept(benchmark)
    assert after == fresh(benchmark)
    assert after[0][perched.pk][:4] == (before[0] + 1, before[1] + 1, before[2], before[3] + 2)
    hovered = Candidate.objects.get(target=perched.target, text="hovered")
    # Its first label, collected in step 2 by SWORDS' order.
    assert after[0][hovered.pk] == (0, 0, 1, 1, 1, 0)


@given(seed=st.integers(0, 2**16))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_new_candidates_named_again_in_a_chunk_and_in_later_chunks_keep_every_label_in_their_tally(
    db: None, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """The candidates a chunk creates are tallied as their labels are written: a candidate the file
    names again, in the same chunk or a later one, with label lists it shares with others or not,
    has every label counted once."""
    monkeypatch.setattr("annotation.importers.writer.CHUNK_TARGETS", 2)
    rng = random.Random(seed)
    shared = ["accept", "reject", "accept"]
    values = ("accept", "reject", "abstain")
    lines: list[dict[str, Any]] = []
    for _ in range(rng.randint(2, 7)):
        text = rng.choice(SENTENCES)
        lines.append(
            {
                "context": text,
                "target": "sat",
                "offset": text.index("sat"),
                "pos": "verb",
                "candidates": [
                    {
                        "text": word,
                        "labels": rng.choice([shared, [], [rng.choice(values) for _ in range(rng.randint(1, 4))]]),
                    }
                    for word in rng.sample(WORDS, rng.randint(1, len(WORDS)))
                ],
            }
        )
    stream = io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    # Each example starts from an empty database: its import is rolled back after the checks.
    with transaction.atomic():
        report = benchmark_import(path_or_file=stream, benchmark_name="again", fmt="jsonl", origin="file")
        benchmark = Benchmark.objects.get(name="again")
        assert kept(benchmark) == fresh(benchmark)
        assert labels_misplaced() == 0
        assert report.labels.created == sum(len(c["labels"]) for line in lines for c in line["candidates"])
        assert sum(tally[3] for tally in kept(benchmark)[0].values()) == report.labels.created
        transaction.set_rollback(True)


def test_crowd_work_confirmed_on_a_full_hit_is_filtered_and_left_out_of_the_tallies(db: None) -> None:
    batch = make_batch(hits=1, assignments=2)
    (posting,) = publish_locally(batch)
    benchmark = batch.benchmark
    work = [submitted_assignment(posting.hit, mturk_worker(f"W{n}"), external_id=f"A{n}") for n in range(3)]
    for assignment in work:
        assert assignment_confirm(assignment=assignment, external_status="Submitted")
        assert kept(benchmark) == fresh(benchmark)
    # The third found its HIT's two slots taken: its labels are kept, filtered, and counted nowhere.
    surplus = Assignment.objects.get(pk=work[2].pk)
    assert surplus.filtered and Label.objects.filter(assignment=surplus).exists()
    candidates, workers = kept(benchmark)
    assert sum(row[3] for row in candidates.values()) == Label.objects.filter(assignment__in=work[:2]).count()
    assert workers[surplus.worker_id] == Label.objects.filter(assignment=surplus).count()


@pytest.mark.parametrize("decision", ["rejected on the crowd", "returned on the crowd", "unknown", "rejected here"])
def test_crowd_decisions_that_filter_work_take_its_labels_out_of_the_tallies(db: None, decision: str) -> None:
    from crowds.interface import RemoteAssignment, RemoteStatus
    from crowds.services.approval import assignment_reject
    from crowds.services.sync import _apply_remote_state, _withdrawn_on_crowd, assignment_flag_unknown

    batch = make_batch(hits=1, assignments=2)
    (posting,) = publish_locally(batch)
    benchmark = batch.benchmark
    work = [submitted_assignment(posting.hit, mturk_worker(f"W{n}"), external_id=f"A{n}") for n in range(2)]
    for assignment in work:
        assert assignment_confirm(assignment=assignment, external_status="Submitted")
    counted_before = sum(row[3] for row in kept(benchmark)[0].values())
    target = work[0]
    remote = RemoteAssignment(
        external_id=target.external_id,
        worker_external_id=target.worker.external_id,
        hit_external_id=posting.external_id,
        status=RemoteStatus.REJECTED if decision == "rejected on the crowd" else RemoteStatus.RETURNED,
    )
    if decision == "rejected on the crowd":
        assert _apply_remote_state(assignment=target, item=remote)
    elif decision == "returned on the crowd":
        assert _withdrawn_on_crowd(assignment=target, item=remote)
    elif decision == "unknown":
        assert assignment_flag_unknown(assignment=target)
    else:
        Assignment.objects.filter(pk=target.pk).update(external_unknown=True)  # rejected here only
        assignment_reject(assignment=target, message="Answers do not match the sentences.")

    assert Assignment.objects.get(pk=target.pk).filtered
    assert kept(benchmark) == fresh(benchmark)
    left_out = Label.objects.filter(assignment=target).count()
    assert left_out > 0
    assert sum(row[3] for row in kept(benchmark)[0].values()) == counted_before - left_out
