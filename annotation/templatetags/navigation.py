"""``{% site_links %}``: the links of the top bar, built once per process for each kind of reader
(docs/design.md §7, "The top bar"); ``{% kept_url %}`` and ``{% kept_static %}``, the URL of a route
without arguments and of a static file, worked out once per process.

The links are the same for every researcher (and for every annotator) under one script prefix and
language; reversing each URL on every page is most of what ``base.html`` costs. The HTML is kept per
(role, script prefix, language). What belongs to one reader (the sign-out form's CSRF token, the
account's name) is not part of it: ``base.html`` renders those around it on each request.
"""

from __future__ import annotations

import threading
from typing import Any

from django import template
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse
from django.utils.html import format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

register = template.Library()

RESEARCHER = "researcher"
ANNOTATOR = "annotator"
# The links each kind of reader has, in order; every signed-in reader also has the API token's page.
LINKS = {
    RESEARCHER: (("benchmark-list", "Benchmarks"), ("people", "People"), ("admin:index", "Admin")),
    ANNOTATOR: (("work-home", "My work"),),
    "": (),
}
_kept: dict[tuple[str, str, str | None], str] = {}
_lock = threading.Lock()


def links_html(kind: str) -> SafeString:
    """The top bar's links for a reader of ``kind`` (``RESEARCHER``, ``ANNOTATOR`` or "")."""
    key = (kind, get_script_prefix(), get_language())
    found = _kept.get(key)
    if found is None:
        links = [(reverse(name), text) for name, text in (*LINKS[kind], ("api-token", "API token"))]
        found = format_html_join("\n      ", '<a href="{}">{}</a>', links)
        with _lock:
            _kept[key] = found
    return mark_safe(found)  # built by format_html_join: each value escaped


@register.simple_tag(takes_context=True)
def site_links(context: Any) -> SafeString:
    kind = RESEARCHER if context.get("is_researcher") else ANNOTATOR if context.get("is_annotator") else ""
    return links_html(kind)


@register.simple_tag
def kept_url(name: str) -> str:
    """``{% url name %}`` for a URL that takes no argument, reversed once per script prefix."""
    key = (f"url:{name}", get_script_prefix(), None)
    found = _kept.get(key)
    if found is None:
        found = reverse(name)  # escaped by the tag as {% url %} escapes it
        with _lock:
            _kept[key] = found
    return str(found)


@register.simple_tag
def kept_static(path: str) -> str:
    """``{% static path %}``, worked out once per process for each file and static URL (which holds
    the script prefix): the storage's answer, a name from its manifest in production, is fixed for
    the life of the storage, which a change of settings replaces (then every answer is forgotten)."""
    key = (f"static:{path}", get_script_prefix(), settings.STATIC_URL)
    found = _kept.get(key)
    if found is None:
        found = static(path)  # escaped by the tag as {% static %} escapes it
        with _lock:
            _kept[key] = found
    return found


@receiver(setting_changed)
def _forget(**kwargs: Any) -> None:
    """A test's change of settings (the static storage, its URL, DEBUG) makes every kept answer stale."""
    with _lock:
        _kept.clear()
