"""Lexical simplification as in the TSAR-2022 shared task (Saggion et al. 2022; docs/design.md §12):
an instance is a sentence with one complex word; each annotator types one simpler substitute, or
says that none comes to mind, and a batch asks ``annotators_per_instance`` different annotators per
instance (25 in TSAR-2022). An instance's gold is its suggestions counted and ranked by count.

The target is the complex word (its part of speech empty, its lemma the word: nothing here reads an
English-only resource); its HIT has one item, the word. Answers are kept whole (``Answer.data``,
``answers``) and add no labels: the figures, exports and evaluation count them (``figures``).
Its TSV files are read by ``formats`` (the shared task's ``tsv`` readers) and scored by ``metrics``.
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
from schemes.target_items import ProgressWords, TargetItemScheme, plural
from schemes.tsar import formats  # noqa: F401  (registers the TSAR TSV import format)
from schemes.tsar.answers import clean_suggestion

if TYPE_CHECKING:
    from annotation.models import Benchmark

SUGGEST_STEP = 1
# The item: the complex word, to suggest a simpler one for.
SIMPLIFY = "simplify"


@dataclass(frozen=True)
class TsarSettings(SchemeSettings):
    annotators_per_instance: int = setting(
        25,
        minimum=1,
        maximum=1000,
        help="different annotators who suggest a simpler word for each instance",
        label="Annotators per instance",
        unit="annotators",
    )
    max_suggestion_length: int = setting(
        100,
        minimum=1,
        maximum=1000,
        help="characters a suggested word or phrase may have at most",
        label="Longest suggestion",
        unit="characters",
    )


class TsarScheme(TargetItemScheme):
    name: ClassVar[str] = "tsar"
    title: ClassVar[str] = "Lexical simplification (TSAR-2022: suggest a simpler word)"
    settings_type: ClassVar[type[SchemeSettings]] = TsarSettings
    steps: ClassVar[tuple[Step, ...]] = (Step(SUGGEST_STEP, "suggest", "suggest a simpler word"),)
    item_kinds: ClassVar[Mapping[str, str]] = {SIMPLIFY: "the complex word to suggest a simpler word for"}
    # What a language model is asked for a complex word (docs/candidates.md): simpler words, in the
    # benchmark's language (its tag, docs/design.md §12), as TSAR-2022's annotators give them.
    candidate_prompt: ClassVar[CandidatePrompt] = CandidatePrompt(
        "The following sentence is in {language}: {context}\n\n"
        "List {count} different simpler words or short phrases in {language} that could replace the complex word "
        "{target} in this sentence and keep its meaning, easier to understand for a non-native speaker or a reader "
        "with low literacy. Best first."
    )
    # An instance is done once its annotators (``annotators_per_instance``) have each answered it.
    target_stage_names: ClassVar[Mapping[str, str]] = {"reduce": "collecting suggestions", "done": "suggested"}
    page: ClassVar[Page] = Page(
        question="Which simpler word could replace {target} in this sentence?",
        items_template="schemes/tsar/items.html",
        script="schemes/simplify.js",
        instructions_template="schemes/tsar/instructions.html",
        return_hint="if you cannot understand the sentence.",
        summary="Type a simpler word for a difficult word in a sentence.",
        answers_template="schemes/tsar/answer.html",
    )

    def settings(self, benchmark: Benchmark) -> SchemeSettings:
        return TsarSettings.from_json(benchmark.scheme_settings)

    empty_hint: ClassVar[str] = " (import instances first: a TSAR-2022 TSV file)"

    def annotators_per_item(self, settings: SchemeSettings) -> int:
        assert isinstance(settings, TsarSettings)
        return settings.annotators_per_instance

    def item_kind(self, target: TargetRef) -> str:
        return SIMPLIFY

    def progress_words(self, settings: SchemeSettings) -> ProgressWords:
        assert isinstance(settings, TsarSettings)
        return ProgressWords(
            unit="suggestions",
            item_noun="instances",
            done_words=("suggested for", "to suggest for"),
            summary=(
                f"{plural(settings.annotators_per_instance, 'different annotator')} each suggest one simpler "
                "word for every instance (or as many as its HIT asks for)."
            ),
        )

    def describe_batches(self, settings: SchemeSettings) -> str:
        assert isinstance(settings, TsarSettings)
        return (
            f"One HIT per instance (a sentence and its complex word); {settings.annotators_per_instance} "
            "different annotators each suggest one simpler word."
        )

    def clean_answers(
        self, *, items: Sequence[ItemRef], answers: Mapping[Any, Any], settings: SchemeSettings | None = None
    ) -> dict[int, CleanAnswer]:
        """One answer for the complex word (``answers.clean_suggestion``)."""
        settings = settings or TsarSettings()
        assert isinstance(settings, TsarSettings)
        missing = "Type a simpler word, or tick that none comes to mind, before submitting."
        item, raw = one_item_answer(items=items, answers=answers, missing=missing)
        try:
            value, data = clean_suggestion(raw, complex_word=item.text, max_length=settings.max_suggestion_length)
        except AnswerRefused as error:
            raise AnswersInvalid(str(error), invalid=[item.id]) from None
        return {item.id: CleanAnswer(value, data)}


TSAR = register(TsarScheme())
