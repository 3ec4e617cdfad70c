"""The OpenAPI schema's own rules, applied to every operation so no view has to repeat them.

Every operation declares the errors it can answer, in the one shape of ``crowdlex.api_errors``:
401 and 403 where an account is needed, 404 where the path names a row, 400 where it reads a
body or a query, 413 where it reads a body, 414 everywhere (a URL too long), 429 where it is
throttled. An operation that declares
a code itself (with a richer body) keeps its own.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework.permissions import AllowAny

ERROR = ResolvedComponent(
    name="Error",
    type=ResolvedComponent.SCHEMA,
    object="Error",
    schema={
        "type": "object",
        "description": "Every error of the API: a sentence in detail; a refused input adds what was refused "
        "beside it (a field's messages, or the file and line of an import).",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
        "additionalProperties": True,
    },
)
FIELD_ERRORS = ResolvedComponent(
    name="FieldErrors",
    type=ResolvedComponent.SCHEMA,
    object="FieldErrors",
    schema={
        "type": "object",
        "description": "Input refused field by field: detail sums them up; each field refused names its "
        "messages (a list), or its items' (an object keyed by position or key).",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
        "additionalProperties": {"anyOf": [{"type": "array", "items": {}}, {"type": "object"}]},
    },
)
_BODY_METHODS = {"POST", "PUT", "PATCH"}
_DESCRIPTIONS = {
    "400": "The input is refused",
    "401": "No credentials, or bad ones: sign in or send `Authorization: Token <key>`",
    "403": "The account may not do this (researchers only, or not its own)",
    "404": "No such row",
    "413": "The request body is too large",
    "414": "The URL is longer than API_MAX_URL_LENGTH",
    "429": "Too many requests: wait as Retry-After says",
}


def field_errors_or(*others: dict[str, Any]) -> dict[str, Any]:
    """A 400 body that is either field errors or one of ``others`` (``{"$ref": ...}`` schemas)."""
    return {"anyOf": [*others, FIELD_ERRORS.ref]}


class AutoSchema(openapi.AutoSchema):
    def _get_response_bodies(self, direction: openapi.Direction = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        self.registry.register_on_missing(ERROR)
        self.registry.register_on_missing(FIELD_ERRORS)
        codes = self._error_codes()
        for content in responses.get("400", {}).get("content", {}).values():
            # An operation's own 400 (an import's file and line, a submission's missing items) comes
            # after its input was read: input that does not parse is refused field by field first.
            if "400" in codes and content.get("schema") not in (FIELD_ERRORS.ref, None):
                content["schema"] = field_errors_or(content["schema"])
        for code in codes:
            if code not in responses:
                schema = FIELD_ERRORS.ref if code == "400" else ERROR.ref
                responses[code] = {
                    "content": {"application/json": {"schema": schema}},
                    "description": _DESCRIPTIONS[code],
                }
        return responses

    def _error_codes(self) -> list[str]:
        codes = []
        has_body = self.method in _BODY_METHODS
        has_query = bool(getattr(self.view, "filterset_class", None)) or self._is_list_view() or has_body
        if has_query or self._reads_query():
            codes.append("400")
        if not all(isinstance(permission, AllowAny) for permission in self.view.get_permissions()):
            codes += ["401", "403"]
        if "{" in self.path:
            codes.append("404")
        if has_body:
            codes.append("413")
        codes.append("414")
        if self.view.get_throttles():
            codes.append("429")
        return codes

    def _reads_query(self) -> bool:
        return any(parameter.get("in") == "query" for parameter in self._get_parameters())
