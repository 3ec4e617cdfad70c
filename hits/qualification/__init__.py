"""The qualification test before paid work (docs/design.md §9): a researcher builds it from gold items, a new
annotator takes it once, and only those who pass are offered the benchmark's HITs, on the local
queue (the claim query) and on MTurk (the platform's own qualification type, ``mturk``).

``models`` (the test, its gold items, each person's attempt; models of the ``hits`` app), ``gold``
(gold items from a file or from a finished benchmark's clear scores), ``services`` (writes),
``selectors`` (reads), ``views`` and ``api`` (pages and REST). Docs: docs/qualification.md.
"""

from hits.qualification.gold import (
    ClearScores,
    GoldItem,
    gold_items_from_benchmark,
    gold_items_from_path,
    gold_items_read,
)
from hits.qualification.services import (
    GoldScheme,
    QualificationRefused,
    answer_is_correct,
    gold_scheme,
    no_test_message,
    offered_gold_scheme,
    qualification_attempt_reset,
    qualification_attempt_start,
    qualification_attempt_submit,
    qualification_build,
    qualification_set_active,
)

__all__ = [
    "ClearScores",
    "GoldItem",
    "GoldScheme",
    "QualificationRefused",
    "answer_is_correct",
    "gold_items_from_benchmark",
    "gold_items_from_path",
    "gold_items_read",
    "gold_scheme",
    "no_test_message",
    "offered_gold_scheme",
    "qualification_attempt_reset",
    "qualification_attempt_start",
    "qualification_attempt_submit",
    "qualification_build",
    "qualification_set_active",
]
