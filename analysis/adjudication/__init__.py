"""Adjudication pages (docs/adjudication.md): what they read; the writes are ``review.adjudication``'s."""

from analysis.adjudication.selectors import (
    CONTESTED_MARGIN,
    QUEUE_ITEMS_PER_PAGE,
    ItemPage,
    disagreement_queue,
    item_page,
)

__all__ = ["CONTESTED_MARGIN", "QUEUE_ITEMS_PER_PAGE", "ItemPage", "disagreement_queue", "item_page"]
