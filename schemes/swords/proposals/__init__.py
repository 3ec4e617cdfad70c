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
    CleanAnswer,
    ItemRef,
    Judgments,
    Page,
    ProposedCandidate,
    SchemeSettings,
    Step,
    TargetRef,
    one_item_answer,
)
from schemes.progress import CollectedWork, StageMoves
from schemes.swords.proposals.rules import SOURCE, clean_proposals
from schemes.swords.settings import SwordsSettings
from schemes.target_items import ProgressWords, TargetItemScheme

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotation.models import Benchmark

GENERATE_STEP = 1
# The item is the target; its kind carries the target's part of speech, which lemmatising needs.
PROPOSE = "propose"
KINDS = {f"{PROPOSE}-{pos}": pos for pos in PartOfSpeech.values} | {PROPOSE: ""}


class GenerationScheme(TargetItemScheme):
    name: ClassVar[str] = "generation"
    title: ClassVar[str] = "Generation (propose substitutes, CoInCo style)"
    settings_type: ClassVar[type[SchemeSettings]] = SwordsSettings
    steps: ClassVar[tuple[Step, ...]] = (Step(GENERATE_STEP, "generate", "step 1: generate (propose substitutes)"),)
    item_kinds: ClassVar[Mapping[str, str]] = {
        kind: f"the target ({pos or 'any part of speech'}) to propose substitutes for" for kind, pos in KINDS.items()
    }
    # Its targets are those of the SWORDS benchmark it feeds: that scheme moves them on.
    target_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "collecting substitutes", "done": "done"}
    candidate_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "proposed", "excluded": "excluded by a researcher"}
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

    def annotators_per_item(self, settings: SchemeSettings) -> int:
        assert isinstance(settings, SwordsSettings)
        return settings.step1_proposers

    def item_kind(self, target: TargetRef) -> str:
        return f"{PROPOSE}-{target.pos}" if target.pos else PROPOSE

    def work_targets(self, benchmark: Benchmark) -> QuerySet[Target]:
        """The targets still collecting: a done target needs no more candidates."""
        return Target.objects.filter(benchmark=benchmark).exclude(stage=TargetStage.DONE)

    def progress_words(self, settings: SchemeSettings) -> ProgressWords:
        assert isinstance(settings, SwordsSettings)
        return ProgressWords(
            unit="proposals",
            item_noun="targets",
            done_words=("proposed for", "to propose for"),
            summary=f"{settings.step1_proposers} annotators each propose up to five substitutes for every target.",
        )

    def describe_batches(self, settings: SchemeSettings) -> str:
        assert isinstance(settings, SwordsSettings)
        return f"One HIT per target; {settings.step1_proposers} annotators each propose up to five substitutes."

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

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        """Nothing to move: the scheme whose step this is moves its targets on."""
        return StageMoves()


GENERATION = register(GenerationScheme())
