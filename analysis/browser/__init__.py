"""The data browser (docs/analysis.md, "The data browser"): a benchmark's items, candidates, labels,
HITs and workers in paginated, sortable, filterable tables, their CSV and saved views."""

from analysis.browser.core import BrowserError, Context, View, csv_chunks, page_read, view_read
from analysis.browser.services import (
    SavedViewRefused,
    saved_view_delete,
    saved_view_rename,
    saved_view_save,
    saved_views,
)
from analysis.browser.tables import TABLES

__all__ = [
    "TABLES",
    "BrowserError",
    "Context",
    "SavedViewRefused",
    "View",
    "csv_chunks",
    "page_read",
    "saved_view_delete",
    "saved_view_rename",
    "saved_view_save",
    "saved_views",
    "view_read",
]
