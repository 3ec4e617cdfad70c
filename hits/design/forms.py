"""The task design form (a batch's, or a benchmark's template): the design's fields as a page edits
them, and back to the JSON the service checks (``schemes.design.design_from_json``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings

from schemes.base import Choice, Editable
from schemes.design import LISTING_COLUMN_LENGTH, TaskDesign

# Blank example rows offered below the design's own.
BLANK_EXAMPLES = 2


class ExampleForm(forms.Form):
    text = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="A sentence, as a worker would see one.",
    )
    target = forms.CharField(required=False, label="Highlighted word", help_text="A word of the text to highlight.")
    answer = forms.CharField(required=False, help_text="What a good worker answers.")
    note = forms.CharField(required=False, label="Why", widget=forms.Textarea(attrs={"rows": 2}))

    def example(self) -> dict[str, str] | None:
        """The example as JSON, or None for a row left blank."""
        data = {name: self.cleaned_data.get(name, "") for name in ("text", "target", "answer", "note")}
        return {name: value for name, value in data.items() if value} or None


ExampleFormSet = forms.formset_factory(ExampleForm, extra=BLANK_EXAMPLES, max_num=1000)


class DesignForm(forms.Form):
    """The listing, instructions and, where the page allows, each choice's label and keys (fields
    ``choice-<n>-label`` and ``choice-<n>-keys``, by the choice's position). Locked fields are shown
    disabled: the form then posts what the batch has."""

    title = forms.CharField(
        required=False,
        max_length=LISTING_COLUMN_LENGTH,
        help_text="What the crowd lists the work as (MTurk's HIT title, Prolific's study name, the project's name "
        "on the local queue).",
    )
    description = forms.CharField(
        required=False,
        max_length=settings.DESIGN_DESCRIPTION_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="A sentence or two under the title.",
    )
    keywords = forms.CharField(
        required=False, max_length=LISTING_COLUMN_LENGTH, help_text="Words, separated by commas, MTurk searches."
    )
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Plain text: a blank line starts a paragraph; lines starting with “- ” make a list. "
        "No HTML: the page shows the text as written.",
    )
    scheme_instructions = forms.BooleanField(
        required=False,
        label="Also show the scheme's own instructions and examples",
        help_text="Off: workers read yours alone (what the answers mean is still shown).",
    )

    def __init__(
        self,
        *args: Any,
        choices: Sequence[Choice],
        editable: Editable,
        design: TaskDesign,
        locked: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.scheme_choices = list(choices) if (editable.choice_labels or editable.choice_keys) else []
        for name in ("title", "description", "keywords", "instructions"):
            self.fields[name].initial = getattr(design, name)
        self.fields["scheme_instructions"].initial = design.scheme_instructions
        for number, choice in enumerate(self.scheme_choices, start=1):
            own = design.choice(choice.value)
            if editable.choice_labels:
                self.fields[f"choice-{number}-label"] = forms.CharField(
                    required=False,
                    label=f"Label of “{choice.label}”",
                    initial=own.label if own and own.label else "",
                    help_text=f"Empty: “{choice.label}”. Records {choice.value}, whatever it is called.",
                    widget=forms.TextInput(attrs={"placeholder": choice.label}),
                )
            if editable.choice_keys:
                self.fields[f"choice-{number}-keys"] = forms.CharField(
                    required=False,
                    label=f"Keys of “{choice.label}”",
                    initial=" ".join(own.keys) if own and own.keys else "",
                    help_text=f"One character each, separated by spaces. Empty: {' '.join(choice.keys)}.",
                    widget=forms.TextInput(attrs={"placeholder": " ".join(choice.keys)}),
                )
        for name in locked:
            for field_name in (name,) if name in self.fields else ():
                self.fields[field_name].disabled = True
            if name == "keys":
                for field_name, field in self.fields.items():
                    if field_name.endswith("-keys"):
                        field.disabled = True

    def choice_field(self, path: str) -> str | None:
        """The form field of an error's path (``choices.<value>.label``), or None."""
        parts = path.split(".")
        if len(parts) != 3 or parts[0] != "choices":
            return None
        for number, choice in enumerate(self.scheme_choices, start=1):
            if choice.value == parts[1]:
                name = f"choice-{number}-{parts[2]}"
                return name if name in self.fields else None
        return None

    def design_json(self, examples: list[dict[str, str]]) -> dict[str, Any]:
        """The cleaned form (and its examples) as the design's JSON."""
        data = self.cleaned_data
        design: dict[str, Any] = {
            "title": data["title"],
            "description": data["description"],
            "keywords": data["keywords"],
            "instructions": data["instructions"],
            "scheme_instructions": data["scheme_instructions"],
            "examples": examples,
        }
        choices: dict[str, dict[str, Any]] = {}
        for number, choice in enumerate(self.scheme_choices, start=1):
            label = data.get(f"choice-{number}-label", "")
            keys = data.get(f"choice-{number}-keys", "")
            entry: dict[str, Any] = {}
            if label:
                entry["label"] = label
            if keys:
                entry["keys"] = keys.split()
            if entry:
                choices[choice.value] = entry
        if choices:
            design["choices"] = choices
        return design

    def choice_rows(self) -> list[tuple[Choice, list[forms.BoundField]]]:
        """Each editable choice with its bound fields, for the template."""
        rows = []
        for number, choice in enumerate(self.scheme_choices, start=1):
            names = (f"choice-{number}-label", f"choice-{number}-keys")
            rows.append((choice, [self[name] for name in names if name in self.fields]))
        return rows


def example_initial(design: TaskDesign) -> list[dict[str, str]]:
    return [
        {"text": example.text, "target": example.target, "answer": example.answer, "note": example.note}
        for example in design.examples
    ]
