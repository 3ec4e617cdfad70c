"""A test-only scheme that proves the seam: yes / no on each target's sentence, no controls, one step.

It is written the way a new scheme is written (docs/architecture.md, "How to add a scheme") and
registered only while a test uses it; nothing in ``hits`` or ``analysis`` knows of it. Its figures
(``figures.py``) and its export format (``exports.py``) are plug-ins of the analysis room in this
package, loaded as the built-in schemes' are (``schemes.load_plugins``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

from annotation.models import Benchmark, Target
from schemes import load_plugins, register, unregister
from schemes.base import (
    CandidateRef,
    Choice,
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
    setting,
)
from schemes.choices import CHOICE_ITEMS_TEMPLATE, CHOICE_SCRIPT, ChoiceScheme
from schemes.progress import CollectedWork, SchemeProgress, StageMoves, target_item_progress

TOY = "toy-yes-no"
SENTENCE = "sentence"


@dataclass(frozen=True)
class ToySettings(SchemeSettings):
    judgments_per_sentence: int = setting(2, minimum=1, help="annotators per sentence")


class ToyScheme(ChoiceScheme):
    name: ClassVar[str] = TOY
    title: ClassVar[str] = "Literal or not (yes / no)"
    settings_type: ClassVar[type[SchemeSettings]] = ToySettings
    steps: ClassVar[tuple[Step, ...]] = (Step(1, "judge", "step 1: judge"),)
    item_kinds: ClassVar[Mapping[str, str]] = {SENTENCE: "the sentence"}
    pipeline: ClassVar[str] = ""
    assigned: ClassVar[bool] = False
    target_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "being judged", "done": "judged"}
    candidate_stage_names: ClassVar[Mapping[str, str]] = {}
    followup_step: ClassVar[int | None] = None
    judges_candidates: ClassVar[bool] = False
    default: ClassVar[bool] = False
    page: ClassVar[Page] = Page(
        question="Is {target} meant literally in this text?",
        items_template=CHOICE_ITEMS_TEMPLATE,
        script=CHOICE_SCRIPT,
        choices=(Choice("yes", "Yes", ("1", "y")), Choice("no", "No", ("2", "n"))),
    )

    def assignments_per_hit(self, settings: SchemeSettings, step: int) -> int:
        assert isinstance(settings, ToySettings)
        return settings.judgments_per_sentence

    def describe_batches(self, settings: SchemeSettings) -> str:
        return "One HIT per sentence."

    def work_for_step(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, target_ids: Sequence[int] | None
    ) -> StepWork:
        targets = Target.objects.filter(benchmark=benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=target_ids)
        return StepWork(by_target={target_id: [] for target_id in targets.values_list("pk", flat=True)})

    def planner(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, seed: int, target_ids: Sequence[int]
    ) -> TargetPlanner:
        def plan(target: TargetRef, candidates: Sequence[CandidateRef]) -> list[PlannedHIT]:
            return [PlannedHIT(part=0, items=(PlannedItem(SENTENCE, target.context_text),))]

        return plan

    def judgments(self, *, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> Judgments:
        return Judgments(labels=[])

    def control_threshold(self, settings: SchemeSettings) -> float | None:
        return None

    def control_check(self, *, kind: str, value: str) -> tuple[bool, str]:
        raise ValueError("the toy scheme has no controls")

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
        assert isinstance(settings, ToySettings)
        targets = Target.objects.filter(benchmark=benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=list(target_ids))
        return target_item_progress(
            stages=dict(targets.values_list("pk", "stage")),
            work=work,
            step=self.steps[0],
            default=settings.judgments_per_sentence,
            unit="judgments",
            item_noun="sentences",
            done_words=("judged", "to judge"),
        )

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        return StageMoves()


@contextmanager
def toy_scheme() -> Iterator[ToyScheme]:
    scheme = ToyScheme()
    register(scheme)
    # What analysis.apps does for the schemes registered at start-up.
    load_plugins("analysis")
    try:
        yield scheme
    finally:
        unregister(TOY)
