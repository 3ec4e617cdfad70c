"""The pipeline's reading of every candidate (``schemes.swords.progress.candidate_progress``) keys
each candidate's sources from their JSON text, once per distinct text: on random benchmarks it equals
the reading that decodes every candidate's list, for every target and for a few of them."""

from __future__ import annotations

import random

import pytest
from django.db.models import JSONField, Value

from annotation.models import Benchmark, Candidate, CandidateStage, Context, Label
from annotation.tallies import tallies_benchmark_recount
from schemes.swords.pipeline import CandidateProgress
from schemes.swords.progress import candidate_progress, valid_label_counts
from schemes.swords.stopping import source_key

pytestmark = pytest.mark.django_db

SOURCE_SETS: list[object] = [
    [],
    ["coinco"],
    ["thesaurus"],
    ["CoInCo", "thesaurus"],
    ["thesaurus", "coinco"],
    ["coinco", "coinco"],
    ["Thesaurus", "THESAURUS", "roget"],
    None,
]


def _decoded(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, list[CandidateProgress]]:
    """The reading that decodes each candidate's sources."""
    candidates = Candidate.objects.filter(target__benchmark=benchmark)
    if target_ids is not None:
        candidates = candidates.filter(target_id__in=target_ids)
    counts = valid_label_counts(candidates)
    result: dict[int, list[CandidateProgress]] = {}
    for pk, target_id, stage, sources in candidates.values_list("pk", "target_id", "stage", "sources").order_by(
        "target_id", "pk"
    ):
        step2, step2_accepts, total, accepts = counts.get(pk, (0, 0, 0, 0))
        result.setdefault(target_id, []).append(
            CandidateProgress(
                candidate_id=pk,
                stage=stage,
                step2_valid=step2,
                step2_accepts=step2_accepts,
                valid_total=total,
                accepts=accepts,
                source=source_key(sources or []),
            )
        )
    return result


def _random_benchmark(rng: random.Random, name: str) -> Benchmark:
    benchmark = Benchmark.objects.create(name=name)
    for index in range(rng.randint(3, 6)):
        text = f"The river was calm after storm {index}."
        context = Context.objects.create(benchmark=benchmark, text=text)
        target = context.targets.create(benchmark=benchmark, word="calm", offset=text.index("calm"), pos="adj")
        for number in range(rng.randint(0, 9)):
            sources = rng.choice(SOURCE_SETS)
            candidate = Candidate.objects.create(
                target=target,
                text=f"calm{number}",
                sources=sources if sources is not None else [],
                stage=rng.choice(CandidateStage.values),
            )
            if sources is None:
                # A JSON null, as a row written outside the model may hold.
                Candidate.objects.filter(pk=candidate.pk).update(sources=Value(None, JSONField()))
            Label.objects.bulk_create(
                Label(
                    candidate=candidate,
                    benchmark=benchmark,
                    value=rng.choice(["accept", "reject", "abstain"]),
                    step=rng.choice([2, 3]),
                    origin="import.json",
                    position=position,
                )
                for position in range(rng.randint(0, 7))
            )
    # Written through the ORM, not a service: the tallies are counted again, as after a bulk load.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    return benchmark


@pytest.mark.parametrize("seed", range(4))
def test_candidate_progress_equals_the_reading_that_decodes_every_candidates_sources(seed: int) -> None:
    rng = random.Random(seed)
    benchmark = _random_benchmark(rng, f"progress-{seed}")
    _random_benchmark(rng, f"other-{seed}")
    target_ids = list(benchmark.targets.values_list("pk", flat=True))

    assert candidate_progress(benchmark=benchmark) == _decoded(benchmark, None)
    chosen = rng.sample(target_ids, 2)
    assert candidate_progress(benchmark=benchmark, target_ids=chosen) == _decoded(benchmark, chosen)
    keys = {row.source for rows in candidate_progress(benchmark=benchmark).values() for row in rows}
    assert keys <= {"", "coinco", "thesaurus", "coinco+thesaurus", "roget+thesaurus"}
