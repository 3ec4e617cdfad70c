"""Headers every response carries (a Content-Security-Policy, no caching of what an account sees),
and a 400 for input too deeply nested to parse."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBadRequest, HttpResponseBase
from django.utils.cache import add_never_cache_headers
from django.utils.http import http_date

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
    signed-in account, session or API token, so a shared browser or proxy keeps none of them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.policy = content_security_policy()

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.policy)
        # DRF puts the account of an API token on the request too, once the view authenticated it.
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            never_cache(response)
        return response


# What ``add_never_cache_headers`` writes on a response that has neither header yet.
NEVER_CACHE = "max-age=0, no-cache, no-store, must-revalidate, private"


def never_cache(response: HttpResponseBase) -> None:
    """``django.utils.cache.add_never_cache_headers``, written at once when the response has no
    ``Cache-Control`` or ``Expires`` of its own (nearly every one): Django's parses and merges the
    header twice, a twentieth of an API request's CPU (docs/benchmarks.md, "The API's request path")."""
    headers = response.headers
    if "Cache-Control" in headers or "Expires" in headers:
        add_never_cache_headers(response)
        return
    headers["Expires"] = http_date(time.time())
    headers["Cache-Control"] = NEVER_CACHE


class DeeplyNestedInputMiddleware:
    """Answers 400 to input nested too deeply to parse, wherever it is parsed.

    Python's JSON decoder recurses once per bracket and stops with ``RecursionError`` near a
    thousand levels, which Django's form ``JSONField`` (the admin's forms) does not catch. The
    API's parser answers such bodies itself, in the API's error shape (``crowdlex.parsers``).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponseBase | None:
        if not isinstance(exception, RecursionError):
            return None
        logger.warning("refused input nested too deeply: %s %s", request.method, request.path)
        return HttpResponseBadRequest("The request is nested too deeply.", content_type="text/plain; charset=utf-8")
