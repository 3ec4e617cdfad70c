"""Small, strict readers for settings that come from environment variables.

Each helper fails loudly (ImproperlyConfigured) on a value it cannot read, so a
typo in a deployment stops the process at start-up instead of misbehaving later.
"""

import ipaddress
import os
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_decimal(name: str, default: str) -> Decimal:
    """A decimal number (money, a rate); a value that is not a finite number >= 0 stops the process."""
    raw = os.environ.get(name)
    text = default if raw is None or raw.strip() == "" else raw.strip()
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if not value.is_finite() or value < 0:
        raise ImproperlyConfigured(f"{name}={raw!r} must be a number of at least 0")
    return value


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def env_networks(name: str, default: str) -> list[IPNetwork]:
    """Comma-separated addresses or networks (``10.0.0.5``, ``10.0.0.0/24``, ``::1``)."""
    raw = os.environ.get(name)
    text = default if raw is None else raw
    networks: list[IPNetwork] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {item!r} is not an IP address or network") from None
    return networks
