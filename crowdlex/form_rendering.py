"""Form widgets rendered once per process for each distinct widget (docs/design.md §7, "Kept widgets").

A settings or design page renders tens of widgets through Django's form templates (an input, its
attributes, a select's options), each one a template with includes: most of such a page's time once
its rows are read. A widget's HTML is a pure function of its template and its context (``name``,
``value``, ``attrs``, the options of a choice): :class:`KeptWidgetsRenderer` keeps it under a key made of
exactly those values and the active language, so equal widgets render once per process and a widget
whose value or options differ in any way renders anew. The key holds every value the HTML shows, so
what one reader's form holds can only be served for the same values; a context holding anything but
plain values (strings, numbers, the values of a model's choices) is rendered each time, not kept.

``FORM_WIDGET_CACHE_CHARACTERS`` bounds the HTML kept (the least recently used goes first; 0 keeps none).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from django.conf import settings
from django.forms.models import ModelChoiceIteratorValue
from django.forms.renderers import DjangoTemplates
from django.utils.functional import Promise
from django.utils.safestring import SafeData
from django.utils.translation import get_language

# Django's own widget templates (and an app's overrides of them), whose context is the widget's alone.
WIDGET_TEMPLATES = "django/forms/widgets/"


class _NotPlain(Exception):
    """A context value the key cannot stand for: the widget is rendered, not kept."""


def _frozen(value: Any) -> Hashable:
    """``value`` as a key that differs whenever the widget's HTML could (a safe string from a plain
    one, ``1`` from ``True``)."""
    if isinstance(value, Promise):
        value = str(value)  # as the template renders it, in the active language (part of the key)
    if type(value) is str:
        return value
    if isinstance(value, str) and isinstance(value, SafeData):
        return ("safe", str.__str__(value))
    if value is None or type(value) in (bool, int, float):
        return (type(value).__name__, value)
    if isinstance(value, ModelChoiceIteratorValue):
        return ("choice", _frozen(value.value))  # type: ignore[attr-defined]
    if isinstance(value, dict):
        return ("dict", tuple((str(key), _frozen(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return ("list", tuple(_frozen(item) for item in value))
    raise _NotPlain(type(value).__name__)


class KeptWidgets:
    """Rendered widgets by key, least recently used first, within ``limit`` characters in all."""

    def __init__(self) -> None:
        self._entries: OrderedDict[Hashable, str] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> str | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: Hashable, html: str, *, limit: int) -> None:
        if len(html) > limit:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = html
            self._size += len(html)
            while self._size > limit:
                _, dropped = self._entries.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._size = 0

    def __len__(self) -> int:
        return len(self._entries)


kept_widgets = KeptWidgets()


class KeptWidgetsRenderer(DjangoTemplates):
    """Django's template renderer, with each widget's HTML kept per process (see the module)."""

    def render(self, template_name: str, context: dict[str, Any], request: Any = None) -> str:
        limit = settings.FORM_WIDGET_CACHE_CHARACTERS
        if request is not None or limit <= 0 or not template_name.startswith(WIDGET_TEMPLATES):
            return str(super().render(template_name, context, request=request))
        try:
            key = (template_name, get_language(), _frozen(context))
        except _NotPlain:
            return str(super().render(template_name, context, request=request))
        html = kept_widgets.get(key)
        if html is None:
            html = str(super().render(template_name, context, request=request))
            kept_widgets.put(key, html, limit=limit)
        return html
