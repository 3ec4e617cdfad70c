"""A table's body built in Python, one format per row (docs/design.md §7, "Table rows").

A researcher's page of a hundred rows spent most of its time in Django's template engine: each
cell's variable, filter, ``{% if %}`` and ``{% url %}`` is a node whose lookup, localisation and
escaping cost microseconds, thousands of them a page. A long table's body is instead built by one
function next to its view: a format string holding the row's HTML and, for each row, the values of
its cells, joined by :func:`rows`. Every value is escaped (``format_html``): a value holding markup
shows as text, and only a fragment built the same way (a :class:`SafeString`) goes in as HTML. The
links to a row's page are reversed once a table (:func:`id_url`), not once a row.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence

from django.urls import reverse
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

# An id no row takes, reversed in place of the row's own and then replaced by it.
_MARKER = 918273645


def id_url(route: str) -> Callable[[int], str]:
    """The URL of ``route`` (a pattern of one integer id) for any id, reversed once:
    ``id_url("hit-detail")(7) == reverse("hit-detail", args=[7])`` under the request's script prefix."""
    prefix, suffix = reverse(route, args=[_MARKER]).rsplit(str(_MARKER), 1)
    return lambda pk: f"{prefix}{int(pk)}{suffix}"


def rows(row_html: str, values: Iterable[Sequence[object]]) -> SafeString:
    """``row_html`` formatted with each row's values, every value escaped, as one piece of HTML: what
    ``format_html`` gives for each row, its plain texts and whole numbers escaped without its checks
    of each value for a lazy text and for markup of its own (a page of a hundred rows of a dozen
    cells escapes a thousand values)."""
    escaped = _escaped
    return mark_safe("".join([row_html.format(*[escaped(value) for value in row]) for row in values]))


def _escaped(value: object) -> object:
    """``conditional_escape(value)``, ``html.escape`` for a plain text and the digits of a whole number."""
    kind = type(value)
    if kind is str:
        return html.escape(value)  # type: ignore[arg-type]
    if kind is int:
        return value
    return conditional_escape(value)  # type: ignore[arg-type]  # any value, as format_html passes it


def joined(fragments: Iterable[SafeString]) -> SafeString:
    """Fragments built by these functions (or ``format_html``), one after another."""
    return mark_safe("".join(fragments))


def when(condition: object, html: str, *values: object) -> SafeString:
    """``html`` formatted with ``values`` (escaped) where ``condition`` holds, else nothing: a cell's
    optional part, as ``{% if %}`` was in the template."""
    if not condition:
        return mark_safe("")
    return format_html(html, *values) if values else mark_safe(html)
