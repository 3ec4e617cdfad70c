"""Which addresses a webhook may reach (docs/design.md §16, docs/notifications.md "Addresses").

A webhook URL is the researcher's, but the request leaves from the platform's own network: a URL
whose host is, or resolves to, a private, loopback, link-local, shared, reserved or otherwise
non-public address would let a researcher make the platform post to machines only it can see. Such
a URL is refused when it is saved (``webhook_url_check``), and again when an event is posted, since
a name may resolve elsewhere by then: the post goes through ``webhook_session``, whose connections
check the address they actually connected to before a byte is sent. ``WEBHOOK_ALLOW_PRIVATE_ADDRESSES``
(off by default) lets an installation on a private network post to its own receivers.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool


class WebhookAddressRefused(ValueError):
    """The webhook's host is, or resolves to, an address that is not public; the message says which."""


def address_public(address: str) -> bool:
    """Whether an IP address (v4 or v6, an IPv4-mapped v6 read as its v4) is reachable on the public
    internet: not private, loopback, link-local, shared (100.64/10), multicast, reserved or unspecified."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _allowed() -> bool:
    return bool(settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES)


def _refusal(url: str, host: str, address: str) -> str:
    shown = host if host == address else f"{host} ({address})"
    return (
        f"the webhook URL {url} reaches {shown}, which is not a public address: webhooks are posted "
        "to public addresses only (WEBHOOK_ALLOW_PRIVATE_ADDRESSES allows others)"
    )


def webhook_url_check(url: str) -> None:
    """Refuse (``WebhookAddressRefused``) a URL whose host does not resolve, or resolves to any
    address that is not public, unless ``WEBHOOK_ALLOW_PRIVATE_ADDRESSES`` is on. An empty URL passes."""
    if not url or _allowed():
        return
    host = urlsplit(url).hostname or ""
    if not host:
        raise WebhookAddressRefused(f"the webhook URL {url} names no host")
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise WebhookAddressRefused(f"the webhook URL's host {host} does not resolve ({error})") from None
    for *_, sockaddr in found:
        address = str(sockaddr[0])
        if not address_public(address):
            raise WebhookAddressRefused(_refusal(url, host, address))


def _connected_check(connection: HTTPConnection, sock: Any) -> None:
    if _allowed():
        return
    address = str(sock.getpeername()[0])
    if not address_public(address):
        sock.close()
        raise WebhookAddressRefused(_refusal(f"{connection.host}:{connection.port}", connection.host, address))


class _CheckedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _connected_check(self, sock)
        return sock


class _CheckedHTTPSConnection(HTTPSConnection):
    # The check runs once the TCP connection is made, before the TLS handshake and the request.
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _connected_check(self, sock)
        return sock


class _CheckedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _CheckedHTTPConnection


class _CheckedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _CheckedHTTPSConnection


class _CheckedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _CheckedHTTPPool, "https": _CheckedHTTPSPool}


def webhook_session() -> requests.Session:
    """A session whose every connection checks the address it reached (refusing a non-public one with
    ``WebhookAddressRefused`` before sending anything). It ignores proxy settings of the environment:
    through a proxy, the address connected to would be the proxy's, not the receiver's."""
    session = requests.Session()
    session.trust_env = False
    adapter = _CheckedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
