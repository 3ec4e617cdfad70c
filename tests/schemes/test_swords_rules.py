"""The SWORDS scheme's rules, without a database: controls, answers, judgments, settings."""

import pytest

from annotation.importers.writer import IMPORTED_STEP2_LABELS
from schemes.base import AnswersInvalid, CleanAnswer, ItemRef, SchemeSettingsError
from schemes.swords import SWORDS
from schemes.swords.items import ItemKind, control_answer_correct
from schemes.swords.settings import SwordsSettings


def test_the_target_copy_must_be_accepted_and_the_distractor_must_not_be() -> None:
    assert control_answer_correct("control_target", "accept")
    assert not control_answer_correct("control_target", "reject")
    assert not control_answer_correct("control_target", "abstain")
    assert control_answer_correct("control_distractor", "reject")
    assert control_answer_correct("control_distractor", "abstain")
    assert not control_answer_correct("control_distractor", "accept")
    with pytest.raises(ValueError, match="not a control kind"):
        control_answer_correct("candidate", "accept")


ITEMS = [
    ItemRef(1, ItemKind.CANDIDATE, "clever", 11, False),
    ItemRef(2, ItemKind.CONTROL_TARGET, "bright", None, True),
    ItemRef(3, ItemKind.CANDIDATE, "smart", 12, False),
    ItemRef(4, ItemKind.CONTROL_DISTRACTOR, "table", None, True),
]


def test_answers_are_checked_without_case_or_space_and_keys_may_be_digit_strings() -> None:
    cleaned = SWORDS.clean_answers(items=ITEMS, answers={"1": " Accept ", 2: "accept", "3": "ABSTAIN", 4: "reject"})
    assert cleaned == {
        1: CleanAnswer("accept"),
        2: CleanAnswer("accept"),
        3: CleanAnswer("abstain"),
        4: CleanAnswer("reject"),
    }


def test_it_names_the_unanswered_rows_the_bad_values_and_the_foreign_items() -> None:
    with pytest.raises(AnswersInvalid, match="Unanswered: rows 2, 4") as missing:
        SWORDS.clean_answers(items=ITEMS, answers={1: "accept", 3: "reject"})
    assert missing.value.missing == [2, 4]
    with pytest.raises(AnswersInvalid, match="accept, reject or abstain; rows 3") as invalid:
        SWORDS.clean_answers(items=ITEMS, answers={1: "accept", 2: "accept", 3: "maybe", 4: "reject"})
    assert invalid.value.invalid == [3]
    with pytest.raises(AnswersInvalid, match="not part of this HIT: 99") as unknown:
        SWORDS.clean_answers(items=ITEMS, answers={1: "accept", 2: "accept", 3: "reject", 4: "reject", 99: "accept"})
    assert unknown.value.unknown == [99]


def test_a_submission_labels_each_candidate_and_scores_each_control() -> None:
    answers = {1: CleanAnswer("accept"), 2: CleanAnswer("reject"), 3: CleanAnswer("abstain"), 4: CleanAnswer("reject")}
    judgments = SWORDS.judgments(items=ITEMS, answers=answers)
    assert [(label.candidate_id, label.value) for label in judgments.labels] == [(11, "accept"), (12, "abstain")]
    assert (judgments.checks_correct, judgments.checks_total) == (1, 2)


def test_settings_default_to_the_papers_and_name_every_bad_value() -> None:
    assert SwordsSettings.from_json({}) == SwordsSettings(
        candidates_per_hit=10, step2_labels=3, step3_labels=7, pass_min_accepts=1, min_control_accuracy=0.9
    )
    with pytest.raises(SchemeSettingsError) as error:
        SwordsSettings.from_json(
            {"candidates_per_hit": 11, "step2_labels": True, "min_control_accuracy": "high", "x": 1}
        )
    assert set(error.value.message_dict) == {"candidates_per_hit", "step2_labels", "min_control_accuracy", "x"}
    assert SwordsSettings.from_json({"min_control_accuracy": 1}).min_control_accuracy == 1.0


def test_the_importer_splits_steps_as_the_scheme_does_by_default() -> None:
    assert SwordsSettings().step2_labels == IMPORTED_STEP2_LABELS
