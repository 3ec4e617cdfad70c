"""``{% benchmark_fragment benchmark "name" [value ...] %} … {% endbenchmark_fragment %}``: the part of
a page between the two tags rendered once per change of the benchmark and served from the shared
cache until the next (``annotation.fragments``; docs/design.md §7, "Rendered fragments").

The values after the name are anything else the part depends on; the page's path and query
string, the viewer's role, the language and the scheme are always part of the key. Figures the part
alone reads are best passed to the template through ``annotation.fragments.later``, so a part
served from the cache does not read them.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.template.base import FilterExpression, Node, NodeList, Parser, Token
from django.utils.safestring import SafeString, mark_safe

from annotation.changes import page_cache_read_ahead
from annotation.fragments import HIDDEN, Hidden, fragment_cached, fragment_key

register = template.Library()


class BenchmarkFragmentNode(Node):
    def __init__(
        self, nodelist: NodeList, benchmark: FilterExpression, name: FilterExpression, vary: list[FilterExpression]
    ) -> None:
        self.nodelist = nodelist
        self.benchmark = benchmark
        self.name = name
        self.vary = vary

    def _render_body(self, context: Any) -> str:
        with context.push({name: Hidden(name) for name in HIDDEN}):
            return str(self.nodelist.render(context))

    def render(self, context: Any) -> SafeString:
        request = getattr(context, "request", None)
        if request is None:
            # Rendered outside a request (no reader to key it by): rendered each time, the reader's
            # values hidden all the same.
            return mark_safe(self._render_body(context))
        key = self.key(request, context)
        # The page's other fragments are read with this one, in one round trip.
        page_cache_read_ahead([key, *(node.key(request, context) for node in _page_fragments(context, self))])
        # What the nodes rendered is already escaped where it needed to be.
        return mark_safe(fragment_cached(key=key, render=lambda: self._render_body(context)))

    def key(self, request: Any, context: Any) -> str:
        return fragment_key(
            request=request,
            benchmark=self.benchmark.resolve(context),
            name=str(self.name.resolve(context)),
            vary=[value.resolve(context) for value in self.vary],
        )


def _page_fragments(context: Any, node: BenchmarkFragmentNode) -> list[BenchmarkFragmentNode]:
    """The fragments of the page's template after ``node``, outside any fragment (one inside another
    is read only when the outer one is rendered): those the page reads next, when the first is
    rendered. Their keys are made in the first one's context: one whose values differ by then is
    read again when it is rendered, as without this."""
    template = getattr(context, "template", None)
    if template is None:
        return []
    found: list[BenchmarkFragmentNode] | None = getattr(template, _FRAGMENTS, None)
    if found is None:
        found = _outer_fragments(template.nodelist)
        setattr(template, _FRAGMENTS, found)
    return found[found.index(node) + 1 :] if node in found else []


_FRAGMENTS = "_crowdlex_benchmark_fragments"


def _outer_fragments(nodelist: NodeList) -> list[BenchmarkFragmentNode]:
    found: list[BenchmarkFragmentNode] = []
    for node in nodelist:
        if isinstance(node, BenchmarkFragmentNode):
            found.append(node)
            continue
        for attribute in node.child_nodelists:
            inner = getattr(node, attribute, None)
            if inner:
                found.extend(_outer_fragments(inner))
    return found


@register.tag("benchmark_fragment")
def benchmark_fragment(parser: Parser, token: Token) -> BenchmarkFragmentNode:
    bits = token.split_contents()
    if len(bits) < 3:
        raise template.TemplateSyntaxError(f"'{bits[0]}' takes a benchmark and a name, then any values it varies by")
    nodelist = parser.parse(("endbenchmark_fragment",))
    parser.delete_first_token()
    return BenchmarkFragmentNode(
        nodelist,
        parser.compile_filter(bits[1]),
        parser.compile_filter(bits[2]),
        [parser.compile_filter(bit) for bit in bits[3:]],
    )
