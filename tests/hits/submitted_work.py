"""Small benchmarks of every scheme with work submitted through the queue, built the same way every
time: what each annotator posted is kept beside the assignment it went to."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from annotation.models import Benchmark
from annotation.services import benchmark_import
from hits.models import HIT, Assignment, HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_target
from tests.hits.generation_data import SPECS, build_benchmark

SWS_SENTENCE = "The results were very good and quick."


@dataclass(frozen=True)
class Submitted:
    """One submission: the worker's external id, its assignment, and what was posted per item."""

    worker: str
    assignment: Assignment
    posted: dict[int, Any]
    seconds: float


def _submit_each(
    benchmark: Benchmark, users: list[User], answers: Callable[[User, list[HITItem]], dict[int, Any]]
) -> list[Submitted]:
    """Every user claims and submits the HITs the queue offers them, in turn."""
    done: list[Submitted] = []
    for number, user in enumerate(users, start=1):
        while (claim := assignment_claim_next(worker=user.worker)) is not None:
            assert claim.hit.batch.benchmark_id == benchmark.pk
            items = list(HITItem.objects.filter(hit=claim.hit).order_by("position"))
            posted = answers(user, items)
            seconds = 10.0 * number + len(done)
            assignment_submit(assignment=claim, answers=posted, seconds_on_page=seconds)
            claim.refresh_from_db()
            done.append(Submitted(user.username, claim, posted, seconds))
    assert done, "no HIT was offered"
    return done


def swords_work(cast: Cast) -> tuple[Benchmark, list[Submitted]]:
    """A SWORDS step-2 HIT: alice answers honestly, bob accepts the first candidate, rejects the
    second and abstains on the rest (controls included)."""
    benchmark = make_benchmark("sw-answers")
    make_target(benchmark, word="sat", candidates=["perched", "rested"])
    hits_generate(benchmark=benchmark, step=2, seed=1, assignments_per_hit=2)

    def answers(user: User, items: list[HITItem]) -> dict[int, Any]:
        if user == cast.alice:
            return {i.pk: "reject" if i.kind == ItemKind.CONTROL_DISTRACTOR else "accept" for i in items}
        by_text = {"perched": "accept", "rested": "reject"}
        return {i.pk: by_text.get(i.text, "abstain") if not i.control else "abstain" for i in items}

    return benchmark, _submit_each(benchmark, [cast.alice, cast.bob], answers)


PROLEX_ANSWERS = {
    "alice": {"generally": "1", "fundamentally": "0", "mostly": "-1", "loud": "-1"},
    "bob": {"generally": "1", "fundamentally": "-1", "mostly": "-1", "loud": "0"},
}


def prolex_work(cast: Cast) -> tuple[Benchmark, list[Submitted]]:
    """Two ProLex targets judged by two experts, with 1, -1 and 0 among their answers."""
    benchmark = make_benchmark("px-answers", scheme="prolex")
    make_target(
        benchmark,
        text="Both matter, but overall, I disagree.",
        word="overall",
        pos="",
        candidates=["generally", "fundamentally", "mostly"],
    )
    make_target(benchmark, text="The sea was calm.", word="calm", pos="", candidates=["loud"])
    hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[cast.alice.worker, cast.bob.worker], overlap=2)
    return benchmark, _submit_each(
        benchmark,
        [cast.alice, cast.bob],
        lambda user, items: {item.pk: PROLEX_ANSWERS[user.username][item.text] for item in items},
    )


def sws_target(word: str, suggestions: str, kind: str) -> dict[str, Any]:
    start = SWS_SENTENCE.index(word)
    return {"start": start, "end": start + len(word), "suggestions": suggestions, "type": kind}


def sws_work(cast: Cast, folder: Path) -> tuple[Benchmark, list[Submitted]]:
    """One sentence marked by alice and bob (bob's suggestion holds markup) and discarded by carol."""
    path = folder / "sws-answers.json"
    path.write_text(json.dumps({"n-1": {"sentence": SWS_SENTENCE, "substitutes": []}}))
    benchmark_import(path_or_file=path, benchmark_name="sws-answers", fmt="sws")
    benchmark = Benchmark.objects.get(name="sws-answers")
    benchmark.scheme_settings = {"min_targets": 1, "annotators_per_sentence": 3}
    benchmark.save()
    hits_generate(benchmark=benchmark, step=1, seed=1)
    posted = {
        "alice": {
            "targets": [
                sws_target("very good", "excellent; great", "refine-usage"),
                sws_target("quick", "fast", "diversify-expression"),
            ]
        },
        "bob": {"targets": [sws_target("results", "<b>outcomes</b>", "refine-usage")]},
        "carol": {"targets": [], "discard": "It is <i>garbled</i>."},
    }
    return benchmark, _submit_each(
        benchmark,
        [cast.alice, cast.bob, cast.carol],
        lambda user, items: {items[0].pk: json.dumps(posted[user.username])},
    )


def generation_work(cast: Cast) -> tuple[Benchmark, list[Submitted]]:
    """A generation (SWORDS step 1) HIT: alice proposes two substitutes, bob has none."""
    benchmark = build_benchmark("gen-answers", [SPECS[0]])
    hits_generate(benchmark=benchmark, step=1, seed=1, assignments_per_hit=2)
    posted = {"alice": {"substitutes": ["perched", "was seated"]}, "bob": {"substitutes": [], "none": True}}
    return benchmark, _submit_each(
        benchmark, [cast.alice, cast.bob], lambda user, items: {items[0].pk: posted[user.username]}
    )


def the_hit(benchmark: Benchmark, word: str = "") -> HIT:
    """The benchmark's one HIT (of the target ``word``, when named)."""
    hits = HIT.objects.filter(batch__benchmark=benchmark)
    [hit] = hits.filter(target__word=word) if word else hits
    return hit
