"""One error shape for every ``/api/`` path, whoever answers: DRF's views, Django's URL resolver
(404), its request size limits (413), a URL past ``API_MAX_URL_LENGTH`` (414), an unhandled
exception (500) or a view that answers an HTML error of its own; gunicorn's own refusals are
answered in it too (``crowdlex/gunicorn_conf.py``).

The shape is a JSON object with a ``detail`` sentence, always; a refused input adds its field
errors beside it, each field naming a list of messages (``{"detail": "...", "seed": ["..."]}``),
as DRF has always answered them, so clients that read a field's messages keep working.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.urls import Resolver404, ResolverMatch, resolve
from django.views import defaults
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
# Headers an error keeps when an HTML error is answered again as JSON.
_KEPT_HEADERS = ("Allow", "WWW-Authenticate", "Retry-After")


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def _messages(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [f"{key}: {message}" for key, inner in value.items() for message in _messages(inner)]
    if isinstance(value, list | tuple):
        return [message for inner in value for message in _messages(inner)]
    return [str(value)]


def error_body(data: Any, status: int) -> dict[str, Any]:
    """``data`` as DRF would answer it (a detail, a list of messages, field errors), in the one shape."""
    if isinstance(data, Mapping):
        body = dict(data)
        detail = body.pop("detail", None)
        if detail is None:
            messages = _messages(body)
            detail = "; ".join(messages) if messages else HTTPStatus(status).phrase
        elif not isinstance(detail, str):
            detail = " ".join(_messages(detail))
        # A field refused with one message (``ValidationError({"split": "..."})``) gets a list, as others.
        fields = {key: [str(value)] if isinstance(value, str) else value for key, value in body.items()}
        return {"detail": str(detail), **fields}
    messages = _messages(data) if data is not None else []
    return {"detail": " ".join(messages) if messages else HTTPStatus(status).phrase}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Any:
    """DRF's handler with every answer in the one shape; what it leaves (a 500) goes on to Django."""
    response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = error_body(response.data, response.status_code)
    return response


def json_error(status: int, detail: str | None = None) -> JsonResponse:
    return JsonResponse({"detail": detail or HTTPStatus(status).phrase}, status=status)


# Django's error handlers (``handler400`` … in crowdlex.urls): JSON under /api/, the pages elsewhere.


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        # Django raises it for a body past DATA_UPLOAD_MAX_MEMORY_SIZE, which is a 413 by nature.
        if is_api(request):
            return json_error(413, "The request body is too large.")
        return HttpResponse("The request body is too large.", status=413, content_type="text/plain; charset=utf-8")
    if is_api(request):
        too_many = isinstance(exception, TooManyFieldsSent | TooManyFilesSent)
        return json_error(400, "The request has too many fields or files." if too_many else "Bad request.")
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return json_error(403, str(exception) or "You may not do this.")
    # templates/403.html: a page that says whose page it is and where to go instead.
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return json_error(404, "Not found.")
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return json_error(500, "The server failed to answer; the error is logged.")
    return defaults.server_error(request)


# The most characters one character of a path or query may become in ``get_full_path``: a code point
# of four bytes in UTF-8, each escaped as ``%XX``.
_MOST_ESCAPED = 12


def _url_may_exceed(request: HttpRequest, limit: int) -> bool:
    """Whether ``request.get_full_path()`` may be longer than ``limit`` characters: escaping makes
    each character at most ``_MOST_ESCAPED`` long, so a short URL is known to be within it without
    escaping it, on every request (docs/benchmarks.md, "The API's cycle in one process")."""
    query = request.META.get("QUERY_STRING", "")
    # The path, a slash Django may append, the query and its "?".
    return (len(request.path) + 1 + len(query) + 1) * _MOST_ESCAPED > limit


class ApiMiddleware:
    """Three rules for ``/api/`` paths, kept here so no route has to know them.

    - A URL (path and query) longer than ``API_MAX_URL_LENGTH`` characters answers 414 before
      anything reads it.
    - A path answers with or without its trailing slash: when the path as sent matches no route
      and the other spelling does, the request is routed to that one (no redirect, which a client
      would follow with a GET and without its body).
    - Any error answered in HTML (a 405 of a plain Django view, a CSRF refusal) is answered again
      in the JSON shape, with the same status and the headers a client needs.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not is_api(request):
            return self.get_response(request)
        limit = settings.API_MAX_URL_LENGTH
        if _url_may_exceed(request, limit) and len(request.get_full_path()) > limit:
            return json_error(414, f"The URL is longer than API_MAX_URL_LENGTH ({limit:,} characters).")
        self._route_either_spelling(request)
        response = self.get_response(request)
        content_type = response.get("Content-Type", "")
        if response.status_code >= 400 and not content_type.startswith("application/json"):
            # A plain-text refusal says something worth keeping; an HTML page does not.
            detail = None
            if content_type.startswith("text/plain") and isinstance(response, HttpResponse):
                detail = response.content.decode(errors="replace").strip()[:500] or None
            error = json_error(response.status_code, detail)
            for header in _KEPT_HEADERS:
                if header in response:
                    error[header] = response[header]
            return error
        return response

    @staticmethod
    def _route_either_spelling(request: HttpRequest) -> None:
        path = request.path_info
        try:
            remember_match(request, resolve(path))
            return
        except Resolver404:
            pass
        other = path[:-1] if path.endswith("/") else path + "/"
        try:
            match = resolve(other)
        except Resolver404:
            return
        request.path_info = other
        request.path = request.path[: len(request.path) - len(path)] + other
        remember_match(request, match)


# The route ``ApiMiddleware`` found for a request: the path it resolved and the match.
_RESOLVED = "_api_resolved"


def remember_match(request: HttpRequest, match: ResolverMatch) -> None:
    """Keep the route of ``request``'s path so that Django's handler does not resolve it again
    (``ResolvingOnceHandler``)."""
    setattr(request, _RESOLVED, (request.path_info, match))


def remembered_match(request: HttpRequest) -> ResolverMatch | None:
    """The route ``ApiMiddleware`` resolved for ``request``, if the request still has that path and
    the site's URLconf (no middleware after it gave the request another)."""
    resolved = getattr(request, _RESOLVED, None)
    if resolved is None or resolved[0] != request.path_info or hasattr(request, "urlconf"):
        return None
    return resolved[1]


class ResolvingOnceHandler(WSGIHandler):
    """Django's WSGI handler, taking the route ``ApiMiddleware`` already resolved for an ``/api/``
    path instead of resolving the path a second time (docs/benchmarks.md, "The API's request path");
    any other request is resolved as Django does."""

    def resolve_request(self, request: HttpRequest) -> ResolverMatch:
        match = remembered_match(request)
        if match is None:
            return super().resolve_request(request)
        request.resolver_match = match
        return match
