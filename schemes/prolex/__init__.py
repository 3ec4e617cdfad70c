"""The ProLex scheme (Zhang et al. 2024): expert annotators judge each substitute of a target in
its sentence 1 (acceptable), -1 (unacceptable) or 0 (uncertain). No controls and no crowd: a
researcher assigns targets to named annotators (two of them share an overlap subset, on which
agreement is measured) and the local queue offers each annotator only their own.

``levels`` holds the CEFR levels and the proficiency rule, ``rules`` what the labels decide and
the quadruplets ProLex outputs, ``formats`` the released CSV.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from django.db.models import Count, Q

from annotation.models import Candidate, CandidateStage, Target
from annotation.selectors import valid_labels
from schemes import register
from schemes.base import (
    CandidatePrompt,
    CandidateRef,
    Choice,
    CleanAnswer,
    Editable,
    ItemRef,
    Judgments,
    LabelRow,
    Page,
    PlannedHIT,
    PlannedItem,
    QualificationGold,
    SchemeSettings,
    Step,
    StepWork,
    TargetPlanner,
    TargetRef,
    WithoutControls,
)
from schemes.choices import CHOICE_ITEMS_TEMPLATE, CHOICE_SCRIPT, ChoiceScheme
from schemes.planning import target_key, target_rng
from schemes.progress import (
    CollectedWork,
    ProgressTable,
    SchemeProgress,
    StageMoves,
    StepCount,
    TargetCount,
    done_when_collected,
)
from schemes.prolex import formats  # noqa: F401  (registers the ProLex CSV import format)
from schemes.prolex.rules import LABEL_OF_ANSWER, MINUS_ONE, ONE, ZERO, expert_counts, judges_needed

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
    # What a language model is asked for a target's candidates (docs/candidates.md): ProLex's
    # proficiency-oriented substitutes, of the target's CEFR level or above (Zhang et al. 2024).
    candidate_prompt: ClassVar[CandidatePrompt] = CandidatePrompt(
        "Sentence: {marked_context}\n\n"
        "List {count} different words or short phrases that could replace the {pos} {target} (marked with **) in "
        "this sentence and keep its meaning, each of equal or higher language proficiency than {target}: of the "
        "same or a higher CEFR level, as an advanced learner of English would write to sound more proficient. "
        "Give each {form}. Best first."
    )
    pipeline: ClassVar[str] = ""
    assigned: ClassVar[bool] = True
    # A target is judged once each expert it goes to has judged every substitute (Zhang et al. 2024).
    target_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "being judged", "done": "judged"}
    candidate_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "kept", "excluded": "excluded by a researcher"}
    followup_step: ClassVar[int | None] = None
    judges_candidates: ClassVar[bool] = True
    default: ClassVar[bool] = False
    label_of_choice: ClassVar[Mapping[str, str]] = LABEL_OF_ANSWER
    page: ClassVar[Page] = Page(
        question="Is each word below an acceptable substitute for {target} in this sentence?",
        items_template=CHOICE_ITEMS_TEMPLATE,
        script=CHOICE_SCRIPT,
        instructions_template="schemes/prolex/instructions.html",
        # Each answer is typed as the value it records ("-" for -1): an expert types the judgment.
        choices=(
            Choice(ONE, "1 acceptable", ("1",), "It keeps the meaning in this context and reads naturally here."),
            Choice(MINUS_ONE, "-1 unacceptable", ("-",), "It changes the meaning, or the target cannot be replaced."),
            Choice(
                ZERO, "0 uncertain", ("0",), "You cannot tell: a narrower word, a hard sentence, too little context."
            ),
        ),
        summary="Judge each generated substitute for a highlighted word 1 / -1 / 0.",
        # A batch may name the choices and their keys its own way; their values stay (docs/design.md §4.1).
        editable=Editable(choice_labels=True, choice_keys=True),
    )
    # The qualification test (docs/qualification.md): gold items expect 1 or -1; an expert's 0 (uncertain)
    # meets an expected -1, as abstaining meets an expected reject (docs/design.md §3).
    qualification: ClassVar[QualificationGold] = QualificationGold(
        expects={ONE: LABEL_OF_ANSWER[ONE], MINUS_ONE: LABEL_OF_ANSWER[MINUS_ONE]},
        answers=LABEL_OF_ANSWER,
        met_by={LABEL_OF_ANSWER[MINUS_ONE]: frozenset({LABEL_OF_ANSWER[MINUS_ONE], LABEL_OF_ANSWER[ZERO]})},
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
        """A label per substitute: 1 accept, -1 reject, 0 abstain (docs/design.md §2)."""
        return Judgments(
            labels=[
                LabelRow(item.candidate_id, LABEL_OF_ANSWER[answers[item.id].value])
                for item in items
                if item.candidate_id is not None
            ]
        )

    def _judgments(
        self, *, benchmark: Benchmark, target_ids: Sequence[int] | None
    ) -> tuple[dict[int, list[int]], dict[int, int], dict[int, set[int]]]:
        """Per target its substitutes (excluded ones left out), per substitute its valid labels, and
        the workers who gave them."""
        candidates = Candidate.objects.filter(target__benchmark=benchmark).exclude(stage=CandidateStage.EXCLUDED)
        if target_ids is not None:
            candidates = candidates.filter(target_id__in=sorted(target_ids))
        substitutes: dict[int, list[int]] = defaultdict(list)
        for pk, target_id in candidates.values_list("pk", "target_id").order_by("target_id", "pk"):
            substitutes[target_id].append(pk)
        labels: dict[int, int] = defaultdict(int)
        judged_by: dict[int, set[int]] = defaultdict(set)
        for candidate_id, worker_id in (
            valid_labels().filter(candidate__in=candidates).values_list("candidate_id", "worker_id")
        ):
            labels[candidate_id] += 1
            if worker_id is not None:
                judged_by[candidate_id].add(worker_id)
        return substitutes, labels, judged_by

    def progress_by_target(self, settings: SchemeSettings) -> bool:
        # The per-expert table counts each expert's targets together; an expert panel is small.
        return False

    def progress(
        self,
        *,
        benchmark: Benchmark,
        settings: SchemeSettings,
        work: CollectedWork,
        target_ids: Sequence[int] | None = None,
    ) -> SchemeProgress:
        """Judgments per substitute (one from each expert its target goes to), per target, and per
        expert the substitutes judged and still to judge."""
        experts = Counter(target_id for targets in work.reserved.values() for target_id in targets)
        chosen = None if target_ids is None else list(target_ids)
        substitutes, labels, judged_by = self._judgments(benchmark=benchmark, target_ids=chosen)
        step = StepCount(
            JUDGE_STEP,
            self.steps[0].title,
            "judgments",
            "substitutes",
            waiting_noun="substitutes without a judgment in no open batch",
        )
        held = work.open_candidates.get(JUDGE_STEP, frozenset())
        targets: dict[int, TargetCount] = {}
        in_scope = Target.objects.filter(benchmark=benchmark)
        if chosen is not None:
            in_scope = in_scope.filter(pk__in=chosen)
        for target_id in in_scope.values_list("pk", flat=True).order_by("pk"):
            needed_each = judges_needed(experts[target_id])
            own = substitutes.get(target_id, [])
            got = sum(min(labels[pk], needed_each) for pk in own)
            complete = sum(1 for pk in own if labels[pk] >= needed_each)
            targets[target_id] = TargetCount(
                candidates=len(own),
                steps={JUDGE_STEP: (got, needed_each * len(own))},
                counts={"judged": complete, "to judge": len(own) - complete},
            )
            step.collected += got
            step.needed += needed_each * len(own)
            step.items += len(own)
            step.waiting += sum(1 for pk in own if not labels[pk] and pk not in held)
        rows = sorted(
            (
                work.worker_names.get(worker_id, str(worker_id)),
                expert_counts(expert=worker_id, targets=own, substitutes=substitutes, judged_by=judged_by),
            )
            for worker_id, own in work.reserved.items()
        )
        stages = Counter(Candidate.objects.filter(target__in=in_scope).values_list("stage", flat=True))
        return SchemeProgress(
            steps=[step],
            targets=targets,
            candidates_by_stage={stage: stages.get(stage, 0) for stage in self.candidate_stage_names},
            target_columns=("judged", "to judge"),
            tables=[ProgressTable("Per expert", ("judged", "to judge"), tuple(rows))],
            summary=(
                "Each substitute is judged 1 / -1 / 0 by the experts its target goes to (two on the overlap "
                "targets, one on the rest); a target is judged when every expert has judged all its substitutes."
            ),
        )

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        """A target is judged once each substitute has a judgment from every expert it goes to (one
        at least), and being judged again when one is filtered or removed."""
        experts = Counter(target_id for targets in work.reserved.values() for target_id in targets)
        targets = Target.objects.filter(benchmark=benchmark)
        if target_ids is not None:
            targets = targets.filter(pk__in=sorted(target_ids))
        stages = dict(targets.values_list("pk", "stage"))
        substitutes, labels, _ = self._judgments(benchmark=benchmark, target_ids=list(stages))

        def complete(target_id: int) -> bool:
            return all(labels[pk] >= judges_needed(experts[target_id]) for pk in substitutes.get(target_id, []))

        return done_when_collected(stages, complete)


PROLEX = register(ProlexScheme())
