"""A task design is checked in one place (schemes.design.design_from_json): keys unique, one
printable character each, never a key the page moves with; labels neither empty, too long nor alike;
only what the scheme's page lets a design change; and applying it changes labels and keys, never a
choice's value. No database."""

from __future__ import annotations

from typing import Any

import pytest

from schemes import get_scheme
from schemes.design import DesignInvalid, DesignLimits, design_from_json, design_stored

SWORDS = get_scheme("swords").page
PROLEX = get_scheme("prolex").page
TSAR = get_scheme("tsar").page
SWS = get_scheme("sws").page
GENERATION = get_scheme("swords", step=1).page
LIMITS = DesignLimits()


def refused(data: Any, *pages: Any, limits: DesignLimits = LIMITS) -> dict[str, list[str]]:
    with pytest.raises(DesignInvalid) as caught:
        design_from_json(data, pages=list(pages) or [SWORDS], limits=limits)
    return caught.value.message_dict


def test_it_applies_new_labels_and_keys_and_keeps_every_value() -> None:
    design = design_from_json(
        {"choices": {"accept": {"label": "Fits", "keys": ["y"]}, "reject": {"keys": ["n", "2"]}}},
        pages=[SWORDS],
        limits=LIMITS,
    )
    page = design.apply(SWORDS)
    assert [(choice.value, choice.label, choice.keys) for choice in page.choices] == [
        ("accept", "Fits", ("y",)),
        ("reject", "Reject", ("n", "2")),
        ("abstain", "Abstain", ("3", "s")),
    ]
    # The definitions (what an answer means) stay the scheme's.
    assert [choice.definition for choice in page.choices] == [choice.definition for choice in SWORDS.choices]
    assert SWORDS.choices[0].label == "Accept"


@pytest.mark.parametrize(
    ("keys", "why"),
    [
        (["j"], "moves between rows"),
        (["k"], "moves between rows"),
        (["Y"], "needs Shift"),
        (["yy"], "not one printable character"),
        ([" "], "not one printable character"),
        (["\t"], "not one printable character"),
        (["y", "y"], "named twice"),
        ([], "at least one key"),
        (["1", "2", "3", "4"], "at most 3 keys"),
    ],
)
def test_it_refuses_a_key_that_is_not_one_free_printable_character(keys: list[str], why: str) -> None:
    errors = refused({"choices": {"accept": {"keys": keys}}})
    assert any(why in message for message in errors["choices.accept.keys"]), errors


def test_a_key_may_choose_one_answer_only_including_the_schemes_own_keys() -> None:
    # "2" is reject's own key: giving it to accept clashes although reject's keys were not named.
    errors = refused({"choices": {"accept": {"keys": ["2"]}}})
    assert errors == {"choices.reject.keys": ["'2' already chooses accept: each key chooses one answer"]}
    # Moving reject's keys away frees the key.
    design = design_from_json(
        {"choices": {"accept": {"keys": ["2"]}, "reject": {"keys": ["x"]}}}, pages=[SWORDS], limits=LIMITS
    )
    assert {choice.value: choice.keys for choice in design.apply(SWORDS).choices}["accept"] == ("2",)


def test_labels_are_not_empty_not_too_long_and_not_alike() -> None:
    assert "must not be empty" in refused({"choices": {"accept": {"label": "   "}}})["choices.accept.label"][0]
    long = "x" * (LIMITS.label_chars + 1)
    assert "at most 40 characters" in refused({"choices": {"accept": {"label": long}}})["choices.accept.label"][0]
    alike = refused({"choices": {"accept": {"label": "reject"}}})
    assert "workers could not tell them apart" in alike["choices.reject.label"][0]


def test_choices_must_be_the_schemes_and_a_page_without_editable_choices_takes_instructions_only() -> None:
    unknown = refused({"choices": {"maybe": {"label": "Maybe"}}})
    assert "is not a choice of this scheme" in unknown["choices.maybe"][0]
    for page in (TSAR, SWS, GENERATION):
        errors = refused({"choices": {"accept": {"label": "Yes"}}}, page)
        assert "give instructions only" in errors["choices"][0]
        assert design_from_json({"instructions": "Read first."}, pages=[page], limits=LIMITS).instructions == (
            "Read first."
        )


def test_prolex_keys_follow_the_same_rules_and_minus_stays_typed_as_its_value() -> None:
    design = design_from_json(
        {"choices": {"-1": {"label": "-1 no", "keys": ["n"]}, "1": {"keys": ["y", "1"]}}}, pages=[PROLEX]
    )
    page = design.apply(PROLEX)
    assert [(choice.value, choice.keys) for choice in page.choices] == [
        ("1", ("y", "1")),
        ("-1", ("n",)),
        ("0", ("0",)),
    ]
    assert refused({"choices": {"0": {"keys": ["1"]}}}, PROLEX) == {
        "choices.0.keys": ["'1' already chooses 1: each key chooses one answer"]
    }


