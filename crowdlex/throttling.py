"""Rate limits: per account on the queue's claim and submit, per address on sign-in.

DRF's throttles counting in the default cache, used by the API views and, through ``throttled``,
by the pages that do the same things. Rates come from ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``
(environment variables THROTTLE_*_RATE), read at each request so tests can change them.
Failed sign-ins are counted apart, by django-axes, which locks an account out from an address.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle, UserRateThrottle


def client_ip(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or the one before the trusted proxies (NUM_PROXIES).

    One definition for the throttles and for django-axes (AXES_CLIENT_IP_CALLABLE).
    """
    return BaseThrottle().get_ident(request)  # type: ignore[arg-type]


class _RateFromSettings(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        rates = cast(dict[str, str | None], api_settings.DEFAULT_THROTTLE_RATES)
        return rates.get(self.scope or "")


class ClaimThrottle(_RateFromSettings, UserRateThrottle):
    scope = "claim"


class SubmitThrottle(_RateFromSettings, UserRateThrottle):
    scope = "submit"


class SignInThrottle(_RateFromSettings):
    """Sign-in attempts per client address, whoever they claim to be."""

    scope = "sign-in"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def throttled(throttle_class: type[SimpleRateThrottle]) -> Callable[[View], View]:
    """Apply a throttle to the POSTs of a page view: too many answer 429 with Retry-After."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method == "POST":
                throttle = throttle_class()
                if not throttle.allow_request(request, None):  # type: ignore[arg-type]
                    response = HttpResponse(
                        "Too many requests: please wait a moment and try again.",
                        status=429,
                        content_type="text/plain; charset=utf-8",
                    )
                    wait = throttle.wait()
                    if wait is not None:
                        response["Retry-After"] = str(int(wait) + 1)
                    return response
            return view(request, *args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorator
