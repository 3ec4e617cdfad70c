"""The generation task (CoInCo style, Kremer et al. 2014): for a target in its context, annotators
propose up to five substitutes from memory, or say that none comes to mind. It runs step 1 of
SWORDS benchmarks (the package it sits in: their step 1 names this scheme), with their settings: each
proposal, lemmatised (``rules``), becomes a candidate of the target with the source ``crowd``,
ready for the judgment steps of the same benchmark; votes are counted from the answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from annotation.models import PartOfSpeech, Target, TargetStage
from schemes import register
from schemes.base import (
    AnswerRefused,
    AnswersInvalid,
    CandidateRef,
    CleanAnswer,
    ItemRef,
    Judgments,
    Page,
    PlannedHIT,
    PlannedItem,
    ProposedCandidate,
    SchemeSettings,
    Step,
    StepWork,
    TargetPlanner,
    TargetRef,
    WithoutControls,
    one_item_answer,
)
from schemes.progress import CollectedWork, SchemeProgress, StageMoves, target_item_progress
from schemes.swords.proposals.rules import SOURCE, clean_proposals
from schemes.swords.settings import SwordsSettings

if TYPE_CHECKING:
    from annotation.models import Benchmark

GENERATE_STEP = 1
# The item is the target; its kind carries the target's part of speech, which lemmatising needs.
PROPOSE = "propose"
KINDS = {f"{PROPOSE}-{pos}": pos for pos in PartOfSpeech.values} | {PROPOSE: ""}


class GenerationScheme(WithoutControls):
    name: ClassVar[str] = "generation"
    title: ClassVar[str] = "Generation (propose substitutes, CoInCo style)"
    settings_type: ClassVar[type[SchemeSettings]] = SwordsSettings
    steps: ClassVar[tuple[Step, ...]] = (Step(GENERATE_STEP, "generate", "step 1: generate (propose substitutes)"),)
    item_kinds: ClassVar[Mapping[str, str]] = {
        kind: f"the target ({pos or 'any part of speech'}) to propose substitutes for" for kind, pos in KINDS.items()
    }
    pipeline: ClassVar[str] = ""
    assigned: ClassVar[bool] = False
    # Its targets are those of the SWORDS benchmark it feeds: that scheme moves them on.
    target_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "collecting substitutes", "done": "done"}
    candidate_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "proposed", "excluded": "excluded by a researcher"}
    followup_step: ClassVar[int | None] = None
    judges_candidates: ClassVar[bool] = False
    default: ClassVar[bool] = False
    page: ClassVar[Page] = Page(
        question="Which words could replace {target} in this text?",
        items_template="schemes/generation/items.html",
        script="schemes/proposals.js",
        instructions_template="schemes/generation/instructions.html",
        return_hint="if you do not know the highlighted word.",
        summary="Propose words that could replace a highlighted word in a short text.",
        answers_template="schemes/generation/answer.html",
    )

    def settings(self, benchmark: Benchmark) -> SchemeSettings:
        return SwordsSettings.from_json(benchmark.scheme_settings)

    def assignments_per_hit(self, settings: SchemeSettings, step: int) -> int:
        assert isinstance(settings, SwordsSettings)
        return settings.step1_proposers

    def describe_batches(self, settings: SchemeSettings) -> str:
        assert isinstance(settings, SwordsSettings)
        return f"One HIT per target; {settings.step1_proposers} annotators each propose up to five substitutes."

    def work_for_step(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, target_ids: Sequence[int] | None
    ) -> StepWork:
        """Every target still collecting is itself the item (a done target needs no more candidates)."""
        targets = Target.objects.filter(benchmark=benchmark).exclude(stage=TargetStage.DONE)
        if target_ids is not None:
            targets = targets.filter(pk__in=target_ids)
        return StepWork(by_target={pk: [] for pk in targets.values_list("pk", flat=True)})

    def planner(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, seed: int, target_ids: Sequence[int]
    ) -> TargetPlanner:
        def plan(target: TargetRef, candidates: Sequence[CandidateRef]) -> list[PlannedHIT]:
            kind = f"{PROPOSE}-{target.pos}" if target.pos else PROPOSE
            return [PlannedHIT(part=0, items=(PlannedItem(kind, target.word),))]

        return plan

    def clean_answers(
        self, *, items: Sequence[ItemRef], answers: Mapping[Any, Any], settings: SchemeSettings | None = None
    ) -> dict[int, CleanAnswer]:
        """One answer for the target (``rules.clean_proposals``)."""
        item, raw = one_item_answer(items=items, answers=answers, missing="Type your substitutes before submitting.")
        try:
            value, data = clean_proposals(raw, target=item.text, pos=KINDS.get(item.kind, ""))
        except AnswerRefused as error:
            raise AnswersInvalid(str(error), invalid=[item.id]) from None
        return {item.id: CleanAnswer(value, data)}

    def judgments(self, *, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> Judgments:
        """Each lemma proposed becomes (or joins) a candidate of the target, from the crowd."""
        return Judgments(
            labels=[],
            candidates=[ProposedCandidate(text, SOURCE) for item in items for text in answers[item.id].data["lemmas"]],
        )

    def progress(self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork) -> SchemeProgress:
        """Per target, the proposers who answered of those it needs (``step1_proposers``)."""
        assert isinstance(settings, SwordsSettings)
        return target_item_progress(
            stages=dict(Target.objects.filter(benchmark=benchmark).values_list("pk", "stage")),
            work=work,
            step=self.steps[0],
            default=settings.step1_proposers,
            unit="proposals",
            item_noun="targets",
            done_words=("proposed for", "to propose for"),
            summary=f"{settings.step1_proposers} annotators each propose up to five substitutes for every target.",
        )

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        """Nothing to move: the scheme whose step this is moves its targets on."""
        return StageMoves()


GENERATION = register(GenerationScheme())
