"""What schemes share whose item is the target itself: a sentence to mark (Smart Word Suggestions), a
complex word to simplify (lexical simplification), a target to propose substitutes for (the
generation task). Each target gets one HIT of one item, which a set number of different annotators
answer; the scheme's answers add no labels of candidates, and its progress counts the annotators
each target has of those it needs (docs/design.md §8, §12).

A scheme of this kind subclasses :class:`TargetItemScheme` (as a choice scheme subclasses
``schemes.choices.ChoiceScheme``) and says how many annotators an item asks for, the item's kind and
text, and its words for the progress; it keeps its own page, answers and settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from annotation.models import Target
from schemes.base import (
    CandidateRef,
    ItemRef,
    Judgments,
    PlannedHIT,
    PlannedItem,
    SchemeSettings,
    Step,
    StepWork,
    TargetPlanner,
    TargetRef,
    WithoutControls,
)
from schemes.progress import CollectedWork, SchemeProgress, StageMoves, target_item_moves, target_item_progress

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotation.models import Benchmark
    from schemes.base import CleanAnswer


@dataclass(frozen=True)
class ProgressWords:
    """How the pipeline page speaks of a scheme's progress: the ``unit`` collected ("marks"), the
    items ("sentences"), the two tables' words for items with all their annotators and those still
    lacking some ("marked", "to mark"), and a sentence that sums up the design."""

    unit: str
    item_noun: str
    done_words: tuple[str, str]
    summary: str = ""


class TargetItemScheme(WithoutControls):
    """One HIT of one item per target, answered by ``annotators_per_item`` different annotators.

    A target is done once it has the valid assignments it needs, and collecting again when some are
    filtered (``schemes.progress.target_item_moves``); a scheme that runs another scheme's step, whose
    targets that scheme moves on, overrides ``advancement``."""

    steps: ClassVar[tuple[Step, ...]]
    # What such a scheme is unless it says otherwise: one step, nothing to move on to, its answers no
    # labels of candidates, open to whoever takes its HITs, never a new benchmark's default scheme.
    pipeline: ClassVar[str] = ""
    assigned: ClassVar[bool] = False
    followup_step: ClassVar[int | None] = None
    judges_candidates: ClassVar[bool] = False
    default: ClassVar[bool] = False
    candidate_stage_names: ClassVar[Mapping[str, str]] = {"excluded": "excluded by a researcher"}
    # What brings work to the step when there is none yet, for the batch form ("import sentences first").
    empty_hint: ClassVar[str] = ""

    def annotators_per_item(self, settings: SchemeSettings) -> int:
        """How many different annotators each target's item asks for."""
        raise NotImplementedError

    def item_kind(self, target: TargetRef) -> str:
        """The kind of the target's item (``HITItem.kind``)."""
        raise NotImplementedError

    def item_text(self, target: TargetRef) -> str:
        """The text of the target's item: the target's word, unless the scheme shows more."""
        return target.word

    def progress_words(self, settings: SchemeSettings) -> ProgressWords:
        raise NotImplementedError

    def work_targets(self, benchmark: Benchmark) -> QuerySet[Target]:
        """The targets a step collects for: every target of the benchmark, unless the scheme says less."""
        return Target.objects.filter(benchmark=benchmark)

    def assignments_per_hit(self, settings: SchemeSettings, step: int) -> int:
        return self.annotators_per_item(settings)

    def work_for_step(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, target_ids: Sequence[int] | None
    ) -> StepWork:
        """Every target (of ``target_ids``) is itself the item."""
        targets = self.work_targets(benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=target_ids)
        return StepWork(by_target={pk: [] for pk in targets.values_list("pk", flat=True)}, empty_hint=self.empty_hint)

    def planner(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, seed: int, target_ids: Sequence[int]
    ) -> TargetPlanner:
        def plan(target: TargetRef, candidates: Sequence[CandidateRef]) -> list[PlannedHIT]:
            return [PlannedHIT(part=0, items=(PlannedItem(self.item_kind(target), self.item_text(target)),))]

        return plan

    def judgments(self, *, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> Judgments:
        """Nothing to label: the answer is kept whole (``Answer.data``) and counted by the scheme's figures."""
        return Judgments(labels=[])

    def progress_by_target(self, settings: SchemeSettings) -> bool:
        return True

    def progress(
        self,
        *,
        benchmark: Benchmark,
        settings: SchemeSettings,
        work: CollectedWork,
        target_ids: Sequence[int] | None = None,
    ) -> SchemeProgress:
        """Targets answered by all their annotators, and the answers each still lacks."""
        words = self.progress_words(settings)
        targets = Target.objects.filter(benchmark=benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=list(target_ids))
        return target_item_progress(
            stages=dict(targets.values_list("pk", "stage")),
            work=work,
            step=self.steps[0],
            default=self.annotators_per_item(settings),
            unit=words.unit,
            item_noun=words.item_noun,
            done_words=words.done_words,
            summary=words.summary,
        )

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        """A target is done once it has its annotators' valid answers, and collecting again when some
        are filtered."""
        targets = Target.objects.filter(benchmark=benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=sorted(target_ids))
        return target_item_moves(
            stages=dict(targets.values_list("pk", "stage")),
            work=work,
            step=self.steps[0].number,
            default=self.annotators_per_item(settings),
        )


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, with an "s" unless the count is one ("1 annotator", "3 annotators")."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
