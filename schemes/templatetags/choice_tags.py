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
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

register = template.Library()


def _buttons(row: Any, choices: Sequence[Any], read_only: bool) -> str:
    row_id = html.escape(str(row.id))
    parts = []
    for number, choice in enumerate(choices, 1):
        slug = html.escape(slugify(choice.value))
        value, keys = html.escape(choice.value), [html.escape(key) for key in choice.keys]
        label = html.escape(choice.label)
        hints = "".join(f'<kbd class="key">{key}</kbd>' for key in keys)
        # By position, as schemes/_choice_definitions.html numbers them: two values may slugify
        # alike (1 and -1 do).
        attributes = f' aria-describedby="definition-{number}"' if choice.definition else ""
        attributes += " required" if number == 1 else ""
        attributes += " checked" if row.selected == choice.value else ""
        attributes += " disabled" if read_only else ""
        parts.append(
            f'<label class="choice choice-{number} {slug}"><input type="radio" name="item-{row_id}" value="{value}"'
            f' data-keys="{" ".join(keys)}"{attributes}><span class="choice-label" data-label="{label}">{label}</span>'
            f'<span class="choice-keys" aria-hidden="true">{hints}</span></label>'
        )
    return "".join(parts)


@register.simple_tag
def choice_items(rows: Sequence[Any], choices: Sequence[Any], language: str, read_only: bool) -> SafeString:
    """The ``<ol>`` of the rows (``hits.selectors.ItemRow``), one radio group per row named
    item-<id>, each choice with its keys (``Choice.keys``, all shown on its button) and the
    definition it points at."""
    language = html.escape(language)
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
            f"{_buttons(row, choices, read_only)}</div></li>"
        )
    # Built from escaped values and fixed markup only.
    return mark_safe(f'<ol class="items" aria-label="Items to judge">{"".join(items)}</ol>')
