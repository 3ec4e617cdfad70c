"""Saved views of the data browser: a researcher's filters and sort of a table under a name, per
benchmark, seen by everyone who sees the benchmark (docs/analysis.md, "The data browser").
Saving, renaming and deleting one are written in the benchmark's activity log, in the same
transaction as the change."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from analysis.browser.tables import TABLES
from analysis.models import SavedView
from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark
from crowdlex.statements import shaped_objects

NAME_MAX = 100
QUERY_MAX = 2000


class SavedViewRefused(ValueError):
    """A saved view that cannot be kept as asked: the message says why."""


def _name_checked(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise SavedViewRefused("A saved view needs a name.")
    if len(name) > NAME_MAX:
        raise SavedViewRefused(f"A saved view's name takes at most {NAME_MAX} characters.")
    return name


def saved_view_save(*, benchmark: Benchmark, table: str, name: str, query: str, by: Any) -> SavedView:
    """Keep the view ``query`` (filters and sort, checked by the page that sends it) of ``table`` under
    ``name``; a view of the same name and table is replaced, so saving twice keeps one."""
    if table not in TABLES:
        raise SavedViewRefused(f"The data browser has no table {table[:40]!r}.")
    name = _name_checked(name)
    if len(query) > QUERY_MAX:
        raise SavedViewRefused(f"A saved view's filters take at most {QUERY_MAX} characters.")
    with transaction.atomic():
        view, created = SavedView.objects.update_or_create(
            benchmark=benchmark, table=table, name=name, defaults={"query": query, "created_by": by}
        )
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.VIEW_SAVED,
            summary=f"{'saved' if created else 'saved again'} the view “{name}” of the {table} table",
            by=by,
            result={"view": view.pk, "table": table, "name": name, "query": query, "replaced": not created},
        )
    return view


def saved_view_rename(*, view: SavedView, name: str, by: Any) -> SavedView:
    """Give a saved view another name; refused when the table already has a view of that name."""
    name = _name_checked(name)
    with transaction.atomic():
        locked = SavedView.objects.select_for_update().get(pk=view.pk)
        old = locked.name
        if name == old:
            return locked
        if SavedView.objects.filter(benchmark_id=locked.benchmark_id, table=locked.table, name=name).exists():
            raise SavedViewRefused(f"The {locked.table} table already has a saved view “{name}”.")
        locked.name = name
        locked.save(update_fields=["name"])
        activity_record(
            benchmark=locked.benchmark_id,
            kind=ActivityKind.VIEW_RENAMED,
            summary=f"renamed the view “{old}” of the {locked.table} table to “{name}”",
            by=by,
            result={"view": locked.pk, "table": locked.table, "name": [old, name]},
        )
    return locked


def saved_view_delete(*, view: SavedView, by: Any = None) -> None:
    with transaction.atomic():
        activity_record(
            benchmark=view.benchmark_id,
            kind=ActivityKind.VIEW_DELETED,
            summary=f"deleted the view “{view.name}” of the {view.table} table",
            by=by,
            result={"view": view.pk, "table": view.table, "name": view.name, "query": view.query},
        )
        view.delete()


def saved_views(*, benchmark: Benchmark) -> list[SavedView]:
    """The benchmark's saved views, by table and name, by a statement built once per process
    (docs/design.md §7, "Statements built once")."""
    return shaped_objects(_saved_views, benchmark.pk)


def _saved_views(benchmark_id: int) -> QuerySet[SavedView]:
    return SavedView.objects.filter(benchmark_id=benchmark_id).select_related("created_by").order_by("table", "name")
