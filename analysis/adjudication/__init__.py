"""Adjudication pages (docs/adjudication.md): what they read; the writes are ``review.adjudication``'s."""

from analysis.adjudication.selectors import (
    CONTESTED_MARGIN,
    QUEUE_ITEMS_PER_PAGE,
    ItemPage,
    QueueEntry,
    disagreement_by_target,
    disagreement_queue,
    disagreement_queue_page,
    item_page,
)

__all__ = [
    "CONTESTED_MARGIN",
    "QUEUE_ITEMS_PER_PAGE",
    "ItemPage",
    "QueueEntry",
    "disagreement_by_target",
    "disagreement_queue",
    "disagreement_queue_page",
    "item_page",
]
