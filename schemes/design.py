"""A batch's task design (docs/design.md §4.1): what a researcher writes on top of a scheme's page.

The listing a crowd shows before anyone opens the HIT (title, description, keywords), instructions
in plain text (paragraphs, and lists whose lines start with "- "), worked examples as structured
fields, whether the scheme's own instructions are shown too, and, where the scheme's page allows it
(``schemes.base.Editable``), the labels and keys of its choices. A choice's stored value, and so
what an answer means, never changes: only the words on its button and the keys that press it.

Nothing here is HTML: the page escapes every text, so a design can never inject markup. Checked in
one place (``design_from_json``), against the pages it will be applied to and the limits the
platform's settings give (``DesignLimits``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError

from schemes.base import NAVIGATION_KEYS, Choice, Page

# The fields of a design, as JSON names them, in the order forms and errors list them.
LISTING_FIELDS = ("title", "description", "keywords")
DESIGN_FIELDS = (*LISTING_FIELDS, "instructions", "examples", "scheme_instructions", "choices")
EXAMPLE_FIELDS = ("text", "target", "answer", "note")
# Batch.title and Batch.keywords are columns of 200 characters.
LISTING_COLUMN_LENGTH = 200


class DesignInvalid(ValidationError):
    """A design that does not fit; ``message_dict`` maps each bad field (``choices.accept.keys``,
    ``examples[2].text``) to why."""


@dataclass(frozen=True)
class DesignLimits:
    """How long a design's texts may be (settings ``DESIGN_*``, docs/design.md §4.1)."""

    instructions_chars: int = 20_000
    examples: int = 30
    example_chars: int = 2_000
    label_chars: int = 40
    keys_per_choice: int = 3
    description_chars: int = 2_000

    @classmethod
    def from_settings(cls) -> DesignLimits:
        from django.conf import settings

        return cls(
            instructions_chars=settings.DESIGN_INSTRUCTIONS_MAX_CHARS,
            examples=settings.DESIGN_EXAMPLES_MAX,
            example_chars=settings.DESIGN_EXAMPLE_MAX_CHARS,
            label_chars=settings.DESIGN_CHOICE_LABEL_MAX_CHARS,
            keys_per_choice=settings.DESIGN_CHOICE_MAX_KEYS,
            description_chars=settings.DESIGN_DESCRIPTION_MAX_CHARS,
        )


@dataclass(frozen=True)
class DesignExample:
    """A worked example: a ``text`` (a sentence), the ``target`` word in it to highlight (optional),
    the ``answer`` a good worker gives, and a ``note`` saying why."""

    text: str
    target: str = ""
    answer: str = ""
    note: str = ""

    def around_target(self) -> tuple[str, str, str]:
        """The text before the target, the target, and the text after it (escaped apart by the page)."""
        if self.target:
            start = self.text.find(self.target)
            if start >= 0:
                return self.text[:start], self.target, self.text[start + len(self.target) :]
        return self.text, "", ""


@dataclass(frozen=True)
class ChoiceDesign:
    """A choice's new ``label`` and ``keys`` ("" and (): the scheme's own)."""

    label: str = ""
    keys: tuple[str, ...] = ()


class Block(NamedTuple):
    """A block of the instructions: a paragraph (``items`` of one text) or a list (``bullets``)."""

    bullets: bool
    items: tuple[str, ...]