def test_examples_are_structured_and_checked_field_by_field() -> None:
    errors = refused(
        {
            "examples": [
                {"text": "The bank of the river.", "target": "bank", "answer": "shore"},
                {"text": "", "answer": "x"},
                {"text": "A sentence.", "target": "word"},
                {"text": "ok", "colour": "red"},
                "just text",
            ]
        }
    )
    assert set(errors) == {"examples[2].text", "examples[3].target", "examples[4]", "examples[5]"}
    many = refused({"examples": [{"text": "a"}] * (LIMITS.examples + 1)})
    assert "at most 30 examples" in many["examples"][0]
    design = design_from_json(
        {"examples": [{"text": "The bank of the river.", "target": "bank", "note": "a river's"}]},
        pages=[SWORDS],
        limits=LIMITS,
    )
    assert design.examples[0].around_target() == ("The ", "bank", " of the river.")


def test_texts_are_bounded_by_the_settings_and_unknown_fields_are_named() -> None:
    small = DesignLimits(instructions_chars=10, description_chars=5)
    errors = refused({"instructions": "x" * 11, "description": "123456", "colour": 1, "title": "t" * 201}, limits=small)
    assert set(errors) == {"instructions", "description", "colour", "title"}
    assert "at most 10 characters" in errors["instructions"][0]
    assert refused({"instructions": "a\x00b"}) == {"instructions": ["must not hold a NUL character"]}
    assert refused({"scheme_instructions": "no"}) == {"scheme_instructions": ["must be true or false"]}
    assert refused([1]) == {"design": ["must be an object"]}


def test_instructions_are_plain_text_cut_into_paragraphs_and_lists() -> None:
    design = design_from_json(
        {"instructions": "First <b>paragraph</b>\nstill first.\n\n- one\n- two\n\nLast."}, pages=[SWORDS], limits=LIMITS
    )
    blocks = design.blocks()
    assert [(block.bullets, block.items) for block in blocks] == [
        (False, ("First <b>paragraph</b> still first.",)),
        (True, ("one", "two")),
        (False, ("Last.",)),
    ]


def test_a_template_is_checked_against_every_step_and_each_step_takes_what_its_page_allows() -> None:
    data = {"instructions": "Be careful.", "choices": {"accept": {"label": "Fits"}}}
    template = design_from_json(data, pages=[GENERATION, SWORDS], limits=LIMITS)
    assert template.for_page(GENERATION).choices == ()
    assert template.for_page(GENERATION).instructions == "Be careful."
    assert template.for_page(SWORDS).apply(SWORDS).choices[0].label == "Fits"


def test_a_stored_design_reads_back_as_written() -> None:
    data = {
        "instructions": "Read.",
        "examples": [{"text": "A bank.", "target": "bank"}],
        "scheme_instructions": False,
        "choices": {"accept": {"label": "Fits", "keys": ["y"]}},
    }
    design = design_from_json(data, pages=[SWORDS], limits=LIMITS)
    assert design.page_part() == data
    assert design_stored(design.page_part()) == design
    assert design_stored({}) == design_stored(None) == design_from_json({}, pages=[SWORDS], limits=LIMITS)


def test_the_limits_docs_design_md_states_are_the_settings_defaults() -> None:
    import re
    from pathlib import Path

    from django.conf import settings

    text = (Path(__file__).resolve().parents[2] / "docs" / "design.md").read_text(encoding="utf-8")
    stated = {name: int(value) for name, value in re.findall(r"`(DESIGN_\w+)`\s*\((\d+)\)", text)}
    defaults = DesignLimits()
    assert stated == {
        "DESIGN_INSTRUCTIONS_MAX_CHARS": defaults.instructions_chars,
        "DESIGN_EXAMPLES_MAX": defaults.examples,
        "DESIGN_EXAMPLE_MAX_CHARS": defaults.example_chars,
        "DESIGN_CHOICE_LABEL_MAX_CHARS": defaults.label_chars,
        "DESIGN_CHOICE_MAX_KEYS": defaults.keys_per_choice,
        "DESIGN_DESCRIPTION_MAX_CHARS": defaults.description_chars,
    }
    # The settings module's defaults (no environment variable sets them in tests) are the same.
    assert DesignLimits.from_settings() == defaults
    assert all(getattr(settings, name) == value for name, value in stated.items())
