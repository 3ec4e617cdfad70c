"""The OpenAPI schema's own rules, applied to every operation so no view has to repeat them.

Every operation declares the errors it can answer, in the one shape of ``crowdlex.api_errors``:
401 and 403 where an account is needed, 404 where the path names a row, 400 where it reads a
body or a query, 413 where it reads a body, 414 everywhere (a URL too long), 429 where it is
throttled. An operation that declares
a code itself (with a richer body) keeps its own.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular import openapi
from drf_spectacular.plumbing import ResolvedComponent, force_instance
from rest_framework import serializers
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


def decimal_pattern(field: serializers.DecimalField) -> str | None:
    """The pattern of the decimals ``field`` accepts, as a string: at most its whole and decimal
    digits, at least one digit, no sign where its minimum is 0 or more, and not zero where its minimum
    is its smallest step (a bonus of at least $0.01). None where the bounds say more than a pattern
    can (such fields are not strings in the schema's sense; none is)."""
    whole, places = field.max_whole_digits, field.decimal_places
    if whole is None or places is None:
        return None
    minimum = None if field.min_value is None else Decimal(str(field.min_value))
    if field.max_value is not None or (minimum is not None and minimum > Decimal(1).scaleb(-places)):
        return None
    sign = "" if minimum is not None and minimum >= 0 else "-?"
    number = rf"\d{{1,{whole}}}" if whole else "0?"
    if places:
        number = rf"(?:{number}(?:\.\d{{0,{places}}})?|\.\d{{1,{places}}})"
    not_zero = r"(?![0.]*$)" if minimum is not None and minimum > 0 else ""
    return f"^{not_zero}{sign}{number}$"


# A text field that may not be blank: DRF strips it and refuses what is left empty, and refuses NUL.
_NOT_BLANK = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"
_ANY_TEXT = r"^[^\u0000]*$"
# Django's validate_slug.
_SLUG = r"^[-a-zA-Z0-9_]+$"


class AutoSchema(openapi.AutoSchema):
    def map_parsers(self) -> list[Any]:
        """One media type per operation: multipart for an upload, JSON for the rest. The API reads
        forms too, but a form cannot say null, nor tell an empty field from a missing one, so the
        schema promises what JSON can say."""
        found: list[Any] = super().map_parsers()
        serializer = self.get_request_serializer()
        uploads = False
        if isinstance(serializer, serializers.BaseSerializer | type) and not isinstance(serializer, dict):
            instance = force_instance(serializer)
            fields = getattr(instance, "fields", {})
            uploads = any(isinstance(field, serializers.FileField) for field in fields.values())
        wanted = "multipart/form-data" if uploads else "application/json"
        return [wanted] if wanted in found else found

    def _map_serializer_field(self, field: Any, direction: openapi.Direction, bypass_extensions: bool = False) -> Any:
        """drf-spectacular's mapping, stating what validation enforces on input: a decimal's digits
        and sign (its pattern allows an empty string, and a sign below a minimum of 0), text that
        may not be blank or hold NUL, a list that may not be empty, an upload as a file."""
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction != "request" or not isinstance(schema, dict) or getattr(field, "read_only", False):
            return schema
        if isinstance(field, serializers.FileField):
            return {
                "type": "string",
                "format": "binary",
                **({"description": schema["description"]} if "description" in schema else {}),
            }
        if isinstance(field, serializers.DecimalField) and "pattern" in schema:
            pattern = decimal_pattern(field)
            if pattern is None:
                raise ValueError(f"{field.parent.__class__.__name__}.{field.field_name}: no pattern states its bounds")
            schema["pattern"] = pattern
        elif type(field) is serializers.SlugField:
            schema["pattern"] = _SLUG
        elif type(field) is serializers.CharField and "pattern" not in schema and "enum" not in schema:
            if field.allow_blank:
                schema["pattern"] = _ANY_TEXT
            else:
                schema["pattern"] = _NOT_BLANK
                schema["minLength"] = max(schema.get("minLength", 0), 1)
        elif isinstance(field, serializers.ListField | serializers.MultipleChoiceField) and not field.allow_empty:
            schema["minItems"] = max(schema.get("minItems", 0), 1)
        return schema

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
