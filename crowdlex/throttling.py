"""Rate limits: per account on the queue's claim and submit, per address on sign-in.

DRF's throttles counting in the default cache, used by the API views and, through ``throttled``,
by the pages that do the same things. Rates come from ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``
(environment variables THROTTLE_*_RATE), read at each request so tests can change them.
Failed sign-ins are counted apart, by django-axes, which locks an account out from an address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
    return address is not None and any(address in network for network in settings.TRUSTED_PROXY_ADDRESSES)


def client_ip(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, unless it is a trusted proxy (TRUSTED_PROXY_ADDRESSES);
    then X-Forwarded-For is read from the right, past every trusted proxy, and the first address
    that is not one is the client (one that is no address at all ends the walk: it is the client's
    own writing).

    One definition for the throttles and for django-axes (AXES_CLIENT_IP_CALLABLE).
    """
    remote = str(request.META.get("REMOTE_ADDR", "") or "")
    if not _trusted(_address(remote)):
        return remote
    client = remote
    for entry in reversed(str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",")):
        address = _address(entry)
        if address is None:
            break
        client = str(address)
        if not _trusted(address):
            break
    return client


class _RateFromSettings(SimpleRateThrottle):
    def get_ident(self, request: Any) -> str:
        return client_ip(request)

    def get_rate(self) -> str | None:
        rates = cast(dict[str, str | None], api_settings.DEFAULT_THROTTLE_RATES)
        return rates.get(self.scope or "")


class ClaimThrottle(_RateFromSettings, UserRateThrottle):
    scope = "claim"


class SubmitThrottle(_RateFromSettings, UserRateThrottle):
    scope = "submit"


class DraftThrottle(_RateFromSettings, UserRateThrottle):
    scope = "draft"


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
