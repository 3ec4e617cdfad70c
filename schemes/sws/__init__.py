"""The Smart Word Suggestions scheme (Wang et al. 2023): an annotator reads a sentence, marks the
words or phrases that could be improved, gives each one or more suggestions and a type
(refine-usage or diversify-expression), or sets aside a sentence with errors. Several annotators
mark each sentence; their work is merged (``merge``) across them.

The sentence is the item: each context of the benchmark has a target that is the whole sentence
(made by the import, ``formats``), and its HIT shows the sentence to mark. Answers are structured
(``answers``) and kept whole (``Answer.data``); they add no labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from annotation.models import Target
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
    SchemeSettings,
    Step,
    StepWork,
    TargetPlanner,
    TargetRef,
    WithoutControls,
    one_item_answer,
    setting,
)
from schemes.progress import CollectedWork, SchemeProgress, StageMoves, target_item_moves, target_item_progress
from schemes.sws import formats  # noqa: F401  (registers the Smart Word Suggestions import format)
from schemes.sws.answers import clean_answer
from schemes.sws.display import marked_pieces, sentence_pieces

if TYPE_CHECKING:
    from annotation.models import Benchmark

MARK_STEP = 1
SENTENCE = "sentence"


@dataclass(frozen=True)
class SwsSettings(SchemeSettings):
    annotators_per_sentence: int = setting(
        3,
        minimum=1,
        maximum=100,
        help="annotators who mark each sentence",
        label="Annotators per sentence",
        unit="annotators",
    )
    min_targets: int = setting(
        3,
        minimum=0,
        maximum=50,
        help="targets an annotator marks in a sentence at least",
        label="Least targets per sentence",
        unit="targets",
    )


class SwsScheme(WithoutControls):
    name: ClassVar[str] = "sws"
    title: ClassVar[str] = "Smart Word Suggestions (spans and suggestions)"
    settings_type: ClassVar[type[SchemeSettings]] = SwsSettings
    steps: ClassVar[tuple[Step, ...]] = (Step(MARK_STEP, "mark", "mark targets and suggest"),)
    item_kinds: ClassVar[Mapping[str, str]] = {SENTENCE: "the sentence to mark"}
    pipeline: ClassVar[str] = ""
    assigned: ClassVar[bool] = False
    # A sentence is marked once its annotators (``annotators_per_sentence``) have each marked it.
    target_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "being marked", "done": "marked"}
    candidate_stage_names: ClassVar[Mapping[str, str]] = {"excluded": "excluded by a researcher"}
    followup_step: ClassVar[int | None] = None
    judges_candidates: ClassVar[bool] = False
    default: ClassVar[bool] = False
    page: ClassVar[Page] = Page(
        question="Which words or phrases of this sentence could be improved?",
        items_template="schemes/sws/items.html",
        script="schemes/sws.js",
        instructions_template="schemes/sws/instructions.html",
        return_hint="if you cannot understand the sentence.",
        shows_context=False,
        summary="Mark words of a sentence that could be improved and suggest better ones.",
        answers_template="schemes/sws/answer.html",
        helpers={"pieces": sentence_pieces, "marked": marked_pieces},
    )

    def settings(self, benchmark: Benchmark) -> SchemeSettings:
        return SwsSettings.from_json(benchmark.scheme_settings)

    def assignments_per_hit(self, settings: SchemeSettings, step: int) -> int:
        assert isinstance(settings, SwsSettings)
        return settings.annotators_per_sentence

    def describe_batches(self, settings: SchemeSettings) -> str:
        assert isinstance(settings, SwsSettings)
        return (
            f"One HIT per sentence; {settings.annotators_per_sentence} annotators mark each, at least "
            f"{settings.min_targets} targets apiece."
        )

    def work_for_step(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, target_ids: Sequence[int] | None
    ) -> StepWork:
        """Every sentence (the target that is its whole sentence) is itself the item."""
        targets = Target.objects.filter(benchmark=benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=target_ids)
        return StepWork(
            by_target={pk: [] for pk in targets.values_list("pk", flat=True)},
            empty_hint=" (import sentences first: a Smart Word Suggestions file)",
        )

    def planner(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, seed: int, target_ids: Sequence[int]
    ) -> TargetPlanner:
        def plan(target: TargetRef, candidates: Sequence[CandidateRef]) -> list[PlannedHIT]:
            return [PlannedHIT(part=0, items=(PlannedItem(SENTENCE, target.context_text),))]

        return plan

    def clean_answers(
        self, *, items: Sequence[ItemRef], answers: Mapping[Any, Any], settings: SchemeSettings | None = None
    ) -> dict[int, CleanAnswer]:
        """One answer for the one sentence (``answers.clean_answer``)."""
        settings = settings or SwsSettings()
        assert isinstance(settings, SwsSettings)
        missing = "Please mark the targets of the sentence before submitting."
        item, raw = one_item_answer(items=items, answers=answers, missing=missing)
        try:
            value, data = clean_answer(raw, sentence=item.text, min_targets=settings.min_targets)
        except AnswerRefused as error:
            raise AnswersInvalid(str(error), invalid=[item.id]) from None
        return {item.id: CleanAnswer(value, data)}

    def judgments(self, *, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> Judgments:
        """Nothing to label: the marked targets stay in the answer, merged when the figures are made."""
        return Judgments(labels=[])

    def progress(self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork) -> SchemeProgress:
        """Sentences marked by all their annotators, and the marks each still lacks."""
        assert isinstance(settings, SwsSettings)
        return target_item_progress(
            stages=dict(Target.objects.filter(benchmark=benchmark).values_list("pk", "stage")),
            work=work,
            step=self.steps[0],
            default=settings.annotators_per_sentence,
            unit="marks",
            item_noun="sentences",
            done_words=("marked", "to mark"),
            summary=(
                f"Each sentence is marked by {settings.annotators_per_sentence} annotator"
                f"{'s' if settings.annotators_per_sentence != 1 else ''} (or as many as its HIT asks for), "
                f"each marking at least {settings.min_targets} target{'s' if settings.min_targets != 1 else ''}."
            ),
        )

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        """A sentence is marked once it has its annotators' valid marks, and being marked again when
        some are filtered."""
        assert isinstance(settings, SwsSettings)
        targets = Target.objects.filter(benchmark=benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=sorted(target_ids))
        return target_item_moves(
            stages=dict(targets.values_list("pk", "stage")),
            work=work,
            step=MARK_STEP,
            default=settings.annotators_per_sentence,
        )


SWS = register(SwsScheme())
