"""Per-address limits on the crowd pages, which anyone may open without an account (docs/design.md §4).

``CrowdPageThrottle`` counts every request to the MTurk and Prolific pages; ``CrowdBindingThrottle``
counts the first visits that write a pending binding (a worker and an assignment row awaiting the
crowd's confirmation). Rates: ``THROTTLE_CROWD_PAGE_RATE`` and ``THROTTLE_CROWD_BINDING_RATE``,
read at each request; they count in the default cache, like every other throttle.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from crowdlex.throttling import client_ip


class _PerAddress(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        rates = cast(dict[str, str | None], api_settings.DEFAULT_THROTTLE_RATES)
        return rates.get(self.scope or "")

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class CrowdPageThrottle(_PerAddress):
    scope = "crowd-page"


class CrowdBindingThrottle(_PerAddress):
    scope = "crowd-binding"


def too_many(throttle: SimpleRateThrottle) -> HttpResponse:
    response = HttpResponse(
        "Too many requests: please wait a moment and try again.", status=429, content_type="text/plain; charset=utf-8"
    )
    wait = throttle.wait()
    if wait is not None:
        response["Retry-After"] = str(int(wait) + 1)
    return response


def refused_by(throttle_class: type[SimpleRateThrottle], request: HttpRequest) -> HttpResponse | None:
    """The 429 answer when ``request`` is over the throttle's rate, else None (and the request is counted)."""
    throttle = throttle_class()
    if throttle.allow_request(request, None):  # type: ignore[arg-type]
        return None
    return too_many(throttle)


View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def crowd_page_throttled(view: View) -> View:
    """Every request to a crowd page, GET or POST, counts against its address's rate."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        refusal = refused_by(CrowdPageThrottle, request)
        return refusal if refusal is not None else view(request, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
