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

from schemes import register
from schemes.base import (
    AnswerRefused,
    AnswersInvalid,
    CandidatePrompt,
    CleanAnswer,
    ItemRef,
    Page,
    SchemeSettings,
    Step,
    TargetRef,
    one_item_answer,
    setting,
)
from schemes.sws import formats  # noqa: F401  (registers the Smart Word Suggestions import format)
from schemes.sws.answers import clean_answer
from schemes.sws.display import marked_pieces, sentence_pieces
from schemes.target_items import ProgressWords, TargetItemScheme, plural

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


class SwsScheme(TargetItemScheme):
    name: ClassVar[str] = "sws"
    title: ClassVar[str] = "Smart Word Suggestions (spans and suggestions)"
    settings_type: ClassVar[type[SchemeSettings]] = SwsSettings
    steps: ClassVar[tuple[Step, ...]] = (Step(MARK_STEP, "mark", "mark targets and suggest"),)
    item_kinds: ClassVar[Mapping[str, str]] = {SENTENCE: "the sentence to mark"}
    # Its targets are sentences whose words the annotators pick themselves, and its suggestions are
    # theirs: a model's substitutes for a whole sentence would be judged by nobody (docs/candidates.md).
    candidate_prompt: ClassVar[CandidatePrompt] = CandidatePrompt(
        None,
        refusal="its annotators mark the words to improve and write the suggestions themselves; a model's list "
        "for a whole sentence would be judged by nobody",
    )
    # A sentence is marked once its annotators (``annotators_per_sentence``) have each marked it.
    target_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "being marked", "done": "marked"}
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

    empty_hint: ClassVar[str] = " (import sentences first: a Smart Word Suggestions file)"

    def annotators_per_item(self, settings: SchemeSettings) -> int:
        assert isinstance(settings, SwsSettings)
        return settings.annotators_per_sentence

    def item_kind(self, target: TargetRef) -> str:
        return SENTENCE

    def item_text(self, target: TargetRef) -> str:
        """The whole sentence, in which the annotator marks words."""
        return target.context_text

    def progress_words(self, settings: SchemeSettings) -> ProgressWords:
        assert isinstance(settings, SwsSettings)
        return ProgressWords(
            unit="marks",
            item_noun="sentences",
            done_words=("marked", "to mark"),
            summary=(
                f"Each sentence is marked by {plural(settings.annotators_per_sentence, 'annotator')} (or as many "
                f"as its HIT asks for), each marking at least {plural(settings.min_targets, 'target')}."
            ),
        )

    def describe_batches(self, settings: SchemeSettings) -> str:
        assert isinstance(settings, SwsSettings)
        return (
            f"One HIT per sentence; {settings.annotators_per_sentence} annotators mark each, at least "
            f"{settings.min_targets} targets apiece."
        )

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


SWS = register(SwsScheme())
