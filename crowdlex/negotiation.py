"""Content negotiation for the API: DRF's, answered at once for the requests nearly every client sends.

A client that names no format (no ``Accept`` header, ``Accept: */*``, or the first renderer's own
media type, and no ``?format=``) gets the first renderer (JSON) with its media type, as DRF's
negotiation answers it; parsing the header and walking the renderers took a twentieth of an API
request's CPU (docs/benchmarks.md, "The API's request path"). Any other request is negotiated by
DRF. Likewise a body sent as exactly the first parser's type (``application/json``) is that
parser's without matching each parser's type (docs/benchmarks.md, "The API's claim and submit
through DRF").
"""

from __future__ import annotations

from collections.abc import Iterable

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class ContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        first = next(iter(renderers), None)
        if first is not None and not format_suffix and not request._request.META.get("QUERY_STRING"):
            media_type = first.media_type
            # A plain "type/subtype" (no parameters, no wildcard), as DRF answers it for these headers.
            if ";" not in media_type and "*" not in media_type:
                accept = request._request.META.get("HTTP_ACCEPT")
                if accept is None or accept == "*/*" or accept == media_type:
                    return first, media_type
        return super().select_renderer(request, renderers, format_suffix)  # type: ignore[no-any-return]

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        # A body sent as exactly the first parser's plain type (every client's JSON) is that parser's,
        # as DRF matches it; any other is matched by DRF.
        first = next(iter(parsers), None)
        if first is not None:
            media_type = first.media_type
            if ";" not in media_type and "*" not in media_type and request.content_type == media_type:
                return first
        return super().select_parser(request, parsers)  # type: ignore[no-any-return]
