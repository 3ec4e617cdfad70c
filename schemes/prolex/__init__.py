"""The ProLex scheme (Zhang et al. 2024): expert annotators judge each substitute of a target in
its sentence 1 (acceptable), -1 (unacceptable) or 0 (uncertain). No controls and no crowd: a
researcher assigns targets to named annotators (two of them share an overlap subset, on which
agreement is measured) and the local queue offers each annotator only their own.

``levels`` holds the CEFR levels and the proficiency rule, ``rules`` what the labels decide and
the quadruplets ProLex outputs, ``formats`` the released CSV.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from django.db.models import Count, Q

from annotation.models import Candidate
from schemes import register
from schemes.base import (
    CandidateRef,
    Choice,
    CleanAnswer,
    ItemRef,
    Judgments,
    LabelRow,
    Page,
    PlannedHIT,
    PlannedItem,
    SchemeSettings,
    Step,
    StepWork,
    TargetPlanner,
    TargetRef,
    WithoutControls,
)
from schemes.choices import CHOICE_ITEMS_TEMPLATE, CHOICE_SCRIPT, ChoiceScheme
from schemes.prolex import formats  # noqa: F401  (registers the ProLex CSV import format)
from schemes.prolex.rules import LABEL_OF_ANSWER, MINUS_ONE, ONE, ZERO
from schemes.swords.planning import target_key, target_rng

if TYPE_CHECKING:
    from annotation.models import Benchmark

JUDGE_STEP = 1
CANDIDATE = "candidate"


@dataclass(frozen=True)
class ProlexSettings(SchemeSettings):
    """ProLex has no settings of its own: who judges what is the researcher's assignment."""


class ProlexScheme(WithoutControls, ChoiceScheme):
    name: ClassVar[str] = "prolex"
    title: ClassVar[str] = "ProLex (1 / -1 / 0, experts)"
    settings_type: ClassVar[type[SchemeSettings]] = ProlexSettings
    steps: ClassVar[tuple[Step, ...]] = (Step(JUDGE_STEP, "judge", "judge the substitutes"),)
    item_kinds: ClassVar[Mapping[str, str]] = {CANDIDATE: "substitute"}
    pipeline: ClassVar[str] = ""
    assigned: ClassVar[bool] = True
    judges_candidates: ClassVar[bool] = True
    default: ClassVar[bool] = False
    label_of_choice: ClassVar[Mapping[str, str]] = LABEL_OF_ANSWER
    page: ClassVar[Page] = Page(
        question="Is each word below an acceptable substitute for {target} in this sentence?",
        items_template=CHOICE_ITEMS_TEMPLATE,
        script=CHOICE_SCRIPT,
        instructions_template="schemes/prolex/instructions.html",
        choices=(
            Choice(ONE, "1 acceptable", "a", "It keeps the meaning in this context and reads naturally here."),
            Choice(MINUS_ONE, "-1 unacceptable", "u", "It changes the meaning, or the target cannot be replaced."),
            Choice(ZERO, "0 uncertain", "n", "You cannot tell: a narrower word, a hard sentence, too little context."),
        ),
    )

    def assignments_per_hit(self, settings: SchemeSettings, step: int) -> int:
        return 1

    def describe_batches(self, settings: SchemeSettings) -> str:
        return (
            "One HIT per target with all its substitutes, in a seeded order. Each target goes to one of the "
            "annotators you name, and the overlap targets to two of them (agreement is measured on those); "
            "the local queue offers each annotator only their own."
        )

    def work_for_step(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, target_ids: Sequence[int] | None
    ) -> StepWork:
        """Targets with a substitute that has no valid label yet, each with all its substitutes:
        an annotator judges the whole list."""
        candidates = Candidate.objects.filter(target__benchmark=benchmark)
        if target_ids is not None:
            candidates = candidates.filter(target_id__in=target_ids)
        valid = Q(labels__assignment__isnull=True) | Q(labels__assignment__filtered=False)
        counted = candidates.annotate(labels_valid=Count("labels", filter=valid)).order_by("target_id", "pk")
        by_target: dict[int, list[CandidateRef]] = defaultdict(list)
        lacking: set[int] = set()
        for pk, target_id, text, normalized, labels in counted.values_list(
            "pk", "target_id", "text", "normalized", "labels_valid"
        ):
            by_target[target_id].append(CandidateRef(id=pk, text=text, key=normalized))
            if not labels:
                lacking.add(target_id)
        return StepWork(
            by_target={target_id: by_target[target_id] for target_id in sorted(lacking)},
            settled=len(by_target) - len(lacking),
            settled_reason="targets have a label on every substitute (imported or collected)",
            empty_hint=" (import targets with their substitutes first: a ProLex file, JSONL or CSV)",
        )

    def planner(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, seed: int, target_ids: Sequence[int]
    ) -> TargetPlanner:
        def plan(target: TargetRef, candidates: Sequence[CandidateRef]) -> list[PlannedHIT]:
            key = target_key(
                context_digest=target.context_digest, offset=target.offset, word=target.word, pos=target.pos
            )
            ordered = sorted(candidates, key=lambda candidate: (candidate.key, candidate.id))
            display = target_rng(seed=seed, step=step, key=key).permutation(len(ordered))
            items = tuple(PlannedItem(CANDIDATE, ordered[i].text, ordered[i].id) for i in display)
            return [PlannedHIT(part=0, items=items)]

        return plan

    def judgments(self, *, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> Judgments:
        """A label per substitute: 1 accept, -1 reject, 0 abstain (DESIGN §2)."""
        return Judgments(
            labels=[
                LabelRow(item.candidate_id, LABEL_OF_ANSWER[answers[item.id].value])
                for item in items
                if item.candidate_id is not None
            ]
        )


PROLEX = register(ProlexScheme())
