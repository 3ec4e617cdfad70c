"""What a whole refresh decides equals what the stored valid labels say, worked out afresh from
them by the SWORDS rule (docs/design.md §6), whatever the crowd answered (property test)."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Benchmark, Candidate, CandidateStage, Context, Target, TargetStage
from annotation.selectors import valid_labels
from hits.models import HITItem
from review.services import benchmark_refresh
from schemes import get_scheme
from schemes.swords.settings import SwordsSettings
from tests.review.builders import SUBSTITUTES, Answerer, honest, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db

WORKERS = 4
MAX_CANDIDATES = 5


def _benchmark(shape: list[tuple[str, int]]) -> Benchmark:
    """One target per ``(word, candidates)``: targets of one word share its lemma."""
    benchmark = Benchmark.objects.create(name=f"decisions-{Benchmark.objects.count()}")
    for index, (word, candidates) in enumerate(shape):
        text = f"On day {index} they {word} on the mat all afternoon."
        context = Context.objects.create(benchmark=benchmark, text=text)
        target = context.targets.create(benchmark=benchmark, word=word, offset=text.index(word), pos="verb")
        for substitute in SUBSTITUTES[:candidates]:
            Candidate.objects.create(target=target, text=substitute, sources=["thesaurus"])
    return benchmark


def _expected(benchmark: Benchmark) -> tuple[dict[int, str], dict[int, str]]:
    """Stages of targets and candidates, from the valid labels alone: a step-2 target whose every
    candidate has its step-2 labels moves on; a candidate with enough step-2 accepts survives, the
    rest are dropped; a target with no survivor is done."""
    rules = get_scheme(benchmark).settings(benchmark)
    assert isinstance(rules, SwordsSettings)
    step2, accepts = Counter[int](), Counter[int]()
    for candidate_id, step, value in (
        valid_labels().filter(candidate__target__benchmark=benchmark).values_list("candidate_id", "step", "value")
    ):
        if step == 2:
            step2[candidate_id] += 1
            accepts[candidate_id] += value == "accept"
    targets: dict[int, str] = {}
    candidates: dict[int, str] = {}
    for target in Target.objects.filter(benchmark=benchmark).prefetch_related("candidates"):
        ids = [candidate.pk for candidate in target.candidates.all()]
        if all(step2[pk] >= rules.step2_labels for pk in ids):
            for pk in ids:
                candidates[pk] = (
                    CandidateStage.SCORE if accepts[pk] >= rules.pass_min_accepts else CandidateStage.DROPPED
                )
            survivors = any(candidates[pk] == CandidateStage.SCORE for pk in ids)
            targets[target.pk] = TargetStage.SCORE if survivors else TargetStage.DONE
        else:
            targets[target.pk] = TargetStage.REDUCE
            candidates.update(dict.fromkeys(ids, CandidateStage.REDUCE))
    return targets, candidates


def _answerer(verdicts: dict[str, bool]) -> Answerer:
    return honest({text: "accept" if accepted else "reject" for text, accepted in verdicts.items()})


crowds = st.fixed_dictionaries(
    {
        # (word, candidates) per target; "sat" twice: two targets sharing a lemma.
        "shape": st.lists(
            st.tuples(st.sampled_from(["sat", "ran", "sat"]), st.integers(1, MAX_CANDIDATES)), min_size=1, max_size=3
        ),
        # Per honest worker, whether they accept each substitute; and how many HITs each works.
        "verdicts": st.lists(
            st.lists(st.booleans(), min_size=MAX_CANDIDATES, max_size=MAX_CANDIDATES), min_size=0, max_size=WORKERS
        ),
        "hits_each": st.integers(1, 3),
        "spammer_first": st.booleans(),
    }
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(crowd=crowds)
def test_a_whole_refresh_decides_what_the_valid_labels_say(db: None, crowd: dict) -> None:
    with transaction.atomic():
        benchmark = _benchmark(crowd["shape"])
        step2_batch(benchmark)
        if crowd["spammer_first"]:
            work_once(simulated("decisions-spammer"), benchmark, spammer)
        for row, verdicts in enumerate(crowd["verdicts"]):
            answers = _answerer(dict(zip(SUBSTITUTES, verdicts, strict=False)))
            for _ in range(crowd["hits_each"]):
                work_once(simulated(f"decisions-{row}"), benchmark, answers)

        benchmark_refresh(benchmark=benchmark)

        targets, candidates = _expected(benchmark)
        assert dict(Target.objects.filter(benchmark=benchmark).values_list("pk", "stage")) == targets
        assert dict(Candidate.objects.filter(target__benchmark=benchmark).values_list("pk", "stage")) == candidates
        # Step 3 collects the survivors, each once, and nothing else.
        asked = HITItem.objects.filter(hit__batch__benchmark=benchmark, hit__batch__step=3, candidate__isnull=False)
        survivors = {pk for pk, stage in candidates.items() if stage == CandidateStage.SCORE}
        assert set(asked.values_list("candidate_id", flat=True)) == survivors
        # Nothing is left to decide: a second refresh changes nothing.
        assert not benchmark_refresh(benchmark=benchmark).changed
        transaction.set_rollback(True)