@dataclass(frozen=True)
class TaskDesign:
    """A checked design (see the module docstring). Empty texts keep what the batch or the scheme has."""

    title: str = ""
    description: str = ""
    keywords: str = ""
    instructions: str = ""
    examples: tuple[DesignExample, ...] = ()
    scheme_instructions: bool = True
    # Choice value -> its new label and keys; hashable, so a designed page can be cached.
    choices: tuple[tuple[str, ChoiceDesign], ...] = ()

    @property
    def shows_own_instructions(self) -> bool:
        return bool(self.instructions.strip() or self.examples)

    def blocks(self) -> list[Block]:
        """The instructions as paragraphs (split at blank lines) and lists (lines starting "- ")."""
        blocks: list[Block] = []
        for part in self.instructions.replace("\r\n", "\n").split("\n\n"):
            lines = [line.strip() for line in part.split("\n") if line.strip()]
            if not lines:
                continue
            if all(line.startswith("- ") for line in lines):
                blocks.append(Block(True, tuple(line[2:].strip() for line in lines)))
            else:
                blocks.append(Block(False, (" ".join(lines),)))
        return blocks

    def choice(self, value: str) -> ChoiceDesign | None:
        return next((design for known, design in self.choices if known == value), None)

    def to_json(self) -> dict[str, Any]:
        """The design as stored and as the API and ``--design`` files give it (defaults left out)."""
        data: dict[str, Any] = {}
        for name in (*LISTING_FIELDS, "instructions"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        if self.examples:
            data["examples"] = [
                {name: getattr(example, name) for name in EXAMPLE_FIELDS if getattr(example, name)}
                for example in self.examples
            ]
        if not self.scheme_instructions:
            data["scheme_instructions"] = False
        if self.choices:
            data["choices"] = {
                value: {
                    **({"label": choice.label} if choice.label else {}),
                    **({"keys": list(choice.keys)} if choice.keys else {}),
                }
                for value, choice in self.choices
            }
        return data

    def page_part(self) -> dict[str, Any]:
        """What a batch stores in ``Batch.design``: everything but the listing (which has columns)."""
        return {name: value for name, value in self.to_json().items() if name not in LISTING_FIELDS}

    def with_listing(self, *, title: str, description: str, keywords: str) -> TaskDesign:
        return dataclasses.replace(self, title=title, description=description, keywords=keywords)

    def for_page(self, page: Page) -> TaskDesign:
        """This design with only what ``page`` lets a design change (a benchmark's template holds
        labels for the steps that have choices; a step without them takes its instructions only)."""
        rules = page.editable
        values = {choice.value for choice in page.choices}
        kept = tuple(
            (value, ChoiceDesign(choice.label if rules.choice_labels else "", choice.keys if rules.choice_keys else ()))
            for value, choice in self.choices
            if value in values and ((choice.label and rules.choice_labels) or (choice.keys and rules.choice_keys))
        )
        return dataclasses.replace(self, choices=kept)

    def apply(self, page: Page) -> Page:
        """``page`` as this design shows it: its choices with their new labels and keys, values kept."""
        if not self.choices:
            return page
        return dataclasses.replace(page, choices=self.choices_on(page))

    def choices_on(self, page: Page) -> tuple[Choice, ...]:
        """``page``'s choices with this design's labels and keys (not checked against each other)."""
        return tuple(
            dataclasses.replace(choice, label=found.label or choice.label, keys=found.keys or choice.keys)
            if (found := self.choice(choice.value)) is not None
            else choice
            for choice in page.choices
        )


EMPTY_DESIGN = TaskDesign()


def _text(value: Any, *, field: str, limit: int, errors: dict[str, list[str]]) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        errors[field] = ["must be text"]
        return ""
    if "\x00" in value:
        errors[field] = ["must not hold a NUL character"]
        return ""
    if len(value) > limit:
        errors[field] = [f"must be at most {limit} characters (it has {len(value)})"]
        return ""
    return value.strip()


def _examples(raw: Any, limits: DesignLimits, errors: dict[str, list[str]]) -> tuple[DesignExample, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors["examples"] = ["must be a list of examples"]
        return ()
    if len(raw) > limits.examples:
        errors["examples"] = [f"must be at most {limits.examples} examples (there are {len(raw)})"]
        return ()
    examples = []
    for number, entry in enumerate(raw, start=1):
        where = f"examples[{number}]"
        if not isinstance(entry, dict):
            errors[where] = ["must be an object with text, target, answer and note"]
            continue
        unknown = sorted(set(entry) - set(EXAMPLE_FIELDS))
        if unknown:
            errors[where] = [f"has unknown fields {', '.join(unknown)} (known: {', '.join(EXAMPLE_FIELDS)})"]
            continue
        values = {
            name: _text(entry.get(name), field=f"{where}.{name}", limit=limits.example_chars, errors=errors)
            for name in EXAMPLE_FIELDS
        }
        if not values["text"] and f"{where}.text" not in errors:
            errors[f"{where}.text"] = ["must not be empty: an example shows a text"]
            continue
        if values["target"] and values["target"] not in values["text"]:
            errors[f"{where}.target"] = [f"{values['target']!r} is not a part of the example's text"]
            continue
        examples.append(DesignExample(**values))
    return tuple(examples)


def _keys(raw: Any, *, field: str, limits: DesignLimits, errors: dict[str, list[str]]) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = raw.split()
    if not isinstance(raw, list) or not all(isinstance(key, str) for key in raw):
        errors[field] = ["must be a list of keys, each one character"]
        return ()
    if not raw:
        errors[field] = ["must name at least one key (leave it out to keep the scheme's)"]
        return ()
    if len(raw) > limits.keys_per_choice:
        errors[field] = [f"must be at most {limits.keys_per_choice} keys"]
        return ()
    bad = []
    for key in raw:
        if len(key) != 1 or not key.isprintable() or key.isspace():
            bad.append(f"{key!r} is not one printable character")
        elif key != key.lower():
            bad.append(f"{key!r} needs Shift: use {key.lower()!r}")
        elif key in NAVIGATION_KEYS:
            bad.append(f"{key!r} moves between rows on the page (j and k are taken)")
    if len(set(raw)) != len(raw):
        bad.append("a key is named twice")
    if bad:
        errors[field] = bad
        return ()
    return tuple(raw)


def _choices(
    raw: Any, pages: Sequence[Page], limits: DesignLimits, errors: dict[str, list[str]]
) -> tuple[tuple[str, ChoiceDesign], ...]:
    if raw is None or raw == {}:
        return ()
    if not isinstance(raw, dict):
        errors["choices"] = ["must be an object naming choices by their value"]
        return ()
    labels_editable = any(page.editable.choice_labels for page in pages)
    keys_editable = any(page.editable.choice_keys for page in pages)
    if not (labels_editable or keys_editable):
        errors["choices"] = ["this scheme's page has no choices a design may change: give instructions only"]
        return ()
    known = {choice.value for page in pages for choice in page.choices}
    found: list[tuple[str, ChoiceDesign]] = []
    for value, entry in raw.items():
        where = f"choices.{value}"
        if value not in known:
            errors[where] = [f"is not a choice of this scheme (its choices: {', '.join(sorted(known))})"]
            continue
        if not isinstance(entry, dict) or not set(entry) <= {"label", "keys"}:
            errors[where] = ["must be an object with a label, keys or both"]
            continue
        label = ""
        if "label" in entry:
            if not labels_editable:
                errors[f"{where}.label"] = ["this scheme's page keeps its labels"]
            else:
                label = _text(entry["label"], field=f"{where}.label", limit=limits.label_chars, errors=errors)
                if not label and f"{where}.label" not in errors:
                    errors[f"{where}.label"] = ["must not be empty (leave it out to keep the scheme's)"]
        keys: tuple[str, ...] = ()
        if "keys" in entry:
            if not keys_editable:
                errors[f"{where}.keys"] = ["this scheme's page keeps its keys"]
            else:
                keys = _keys(entry["keys"], field=f"{where}.keys", limits=limits, errors=errors)
        if label or keys:
            found.append((value, ChoiceDesign(label, keys)))
    return tuple(found)


def _clashes(design: TaskDesign, pages: Iterable[Page], errors: dict[str, list[str]]) -> None:
    """On each page, after the design: no key chooses two answers, no two choices read alike."""
    for page in pages:
        if not page.choices:
            continue
        choices = design.for_page(page).choices_on(page)
        owner: dict[str, str] = {}
        for choice in choices:
            for key in choice.keys:
                if key in owner:
                    errors.setdefault(f"choices.{choice.value}.keys", []).append(
                        f"{key!r} already chooses {owner[key]}: each key chooses one answer"
                    )
                owner.setdefault(key, choice.value)
        seen: dict[str, str] = {}
        for choice in choices:
            folded = choice.label.casefold()
            if folded in seen:
                errors.setdefault(f"choices.{choice.value}.label", []).append(
                    f"{choice.label!r} is also the label of {seen[folded]}: workers could not tell them apart"
                )
            seen.setdefault(folded, choice.value)


def design_from_json(data: Any, *, pages: Sequence[Page], limits: DesignLimits | None = None) -> TaskDesign:
    """The design ``data`` (a JSON object) describes, checked against every page it may be applied
    to (a batch's step, or each step of a benchmark for its template), or ``DesignInvalid`` naming
    every bad field."""
    limits = limits or DesignLimits.from_settings()
    if data is None:
        return EMPTY_DESIGN
    if not isinstance(data, dict):
        raise DesignInvalid({"design": ["must be an object"]})
    errors: dict[str, list[str]] = {}
    for name in sorted(set(data) - set(DESIGN_FIELDS)):
        errors[name] = [f"is not a field of a task design (known: {', '.join(DESIGN_FIELDS)})"]
    listing = {
        "title": _text(data.get("title"), field="title", limit=LISTING_COLUMN_LENGTH, errors=errors),
        "description": _text(
            data.get("description"), field="description", limit=limits.description_chars, errors=errors
        ),
        "keywords": _text(data.get("keywords"), field="keywords", limit=LISTING_COLUMN_LENGTH, errors=errors),
    }
    instructions = _text(data.get("instructions"), field="instructions", limit=limits.instructions_chars, errors=errors)
    shown = data.get("scheme_instructions", True)
    if not isinstance(shown, bool):
        errors["scheme_instructions"] = ["must be true or false"]
        shown = True
    design = TaskDesign(
        **listing,
        instructions=instructions,
        examples=_examples(data.get("examples"), limits, errors),
        scheme_instructions=shown,
        choices=_choices(data.get("choices"), pages, limits, errors),
    )
    if not any(name.startswith("choices") for name in errors):
        _clashes(design, pages, errors)
    if errors:
        raise DesignInvalid(errors)
    return design


def design_stored(data: Mapping[str, Any] | str | None) -> TaskDesign:
    """A design as stored (checked when it was written), read without checking it again: the
    annotator's page reads one on every HIT."""
    if isinstance(data, str):
        data = json.loads(data)
    if not isinstance(data, Mapping) or not data:
        return EMPTY_DESIGN
    return TaskDesign(
        title=data.get("title", ""),
        description=data.get("description", ""),
        keywords=data.get("keywords", ""),
        instructions=data.get("instructions", ""),
        examples=tuple(DesignExample(**example) for example in data.get("examples", ())),
        scheme_instructions=data.get("scheme_instructions", True),
        choices=tuple(
            (value, ChoiceDesign(entry.get("label", ""), tuple(entry.get("keys", ()))))
            for value, entry in data.get("choices", {}).items()
        ),
    )


def error_lines(error: ValidationError) -> list[str]:
    """``field: message`` for each message of a refused design, for a command or a form."""
    if hasattr(error, "error_dict"):
        return [f"{field}: {message}" for field, messages in error.message_dict.items() for message in messages]
    return list(error.messages)


__all__ = [
    "EMPTY_DESIGN",
    "ChoiceDesign",
    "DesignExample",
    "DesignInvalid",
    "DesignLimits",
    "TaskDesign",
    "design_from_json",
    "design_stored",
    "error_lines",
]
