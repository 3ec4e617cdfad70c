"""Request body parsing for the API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, answering 400 to a body nested too deeply to parse.

    Python's decoder recurses once per bracket and gives up with ``RecursionError`` (not a
    ``ValueError``) near a thousand levels; no request of this API nests beyond a few.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
