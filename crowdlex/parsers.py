"""Request body parsing for the API."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils import json


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, answering 400 to a body nested too deeply to parse.

    Python's decoder recurses once per bracket and gives up with ``RecursionError`` (not a
    ``ValueError``) near a thousand levels; no request of this API nests beyond a few.

    A body in UTF-8 (every client's) is decoded at once, as DRF's stream reader decodes it (strictly,
    an unfinished character at the very end left out), rather than through a reader built for each
    request (docs/benchmarks.md, "The API's claim and submit through DRF"); any other charset is
    read by DRF.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            if (parser_context or {}).get("encoding") == "utf-8":
                return self._parse_utf8(stream)
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None

    def _parse_utf8(self, stream: Any) -> Any:
        try:
            text, _ = codecs.utf_8_decode(stream.read(), "strict", False)
            return json.loads(text, parse_constant=json.strict_constant if self.strict else None)
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
