"""Headers every response carries (a Content-Security-Policy, no caching of what an account sees),
and a 400 for input too deeply nested to parse."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBadRequest, HttpResponseBase
from django.utils.cache import add_never_cache_headers

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
            add_never_cache_headers(response)
        return response


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
