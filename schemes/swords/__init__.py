"""The SWORDS scheme (Lee et al. 2021): accept / reject / abstain on candidates, two controls per HIT,
step 2 (reduce: 3 labels) and step 3 (score: 7 more on the survivors). docs/design.md §3 to §7.

Everything SWORDS-specific that ``hits`` and ``review`` need is asked of ``SWORDS`` here:
``planning`` (seeded shuffle and ``numpy.array_split``), ``distractors`` (the random-word control),
``items`` (row kinds and the control rule), ``settings`` (the typed settings), ``pipeline`` (the
pass rule and when a target advances). Step 1 is run by the generation task of ``proposals`` (a
scheme of its own, registered as ``"generation"``, that benchmarks do not take by itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from schemes import register
from schemes.base import (
    CandidatePrompt,
    Choice,
    CleanAnswer,
    Editable,
    FileSpelling,
    ItemRef,
    Judgments,
    LabelRow,
    Page,
    PlannedHIT,
    QualificationGold,
    ReplaySource,
    SchemeSettings,
    Step,
    StepWork,
    TargetPlanner,
    TargetRef,
)
from schemes.choices import CHOICE_ITEMS_TEMPLATE, CHOICE_SCRIPT, ChoiceScheme
from schemes.progress import CollectedWork, SchemeProgress, StageMoves
from schemes.swords import formats  # noqa: F401  (registers the SWORDS JSON import format)
from schemes.swords.items import ABSTAIN, ACCEPT, REJECT, ItemKind, control_answer_correct, expected_control_answer
from schemes.swords.release import REPLAY
from schemes.swords.settings import SwordsSettings
from schemes.swords.stopping import ADAPTIVE

if TYPE_CHECKING:
    from annotation.models import Benchmark

GENERATE_STEP = 1
REDUCE_STEP = 2
SCORE_STEP = 3


class SwordsScheme(ChoiceScheme):
    name: ClassVar[str] = "swords"
    title: ClassVar[str] = "SWORDS (accept / reject / abstain, crowd)"
    settings_type: ClassVar[type[SchemeSettings]] = SwordsSettings
    steps: ClassVar[tuple[Step, ...]] = (
        # Step 1 (select) gathers candidates; crowds propose them in the generation task (CoInCo style).
        Step(GENERATE_STEP, "generate", "step 1: generate (propose substitutes)", scheme="generation"),
        Step(REDUCE_STEP, "reduce", "step 2: reduce"),
        Step(SCORE_STEP, "score", "step 3: score"),
    )
    item_kinds: ClassVar[Mapping[str, str]] = dict(ItemKind.choices)
    # What a language model is asked for a target's candidates (docs/candidates.md): substitutes in
    # context, as SWORDS's annotators judge them (SWORDS §3.2: would the author have used it?).
    candidate_prompt: ClassVar[CandidatePrompt] = CandidatePrompt(
        "Sentence: {context}\n"
        "Target: the {pos} {target}, marked with ** in: {marked_context}\n\n"
        "List {count} different words or short phrases that could replace {target} in this sentence and keep "
        "its meaning: substitutes the author of the sentence could actually have used instead. Give each "
        "{form}. Best first."
    )
    pipeline: ClassVar[str] = "reduce-score"
    assigned: ClassVar[bool] = False
    # The SWORDS JSON import keeps each target's word and tag as the file spelled them (formats.py).
    file_spelling: ClassVar[FileSpelling] = FileSpelling("extra__swords__target", "extra__swords__pos")
    # The stages of SWORDS §3.2 (stored values of annotation.models.TargetStage / CandidateStage).
    target_stage_names: ClassVar[Mapping[str, str]] = {
        "reduce": "step 2: reduce",
        "score": "step 3: score",
        "done": "done",
    }
    candidate_stage_names: ClassVar[Mapping[str, str]] = {
        "reduce": "step 2: reduce",
        "score": "step 3: score",
        "dropped": "dropped after step 2",
        "final": "scored",
        "excluded": "excluded by a researcher",
    }
    followup_step: ClassVar[int | None] = SCORE_STEP
    judges_candidates: ClassVar[bool] = True
    default: ClassVar[bool] = True
    page: ClassVar[Page] = Page(
        question="Could each word below replace {target} in this text?",
        items_template=CHOICE_ITEMS_TEMPLATE,
        script=CHOICE_SCRIPT,
        instructions_template="schemes/swords/instructions.html",
        # The definitions of SWORDS App. B.1.
        choices=(
            Choice(
                ACCEPT,
                "Accept",
                ("1", "a"),
                "I would actually consider using this substitute as the author of the original sentence.",
            ),
            Choice(
                REJECT, "Reject", ("2", "r"), "I would not use this substitute in place of the highlighted word here."
            ),
            Choice(ABSTAIN, "Abstain", ("3", "s"), "I do not know the meaning of this substitute."),
        ),
        return_hint="if you do not know the highlighted word or more than three of the words.",
        summary="Judge about a dozen substitutes for a highlighted word in a short text.",
        # A batch may name the choices and their keys its own way; their values stay (docs/design.md §4.1).
        editable=Editable(choice_labels=True, choice_keys=True),
    )
    # The qualification test (docs/qualification.md): gold items expect accept or reject; abstaining
    # meets an expected reject, as for the distractor control (docs/design.md §3).
    # The replay crowd reads released SWORDS files (review.replay; schemes.swords.release).
    replay: ClassVar[ReplaySource] = REPLAY
    qualification: ClassVar[QualificationGold] = QualificationGold(
        expects={ACCEPT: ACCEPT, REJECT: REJECT},
        answers={ACCEPT: ACCEPT, REJECT: REJECT, ABSTAIN: ABSTAIN},
        met_by={REJECT: frozenset({REJECT, ABSTAIN})},
    )

    def swords_settings(self, benchmark: Benchmark) -> SwordsSettings:
        return SwordsSettings.from_json(benchmark.scheme_settings)

    def assignments_per_hit(self, settings: SchemeSettings, step: int) -> int:
        assert isinstance(settings, SwordsSettings)
        return settings.reduce_labels if step == REDUCE_STEP else settings.step3_labels

    def describe_batches(self, settings: SchemeSettings) -> str:
        assert isinstance(settings, SwordsSettings)
        return (
            "Each target's candidates of the step are shuffled with the seed and split into HITs of at most "
            f"{settings.candidates_per_hit}, each with two control items. Assignments per HIT default to "
            f"{settings.reduce_labels} in step 2 and {settings.step3_labels} in step 3."
        )

    def work_for_step(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, target_ids: Sequence[int] | None
    ) -> StepWork:
        from schemes.swords.generation import candidates_for_step

        assert isinstance(settings, SwordsSettings)
        return candidates_for_step(benchmark=benchmark, settings=settings, step=step, target_ids=target_ids)

    def planner(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, seed: int, target_ids: Sequence[int]
    ) -> TargetPlanner:
        from schemes.swords.generation import target_planner

        assert isinstance(settings, SwordsSettings)
        return target_planner(benchmark=benchmark, settings=settings, step=step, seed=seed, target_ids=target_ids)

    def judgments(self, *, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> Judgments:
        """A label per candidate row; each control scored (target copy accepted, distractor not)."""
        labels = [
            LabelRow(item.candidate_id, answers[item.id].value)
            for item in items
            if item.kind == ItemKind.CANDIDATE and item.candidate_id is not None
        ]
        checks = [control_answer_correct(item.kind, answers[item.id].value) for item in items if item.control]
        return Judgments(labels=labels, checks_correct=sum(checks), checks_total=len(checks))

    def control_threshold(self, settings: SchemeSettings) -> float | None:
        assert isinstance(settings, SwordsSettings)
        return settings.min_control_accuracy

    def control_check(self, *, kind: str, value: str) -> tuple[bool, str]:
        """Whether a control answer is right, and what the control expects (for evidence tables)."""
        return control_answer_correct(kind, value), expected_control_answer(kind)

    def progress_by_target(self, settings: SchemeSettings) -> bool:
        # The adaptive rule's priors are estimated from every label of the benchmark.
        assert isinstance(settings, SwordsSettings)
        return settings.stopping_policy != ADAPTIVE

    def progress(
        self,
        *,
        benchmark: Benchmark,
        settings: SchemeSettings,
        work: CollectedWork,
        target_ids: Sequence[int] | None = None,
    ) -> SchemeProgress:
        """Valid labels per step and per target (``progress.swords_progress``)."""
        from schemes.swords.progress import swords_progress

        assert isinstance(settings, SwordsSettings)
        return swords_progress(benchmark=benchmark, settings=settings, work=work, target_ids=target_ids)

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        """Reduce → score → done, and back when labels go (``pipeline.refresh_moves``)."""
        from schemes.swords.progress import swords_advancement

        assert isinstance(settings, SwordsSettings)
        return swords_advancement(benchmark=benchmark, settings=settings, target_ids=target_ids)

    def after_refresh(self, *, benchmark: Benchmark) -> None:
        """The adaptive stop's count table stays current across the refresh (``schemes.base.scheme_refreshed``)."""
        from schemes.swords.progress import count_table_refreshed

        count_table_refreshed(benchmark=benchmark)


SWORDS = register(SwordsScheme())

# The generation task that runs step 1 registers itself (after SWORDS, whose settings it reads).
from schemes.swords import proposals  # noqa: E402, F401

__all__ = ["REDUCE_STEP", "SCORE_STEP", "SWORDS", "PlannedHIT", "SwordsScheme", "SwordsSettings", "TargetRef"]
