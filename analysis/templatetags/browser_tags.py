"""Tags of the data browser's pages."""

from __future__ import annotations

from django import template

from analysis.browser.core import DIRECTION, SORT, View

register = template.Library()


@register.simple_tag
def sort_query(view: View | None, key: str) -> str:
    """The view sorted by the column ``key``: ascending, or the other way when it is sorted by it already."""
    if view is None:
        return f"{SORT}={key}"
    descending = view.sort == key and not view.descending
    return view.query(**{SORT: key, DIRECTION: "desc" if descending else "asc"})
