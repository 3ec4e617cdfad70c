"""What a SWORDS batch collects and how each target's HITs are laid out (docs/design.md §3).

``candidates_for_step`` picks the candidates a step still needs; ``target_planner`` prepares the
distractor exclusions of the batch's targets once and returns the function that plans one target
(``planning.plan_target_hits``). ``hits.services.generation`` calls both and writes the result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from annotation import wordnet
from annotation.models import Benchmark, Candidate, CandidateStage, Target
from schemes.base import CandidateRef, PlannedHIT, StepWork, TargetPlanner, TargetRef
from schemes.planning import target_key, target_rng
from schemes.swords import distractors
from schemes.swords.pipeline import CandidateProgress, labels_missing
from schemes.swords.planning import plan_target_hits
from schemes.swords.progress import STEP_CANDIDATE_STAGE, stopping_rule, valid_label_counts
from schemes.swords.settings import SwordsSettings
from schemes.swords.stopping import source_key

# Candidates past a step hold its labels whatever their count says (after step 2: the survivors
# and the dropped; after step 3: the scored).
SETTLED_STAGES = {
    2: frozenset({CandidateStage.SCORE, CandidateStage.FINAL, CandidateStage.DROPPED}),
    3: frozenset({CandidateStage.FINAL}),
}


def candidates_for_step(
    *, benchmark: Benchmark, settings: SwordsSettings, step: int, target_ids: Sequence[int] | None
) -> StepWork:
    """The candidates of the step's stage that lack valid labels for it, each asking for what it
    lacks (``pipeline.labels_missing``, the count the pipeline page shows).

    Two statements: the valid labels counted per candidate (``progress.valid_label_counts``, as the
    pipeline counts them), and the candidates of the step's stage and of the stages past it read
    once, with their texts.

    Under a stopping policy other than swords, step 2 asks for the policy's first round and step 3
    for each undecided candidate's next round (``pipeline.labels_missing`` with the rule): no label
    is bought for a decided candidate."""
    stage = STEP_CANDIDATE_STAGE[step]
    rule = stopping_rule(benchmark=benchmark, settings=settings) if step == 3 else None
    first = settings.reduce_labels
    settled_stages = SETTLED_STAGES[step]
    candidates = Candidate.objects.filter(target__benchmark=benchmark, stage__in=sorted({stage, *settled_stages}))
    if target_ids is not None:
        candidates = candidates.filter(target_id__in=list(target_ids))
    counts = valid_label_counts(candidates)

    def missing(candidate_id: int, source: str = "") -> int:
        step2, step2_accepts, total, accepts = counts.get(candidate_id, (0, 0, 0, 0))
        progress = CandidateProgress(candidate_id, stage, step2, step2_accepts, total, accepts, source)
        return labels_missing(progress, step=step, step2_labels=first, step3_labels=settings.step3_labels, rule=rule)

    # A candidate without a valid label lacks what any other such candidate lacks: worked out once
    # (under the adaptive policy its prior depends on its sources).
    missing_unlabelled = missing(0)
    by_target: dict[int, list[CandidateRef]] = defaultdict(list)
    settled = 0
    # By target and id, sorted here: the database's sort of every row with its texts spills to disk.
    columns = ["target_id", "id", "stage", "text", "normalized"] + (["sources"] if rule is not None else [])
    rows = sorted(candidates.values_list(*columns))
    for target_id, candidate_id, candidate_stage, text, normalized, *sources in rows:
        if candidate_stage != stage:
            settled += 1
            continue
        if rule is not None:
            lacking = missing(candidate_id, source_key(sources[0] or []))
        else:
            lacking = missing(candidate_id) if candidate_id in counts else missing_unlabelled
        if lacking:
            by_target[target_id].append(CandidateRef(id=candidate_id, text=text, key=normalized, assignments=lacking))
        else:
            settled += 1
    if step == 2:
        labels = f"their {first} valid step-2 labels"
    else:
        labels = "all their valid labels" if rule is None else "labels enough for a decision"
    return StepWork(
        by_target=dict(by_target),
        settled=settled,
        settled_reason=f"candidates already have {labels} (imported or collected)",
        empty_hint=" (survivors of step 2 enter it when the pipeline advances their target)" if step == 3 else "",
    )


def _excluded_by_target(
    *, benchmark: Benchmark, target_ids: Iterable[int], pool: distractors.DistractorPool
) -> dict[int, frozenset[str]]:
    """Distractor exclusions per target: its word and lemma, every candidate ever proposed for that
    lemma anywhere in the benchmark (whatever its stage), and WordNet's synonyms of the lemma for
    the target's part of speech: the synonyms the platform knows (docs/design.md §3)."""
    wanted = set(target_ids)
    lemma_of_target: dict[int, str] = {}
    texts_by_lemma: dict[str, set[str]] = defaultdict(set)
    targets = Target.objects.filter(benchmark=benchmark).values_list("id", "word", "lemma", "pos")
    for target_id, word, lemma, pos in targets:
        lemma_key = (lemma or word).casefold()
        lemma_of_target[target_id] = lemma_key
        texts_by_lemma[lemma_key].update((word, lemma))
        if target_id in wanted:
            texts_by_lemma[lemma_key].update(wordnet.synonyms(lemma or wordnet.lemmatize(word, pos=pos), pos=pos))
    # Only the candidates of targets sharing a lemma with the batch's: a round of a few targets reads
    # a few hundred rows, not the benchmark's every candidate.
    lemmas = {lemma_of_target[target_id] for target_id in wanted}
    sharing = sorted(target_id for target_id, lemma_key in lemma_of_target.items() if lemma_key in lemmas)
    # When every target shares a lemma with the batch's, the benchmark's candidates, without naming
    # each target in the statement.
    if len(sharing) == len(lemma_of_target):
        candidates = Candidate.objects.filter(target__benchmark=benchmark)
    else:
        candidates = Candidate.objects.filter(target_id__in=sharing)
    for target_id, normalized in candidates.values_list("target_id", "normalized"):
        texts_by_lemma[lemma_of_target[target_id]].add(normalized)
    by_lemma: dict[str, frozenset[str]] = {}
    result: dict[int, frozenset[str]] = {}
    for target_id in wanted:
        lemma_key = lemma_of_target[target_id]
        if lemma_key not in by_lemma:
            by_lemma[lemma_key] = distractors.excluded_for(texts_by_lemma[lemma_key], pool=pool)
        result[target_id] = by_lemma[lemma_key]
    return result


def _distractor_picker(
    *, excluded: frozenset[str], pool: distractors.DistractorPool
) -> Callable[[np.random.Generator], str]:
    def pick(rng: np.random.Generator) -> str:
        return distractors.pick_distractor(rng=rng, excluded=excluded, pool=pool)

    return pick


def target_planner(
    *, benchmark: Benchmark, settings: SwordsSettings, step: int, seed: int, target_ids: Sequence[int]
) -> TargetPlanner:
    """The planner of one batch: each target's generator is seeded by ``seed``, the step and the
    target's content (``schemes.planning.target_rng``), so the same seed gives the same HITs."""
    pool = distractors.distractor_pool()
    excluded = _excluded_by_target(benchmark=benchmark, target_ids=target_ids, pool=pool)

    def plan(target: TargetRef, candidates: Sequence[CandidateRef]) -> list[PlannedHIT]:
        key = target_key(context_digest=target.context_digest, offset=target.offset, word=target.word, pos=target.pos)
        return plan_target_hits(
            target_word=target.word,
            candidates=candidates,
            per_hit=settings.candidates_per_hit,
            rng=target_rng(seed=seed, step=step, key=key),
            pick_distractor=_distractor_picker(excluded=excluded[target.id], pool=pool),
        )

    return plan
