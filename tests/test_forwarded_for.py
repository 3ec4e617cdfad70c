"""X-Forwarded-For is believed only from the proxies in TRUSTED_PROXY_ADDRESSES: a client that reaches
the server directly is counted by its own address, for sign-in lockouts and every throttle."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory
from pytest_django.fixtures import Settings

from crowdlex.env import env_networks
from crowdlex.throttling import client_ip
from tests.base import PASSWORD, Cast

PROXIES = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1"), ipaddress.ip_network("10.0.0.0/24")]


@pytest.fixture(autouse=True)
def behind_a_proxy(settings: Settings) -> None:
    settings.TRUSTED_PROXY_ADDRESSES = PROXIES
    cache.clear()


@pytest.mark.parametrize(
    ("remote", "forwarded", "client"),
    [
        ("192.0.2.50", "198.51.100.1", "192.0.2.50"),  # straight to the server: the header is the client's
        ("192.0.2.50", None, "192.0.2.50"),
        ("127.0.0.1", "198.51.100.1", "198.51.100.1"),  # through the proxy
        ("127.0.0.1", "203.0.113.9, 198.51.100.1", "198.51.100.1"),  # what the client wrote is left of it
        ("127.0.0.1", "198.51.100.1, 10.0.0.7", "198.51.100.1"),  # a chain of trusted proxies
        ("127.0.0.1", "10.0.0.8, 10.0.0.7", "10.0.0.8"),  # nothing but proxies: the leftmost
        ("127.0.0.1", "not-an-address, 10.0.0.7", "10.0.0.7"),
        ("127.0.0.1", None, "127.0.0.1"),
        ("::1", "2001:db8::5", "2001:db8::5"),
    ],
)
def test_the_client_address_is_read_past_trusted_proxies_only(remote: str, forwarded: str | None, client: str) -> None:
    request = RequestFactory().get("/", REMOTE_ADDR=remote)
    if forwarded is not None:
        request.META["HTTP_X_FORWARDED_FOR"] = forwarded
    assert client_ip(request) == client


def test_no_proxy_is_trusted_unless_configured(settings: Settings) -> None:
    settings.TRUSTED_PROXY_ADDRESSES = []
    request = RequestFactory().get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert client_ip(request) == "127.0.0.1"


def test_the_setting_names_a_value_that_is_no_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUSTED_PROXY_ADDRESSES", "10.0.0.1, 10.0.0.0/24,::1")
    assert [str(network) for network in env_networks("TRUSTED_PROXY_ADDRESSES", "")] == [
        "10.0.0.1/32",
        "10.0.0.0/24",
        "::1/128",
    ]
    monkeypatch.setenv("TRUSTED_PROXY_ADDRESSES", "10.0.0.1,proxy.local")
    with pytest.raises(ImproperlyConfigured, match=r"TRUSTED_PROXY_ADDRESSES: 'proxy\.local' is not an IP address"):
        env_networks("TRUSTED_PROXY_ADDRESSES", "")


def _sign_in(client: Client, password: str, forwarded: str, username: str) -> Any:
    return client.post("/accounts/login/", {"username": username, "password": password}, HTTP_X_FORWARDED_FOR=forwarded)


@pytest.mark.django_db
def test_a_fresh_forwarded_for_sent_straight_to_the_server_does_not_escape_the_lockout(
    cast: Cast, settings: Settings
) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    direct = Client(REMOTE_ADDR="192.0.2.50")
    for attempt in range(2):
        assert _sign_in(direct, "wrong", f"198.51.100.{attempt}", cast.researcher.username).status_code == 200
    _sign_in(direct, "wrong", "198.51.100.2", cast.researcher.username)

    locked = _sign_in(direct, PASSWORD, "198.51.100.99", cast.researcher.username)

    assert locked.status_code == 429
    # Through the proxy, each client is its own address: one locked out, another not.
    proxy = Client(REMOTE_ADDR="127.0.0.1")
    for _ in range(3):
        _sign_in(proxy, "wrong", "198.51.100.1", cast.researcher.username)
    assert _sign_in(proxy, PASSWORD, "203.0.113.9, 198.51.100.1", cast.researcher.username).status_code == 429
    assert (
        _sign_in(Client(REMOTE_ADDR="127.0.0.1"), PASSWORD, "198.51.100.3", cast.researcher.username).status_code == 302
    )


@pytest.mark.django_db
def test_a_fresh_forwarded_for_sent_straight_to_the_server_does_not_escape_the_throttle(
    cast: Cast, settings: Settings
) -> None:
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "sign-in": "2/minute"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    direct = Client(REMOTE_ADDR="192.0.2.51")
    for attempt in range(2):
        assert _sign_in(direct, "wrong", f"198.51.100.{attempt}", f"nobody{attempt}").status_code != 429

    assert _sign_in(direct, PASSWORD, "198.51.100.77", cast.researcher.username).status_code == 429
