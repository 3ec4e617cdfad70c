"""What schemes of one choice per item share: answer checking and the page's rows.

SWORDS (accept / reject / abstain) and ProLex (1 / -1 / 0) both show a list of items with one
choice each; a scheme of this kind sets ``page.choices`` and inherits ``clean_answers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from schemes.base import AnswersInvalid, CleanAnswer, ItemRef, Page, SchemeSettings

if TYPE_CHECKING:
    from annotation.models import Benchmark

CHOICE_ITEMS_TEMPLATE = "schemes/_choice_items.html"
CHOICE_SCRIPT = "schemes/choices.js"


def _listed(values: Sequence[str]) -> str:
    return ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else values[0]


class ChoiceScheme:
    """Base of schemes whose answer is one of ``page.choices`` for every item."""

    name: ClassVar[str]
    settings_type: ClassVar[type[SchemeSettings]]
    page: ClassVar[Page]
    # The label (accept / reject / abstain, docs/design.md §2) each choice stands for, where the scheme spells
    # its choices otherwise (ProLex: 1 / -1 / 0); a choice not named here is its own label.
    label_of_choice: ClassVar[Mapping[str, str]] = {}

    def choice_label(self, value: str) -> str:
        """The label a choice stands for: what a qualification test compares with its gold answers."""
        return self.label_of_choice.get(value, value)

    def settings(self, benchmark: Benchmark) -> SchemeSettings:
        return self.settings_type.from_json(benchmark.scheme_settings)

    def clean_answers(
        self, *, items: Sequence[ItemRef], answers: Mapping[Any, Any], settings: SchemeSettings | None = None
    ) -> dict[int, CleanAnswer]:
        """Check that ``answers`` answers each item exactly once with one of the choices.

        Keys may be digit strings (forms and JSON); values are matched without case or
        surrounding space. Unknown items are reported first, then bad values, then missing rows,
        each naming the rows as the page numbers them.
        """
        allowed = {choice.value for choice in self.page.choices}
        position = {item.id: number for number, item in enumerate(items, start=1)}
        cleaned: dict[int, CleanAnswer] = {}
        unknown: list[Any] = []
        invalid: list[int] = []
        for raw_key, raw_value in answers.items():
            try:
                item_id = int(raw_key)
            except (TypeError, ValueError):
                unknown.append(raw_key)
                continue
            if item_id not in position:
                unknown.append(raw_key)
                continue
            value = raw_value.strip().lower() if isinstance(raw_value, str) else raw_value
            if value not in allowed:
                invalid.append(item_id)
                continue
            cleaned[item_id] = CleanAnswer(value)
        missing = [item.id for item in items if item.id not in cleaned and item.id not in invalid]
        if unknown:
            raise AnswersInvalid(
                "These answers are for items that are not part of this HIT: "
                + ", ".join(str(key) for key in unknown)
                + ".",
                unknown=unknown,
            )
        if invalid:
            rows = ", ".join(str(position[item_id]) for item_id in invalid)
            labels = _listed([choice.value for choice in self.page.choices])
            raise AnswersInvalid(f"Each answer must be {labels}; rows {rows} have another value.", invalid=invalid)
        if missing:
            rows = ", ".join(str(position[item_id]) for item_id in missing)
            raise AnswersInvalid(
                f"Please answer every row before submitting. Unanswered: row{'s' if len(missing) > 1 else ''} {rows}.",
                missing=missing,
            )
        return cleaned
