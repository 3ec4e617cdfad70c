"""Saved views of the data browser: a researcher's filters and sort of a table under a name, per
benchmark, seen by everyone who sees the benchmark (docs/analysis.md, "The data browser")."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from analysis.browser.tables import TABLES
from analysis.models import SavedView
from annotation.models import Benchmark

NAME_MAX = 100
QUERY_MAX = 2000


class SavedViewRefused(ValueError):
    """A saved view that cannot be kept as asked: the message says why."""


def saved_view_save(*, benchmark: Benchmark, table: str, name: str, query: str, by: Any) -> SavedView:
    """Keep the view ``query`` (filters and sort, checked by the page that sends it) of ``table`` under
    ``name``; a view of the same name and table is replaced, so saving twice keeps one."""
    name = " ".join(name.split())
    if table not in TABLES:
        raise SavedViewRefused(f"The data browser has no table {table[:40]!r}.")
    if not name:
        raise SavedViewRefused("A saved view needs a name.")
    if len(name) > NAME_MAX:
        raise SavedViewRefused(f"A saved view's name takes at most {NAME_MAX} characters.")
    if len(query) > QUERY_MAX:
        raise SavedViewRefused(f"A saved view's filters take at most {QUERY_MAX} characters.")
    view, _ = SavedView.objects.update_or_create(
        benchmark=benchmark, table=table, name=name, defaults={"query": query, "created_by": by}
    )
    return view


def saved_view_delete(*, view: SavedView) -> None:
    view.delete()


def saved_views(*, benchmark: Benchmark) -> QuerySet[SavedView]:
    """The benchmark's saved views, by table and name."""
    return SavedView.objects.filter(benchmark=benchmark).select_related("created_by").order_by("table", "name")
