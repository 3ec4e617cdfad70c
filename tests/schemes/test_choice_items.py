"""The rows of a choice scheme's page, built by the choice_items tag: escaped, and with each row's state."""

from __future__ import annotations

import re
from dataclasses import replace

from django.template.loader import render_to_string

from hits.selectors.annotator import ItemRow
from schemes import get_scheme


def rendered(rows: list[ItemRow], *, read_only: bool = False) -> str:
    choices = get_scheme("swords").page.choices
    context = {"rows": rows, "choices": choices, "language": "en", "read_only": read_only}
    return render_to_string("schemes/_choice_items.html", context)


def test_a_rows_text_is_escaped_in_the_row_and_in_its_attribute() -> None:
    page = rendered([ItemRow(id=3, number=1, text='<b onclick="x">&\'', selected="", missing=False)])
    assert "<b onclick" not in page
    assert page.count("&lt;b onclick=&quot;x&quot;&gt;&amp;&#x27;") == 2


def test_each_row_is_one_radio_group_with_its_answer_checked_and_the_first_choice_required() -> None:
    rows = [
        ItemRow(id=3, number=1, text="aged", selected="reject", missing=False),
        ItemRow(id=4, number=2, text="old", selected="", missing=True),
    ]
    page = rendered(rows)
    assert re.findall(r'name="item-(\d+)" value="(\w+)"', page) == [
        ("3", "accept"),
        ("3", "reject"),
        ("3", "abstain"),
        ("4", "accept"),
        ("4", "reject"),
        ("4", "abstain"),
    ]
    assert re.findall(r'name="item-3" value="(\w+)"[^>]* checked', page) == ["reject"]
    assert page.count(" required") == 2 and "disabled" not in page
    assert page.count('aria-invalid="true"') == 1 and 'class="item missing" id="row-4"' in page


def test_a_read_only_page_disables_every_choice() -> None:
    page = rendered([ItemRow(id=3, number=1, text="aged", selected="accept", missing=False)], read_only=True)
    assert page.count(" disabled") == 3


def test_edited_choices_and_the_read_only_page_are_spelled_apart_from_the_schemes() -> None:
    # The markup of a set of choices is kept once spelled: another set (a task design's edit) or
    # the read-only page must not be given the first one's.
    choices = get_scheme("swords").page.choices
    edited = tuple(replace(choice, label=f"Edited {choice.label}", keys=(str(n),)) for n, choice in enumerate(choices))
    row = ItemRow(id=7, number=1, text="aged", selected="accept", missing=False)
    plain = render_to_string("schemes/_choice_items.html", {"rows": [row], "choices": choices, "language": "en"})
    context = {"rows": [row], "choices": edited, "language": "en", "read_only": True}
    again = render_to_string("schemes/_choice_items.html", context)
    assert "Edited" not in plain and " disabled" not in plain
    assert again.count("Edited ") == 2 * len(choices) and again.count(" disabled") == len(choices)
    assert re.findall(r'data-keys="([^"]*)"', again) == ["0", "1", "2"]
    assert re.findall(r'value="(\w+)"[^>]* checked', again) == ["accept"]
