"""Headers every response carries (a Content-Security-Policy, no caching of what an account sees),
the API's rules, a 400 for input too deeply nested to parse, and messages read only once something
reads or adds one.

Each layer of the stack costs every request a call and an exception wrapper, so what was a layer
for a few lines of its own (the API's rules, the nesting refusal) runs inside one that was there
anyway (docs/design.md §7, "The request's fixed cost")."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, cast

from django.conf import settings
from django.contrib.messages import middleware as messages_middleware
from django.contrib.messages.storage import default_storage
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseBase
from django.utils.cache import add_never_cache_headers
from django.utils.functional import SimpleLazyObject, empty
from django.utils.http import http_date

from crowdlex.api_errors import ApiMiddleware, is_api

logger = logging.getLogger(__name__)


def content_security_policy(**directives: Iterable[str]) -> str:
    """The policy of ``settings.CONTENT_SECURITY_POLICY`` with some directives replaced.

    Keyword names are directive names with underscores (``frame_ancestors=[...]``).
    """
    policy = {**settings.CONTENT_SECURITY_POLICY}
    policy.update({name.replace("_", "-"): list(sources) for name, sources in directives.items()})
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in policy.items())


class SecurityHeadersMiddleware:
    """Adds the site's Content-Security-Policy to any response that sets none of its own (the MTurk
    page sets its own, to be framed by MTurk), and ``Cache-Control: no-store`` to responses for a
    signed-in account, session or API token, so a shared browser or proxy keeps none of them.

    Below it, an ``/api/`` path goes through the API's rules (``crowdlex.api_errors.ApiMiddleware``)
    and any other straight on; and a view's ``RecursionError`` is answered 400
    (``process_exception``, which Django's handler calls where the view raised, whichever layer
    defines it)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.policy = content_security_policy()
        # An error in the API's rules is answered as Django's handler answers one between two
        # layers, and gets the headers above it still.
        self.api = cast(
            Callable[[HttpRequest], HttpResponseBase], convert_exception_to_response(ApiMiddleware(get_response))
        )

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.api(request) if is_api(request) else self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.policy)
        # DRF puts the account of an API token on the request too, once the view authenticated it.
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            never_cache(response)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponseBase | None:
        return refuse_deep_nesting(request, exception)


# What ``add_never_cache_headers`` writes on a response that has neither header yet.
NEVER_CACHE = "max-age=0, no-cache, no-store, must-revalidate, private"


def never_cache(response: HttpResponseBase) -> None:
    """``django.utils.cache.add_never_cache_headers``, written at once when the response has no
    ``Cache-Control`` or ``Expires`` of its own (nearly every one): Django's parses and merges the
    header twice, a twentieth of an API request's CPU (docs/benchmarks.md, "The API's request path").
    A response a view already marked so (``never_cached``) is left as it is, as Django's would
    write the same headers again."""
    headers = response.headers
    if headers.get("Cache-Control") == NEVER_CACHE and "Expires" in headers:
        return
    if "Cache-Control" in headers or "Expires" in headers:
        add_never_cache_headers(response)
        return
    headers["Expires"] = http_date(time.time())
    headers["Cache-Control"] = NEVER_CACHE


def never_cached(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """``django.views.decorators.cache.never_cache`` for a view, with the headers written as
    ``never_cache`` writes them: the security headers' layer then finds them and has nothing to add
    for an account (docs/design.md §7, "The request's fixed cost")."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        never_cache(response)
        return response

    return wrapper


def refuse_deep_nesting(request: HttpRequest, exception: Exception) -> HttpResponseBase | None:
    """Answers 400 to input nested too deeply to parse, wherever it is parsed.

    Python's JSON decoder recurses once per bracket and stops with ``RecursionError`` near a
    thousand levels, which Django's form ``JSONField`` (the admin's forms) does not catch. The
    API's parser answers such bodies itself, in the API's error shape (``crowdlex.parsers``).
    """
    if not isinstance(exception, RecursionError):
        return None
    logger.warning("refused input nested too deeply: %s %s", request.method, request.path)
    return HttpResponseBadRequest("The request is nested too deeply.", content_type="text/plain; charset=utf-8")


class MessageMiddleware(messages_middleware.MessageMiddleware):
    """Django's, with the request's message storage made when something first reads or adds a
    message (a page's template, a view), not on every request: an API answer, or a page that shows
    none, builds none of its three storages (the cookie's with its signer, the session's). A
    storage never made holds no message to store, as Django's would hold none."""

    def process_request(self, request: HttpRequest) -> None:
        request._messages = SimpleLazyObject(lambda: default_storage(request))  # type: ignore[attr-defined]

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        storage = getattr(request, "_messages", None)
        if isinstance(storage, SimpleLazyObject) and storage._wrapped is empty:
            return response
        return super().process_response(request, response)
