"""Tags of the annotator's page (``hits/assignment.html``): what does not change from one HIT to
the next, rendered once, and the flag form's rows, written in Python.

``{% kept_fragment a b ... %}…{% endkept_fragment %}`` renders its content the first time it meets
the values of ``a``, ``b``, … and gives the same markup again whenever they come back: the
instructions of a batch's design, the keyboard help of a set of choices, the flag form's reasons
(docs/design.md §4, "The page's fixed parts"). The content must read nothing but the values it is
keyed on; an object is known by its identity (a scheme's designed page is one object for the
life of the process, ``hits.selectors.annotator.designed_page``), a string, number or boolean by
its value, a list or tuple by its elements. A fragment is kept on its node, so a template loaded
again (a changed file in development) starts empty.
"""

from __future__ import annotations

import html
import weakref
from typing import Any

from django import template
from django.conf import settings
from django.core.signals import setting_changed
from django.template.base import FilterExpression, NodeList, Parser, Token
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_PLAIN = (str, int, float, bool, type(None))
# Every fragment node compiled so far, for kept_fragments_clear.
_NODES: weakref.WeakSet[KeptFragmentNode] = weakref.WeakSet()


def _key_part(value: Any) -> Any:
    if isinstance(value, _PLAIN):
        # By type too: True and 1 are equal but print differently.
        return (type(value), value)
    if isinstance(value, list | tuple):
        return (type(value), tuple(_key_part(element) for element in value))
    return (object, id(value))


class KeptFragmentNode(template.Node):
    def __init__(self, nodelist: NodeList, keys: list[FilterExpression]) -> None:
        self.nodelist = nodelist
        self.keys = keys
        # key -> (the values, held so that no other object takes an id while its markup is kept; the markup)
        self.kept: dict[tuple[Any, ...], tuple[tuple[Any, ...], SafeString]] = {}
        _NODES.add(self)

    def render(self, context: template.Context) -> SafeString:
        values = tuple(key.resolve(context) for key in self.keys)
        key = tuple(_key_part(value) for value in values)
        found = self.kept.get(key)
        if found is not None:
            return found[1]
        markup = mark_safe(self.nodelist.render(context))
        # Bounded, as designs come and go (docs/design.md §4, "The page's fixed parts").
        if len(self.kept) >= settings.WORK_PAGE_FRAGMENTS_KEPT:
            self.kept.clear()
        self.kept[key] = (values, markup)
        return markup


@register.tag
def kept_fragment(parser: Parser, token: Token) -> KeptFragmentNode:
    keys = [parser.compile_filter(bit) for bit in token.split_contents()[1:]]
    nodelist = parser.parse(("endkept_fragment",))
    parser.delete_first_token()
    return KeptFragmentNode(nodelist, keys)


def kept_fragments_clear(**_: Any) -> None:
    """Forget every kept fragment: the next pages are rendered in full. Also when a setting changes
    (a test's override): a fragment may show one, such as a static file's address."""
    for node in list(_NODES):
        node.kept.clear()


setting_changed.connect(kept_fragments_clear, dispatch_uid="hits.work_page.kept_fragments_clear")


@register.simple_tag
def flag_row_options(rows: list[Any]) -> SafeString:
    """The flag form's ``<option>`` per row (``hits.selectors.ItemRow``): the markup a template loop
    gives, without its dozens of variable lookups a page. The row's text is escaped (``html.escape``,
    as Django's ``escape``), its id and number too."""
    # Built from escaped values and fixed markup only.
    options = []
    for row in rows:
        row_id, number, text = html.escape(str(row.id)), html.escape(str(row.number)), html.escape(row.text)
        options.append(f'<option value="{row_id}">Row {number}: {text}</option>')
    return mark_safe("".join(options))
