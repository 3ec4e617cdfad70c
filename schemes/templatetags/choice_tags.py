"""The rows of a choice scheme's page (``schemes/_choice_items.html``), written in Python.

The same markup as a template loop would give: the template engine took about 5 ms to render the
rows of one SWORDS HIT (twelve rows of three choices, some 500 variables), a third of the CPU of a
whole cycle through the pages. Every value from a row or a choice is escaped (``html.escape``, as
Django's ``escape``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from django import template
from django.conf import settings
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

register = template.Library()


# The markup of a row's choices is the same for every row but for the row's id and which choice is
# checked: it is spelled once per set of choices (a scheme's, or a task design's edit of them) and
# read-only state, in pieces around the id, and joined per row. Bounded (``WORK_PAGE_CHOICE_SETS_KEPT``,
# forgotten whole when full): designs may edit choices.
_CHOICE_MARKUP: dict[tuple[tuple[Any, ...], bool], tuple[tuple[str, str, str, str], ...]] = {}


def _button_pieces(choices: tuple[Any, ...], read_only: bool) -> tuple[tuple[str, str, str, str], ...]:
    """Per choice: the markup before the row's id, from the id to where " checked" would go, the
    rest, and the value that is checked."""
    key = (choices, read_only)
    found = _CHOICE_MARKUP.get(key)
    if found is None:
        if len(_CHOICE_MARKUP) >= settings.WORK_PAGE_CHOICE_SETS_KEPT:
            _CHOICE_MARKUP.clear()
        found = _CHOICE_MARKUP[key] = _spelled_pieces(choices, read_only)
    return found


def _spelled_pieces(choices: tuple[Any, ...], read_only: bool) -> tuple[tuple[str, str, str, str], ...]:
    pieces = []
    for number, choice in enumerate(choices, 1):
        slug = html.escape(slugify(choice.value))
        value, keys = html.escape(choice.value), [html.escape(key) for key in choice.keys]
        label = html.escape(choice.label)
        hints = "".join(f'<kbd class="key">{key}</kbd>' for key in keys)
        # By position, as schemes/_choice_definitions.html numbers them: two values may slugify
        # alike (1 and -1 do).
        attributes = f' aria-describedby="definition-{number}"' if choice.definition else ""
        attributes += " required" if number == 1 else ""
        pieces.append(
            (
                f'<label class="choice choice-{number} {slug}"><input type="radio" name="item-',
                f'" value="{value}" data-keys="{" ".join(keys)}"{attributes}',
                (" disabled" if read_only else "") + f'><span class="choice-label" data-label="{label}">{label}</span>'
                f'<span class="choice-keys" aria-hidden="true">{hints}</span></label>',
                choice.value,
            )
        )
    return tuple(pieces)


def _buttons(row_id: str, selected: Any, pieces: tuple[tuple[str, str, str, str], ...]) -> str:
    return "".join(
        f"{before}{row_id}{middle}{' checked' if selected == value else ''}{after}"
        for before, middle, after, value in pieces
    )


@register.simple_tag
def choice_items(rows: Sequence[Any], choices: Sequence[Any], language: str, read_only: bool) -> SafeString:
    """The ``<ol>`` of the rows (``hits.selectors.ItemRow``), one radio group per row named
    item-<id>, each choice with its keys (``Choice.keys``, all shown on its button) and the
    definition it points at."""
    language = html.escape(language)
    pieces = _button_pieces(tuple(choices), bool(read_only))
    items = []
    for row in rows:
        row_id, number, text = html.escape(str(row.id)), html.escape(str(row.number)), html.escape(row.text)
        missing = " missing" if row.missing else ""
        invalid = ' aria-invalid="true"' if row.missing else ""
        items.append(
            f'<li class="item{missing}" id="row-{row_id}" tabindex="-1" data-number="{number}" data-text="{text}">'
            f'<span class="item-number" aria-hidden="true">{number}</span>'
            f'<span class="item-text" id="row-{row_id}-text" lang="{language}" dir="auto">{text}</span>'
            f'<div class="choices" role="radiogroup" aria-labelledby="row-{row_id}-text"{invalid}>'
            f"{_buttons(row_id, row.selected, pieces)}</div></li>"
        )
    # Built from escaped values and fixed markup only.
    return mark_safe(f'<ol class="items" aria-label="Items to judge">{"".join(items)}</ol>')
