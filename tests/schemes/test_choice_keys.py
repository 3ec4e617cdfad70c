"""A choice scheme declares the keys of its answers: every key is shown on its button, none is
shared, none is a key the page moves with, and ProLex's keys are the values they record."""

from __future__ import annotations

import pytest

from schemes import get_scheme
from schemes.base import Choice, Page


def test_prolex_keys_are_the_values_and_swords_keeps_its_numbers_and_letters() -> None:
    prolex = {choice.value: choice.keys for choice in get_scheme("prolex").page.choices}
    assert prolex == {"1": ("1",), "-1": ("-",), "0": ("0",)}
    swords = {choice.value: choice.keys for choice in get_scheme("swords").page.choices}
    assert swords == {"accept": ("1", "a"), "reject": ("2", "r"), "abstain": ("3", "s")}


def test_the_rows_show_every_key_of_every_choice_on_its_button() -> None:
    from django.template.loader import render_to_string

    from hits.selectors.annotator import ItemRow

    choices = get_scheme("prolex").page.choices
    rows = [ItemRow(id=7, number=1, text="still", selected="", missing=False)]
    page = render_to_string(
        "schemes/_choice_items.html", {"rows": rows, "choices": choices, "language": "en", "read_only": False}
    )
    assert 'value="-1" data-keys="-"' in page and 'value="0" data-keys="0"' in page
    assert page.count('<kbd class="key">') == 3
    assert '<kbd class="key">-</kbd></span></label>' in page


@pytest.mark.parametrize("keys", [(), ("j",), ("k",), ("A",), ("ab",), (" ",)])
def test_a_key_that_cannot_choose_is_refused(keys: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="key"):
        Choice("yes", "Yes", keys)


def test_two_answers_sharing_a_key_are_refused() -> None:
    with pytest.raises(ValueError, match="keys 1 choose more than one answer"):
        Page(
            question="{target}?",
            items_template="t.html",
            script="s.js",
            choices=(Choice("yes", "Yes", ("1", "y")), Choice("no", "No", ("1", "n"))),
        )
