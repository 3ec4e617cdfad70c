"""The prompts a language model is asked for a target's substitutes (docs/candidates.md).

Each scheme declares its default prompt (``schemes.base.CandidatePrompt``, the scheme's
``candidate_prompt``); the schemes' registry hands them down here (``candidate_prompt_offer``), since
this room sits below ``schemes`` and cannot ask it. A researcher's own prompt (``--prompt FILE``, the
form's text) replaces the scheme's. A prompt is a template whose placeholders are filled per target;
the answer format is asked by a system message of the platform's, so a prompt never needs to.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass

from annotation.models import Benchmark, PartOfSpeech, Target

#: What a prompt may name, filled per target.
PLACEHOLDERS: dict[str, str] = {
    "context": "the context, as stored",
    "marked_context": "the context with the target between ** and **",
    "target": "the target word or phrase as the context has it",
    "lemma": "the target's lemma (its word when none is known)",
    "pos": "the target's part of speech in words (noun, verb, adjective, adverb; empty when unknown)",
    "count": "how many substitutes are asked (--per-target)",
    "language": "the benchmark's language in English words (English, Spanish, ...; else its tag)",
    "form": "how the benchmark writes its candidates: 'in its base (dictionary) form' when they are "
    "lemmas, 'in the form that fits the sentence' otherwise",
}

#: The platform's system message: the answer's format, whatever the prompt.
SYSTEM_MESSAGE = (
    "You propose lexical substitutes for a word in context. Answer with JSON only, of the form "
    '{"substitutes": ["first", "second"]}, the best first, one word or short phrase each, '
    "with no numbering, comment or explanation."
)

#: English names of the languages a benchmark's tag most often names; other tags are said as they are.
LANGUAGE_NAMES = {
    "ar": "Arabic",
    "ca": "Catalan",
    "de": "German",
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "it": "Italian",
    "ja": "Japanese",
    "nl": "Dutch",
    "pl": "Polish",
    "pt": "Portuguese",
    "ru": "Russian",
    "tr": "Turkish",
    "zh": "Chinese",
}


class PromptRefused(ValueError):
    """The benchmark's scheme asks no model for candidates, or a prompt is not usable."""


@dataclass(frozen=True)
class OfferedPrompt:
    template: str | None
    refusal: str = ""


_PROMPTS: dict[str, OfferedPrompt] = {}


def candidate_prompt_offer(*, scheme: str, template: str | None, refusal: str = "") -> None:
    """Record the default prompt of ``scheme`` (None: the scheme asks no model, ``refusal`` says why)."""
    _PROMPTS[scheme] = OfferedPrompt(template=template, refusal=refusal)


def candidate_prompt_withdraw(scheme: str) -> None:
    _PROMPTS.pop(scheme, None)


def default_prompt(benchmark: Benchmark) -> str:
    """The prompt the benchmark's scheme declares, or ``PromptRefused`` saying why there is none."""
    offered = _PROMPTS.get(benchmark.scheme)
    if offered is None or offered.template is None:
        reason = offered.refusal if offered is not None and offered.refusal else "it declares no prompt"
        raise PromptRefused(
            f"a {benchmark.get_scheme_display()} benchmark takes no candidates from a language model: {reason}"
        )
    return offered.template


def prompt_check(template: str, *, where: str = "the prompt") -> str:
    """The template, or ``PromptRefused`` naming ``where`` and the placeholder that is unknown or malformed."""
    if not template.strip():
        raise PromptRefused(f"{where} is empty")
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
    except ValueError as exc:
        raise PromptRefused(f"{where}: {exc} (write a literal brace twice: {{{{ or }}}})") from None
    for field in fields:
        if field not in PLACEHOLDERS:
            line = template[: template.find("{" + field)].count("\n") + 1 if "{" + field in template else 1
            raise PromptRefused(
                f"{where}, line {line}: unknown placeholder {{{field}}}; known: "
                + ", ".join("{" + name + "}" for name in PLACEHOLDERS)
            )
    return template


def prompt_sha256(template: str) -> str:
    """The hash a run's targets are remembered under: the template and the platform's system message."""
    return hashlib.sha256(f"{SYSTEM_MESSAGE}\n\n{template}".encode()).hexdigest()


def language_name(tag: str) -> str:
    primary = tag.split("-")[0].lower()
    return LANGUAGE_NAMES.get(primary, f"the language tagged {tag}")


def prompt_render(template: str, *, target: Target, benchmark: Benchmark, count: int, lemmatized: bool) -> str:
    """The prompt for one target (its context loaded)."""
    text = target.context.text
    end = target.offset + len(target.word)
    pos = PartOfSpeech(target.pos).label if target.pos in PartOfSpeech.values else ""
    values = {
        "context": text,
        "marked_context": f"{text[: target.offset]}**{target.word}**{text[end:]}",
        "target": target.word,
        "lemma": target.lemma or target.word,
        "pos": pos,
        "count": str(count),
        "language": language_name(benchmark.language),
        "form": "in its base (dictionary) form" if lemmatized else "in the form that fits the sentence",
    }
    return template.format_map(values)
