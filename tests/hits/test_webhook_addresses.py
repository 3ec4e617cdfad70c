"""A webhook reaches public addresses only (docs/notifications.md "Addresses"): a URL whose host is or
resolves to a private, loopback, link-local or other non-public address is refused when saved, and
the post checks the address it actually connected to, so a name that resolves elsewhere by the time
an event is sent is refused then too. ``WEBHOOK_ALLOW_PRIVATE_ADDRESSES`` lets the local receiver in."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from hits.models import Notification, NotificationKind, NotificationSettings, WebhookDelivery
from hits.notifications import notification_deliver, notification_record, notification_settings_update
from hits.notifications.addresses import WebhookAddressRefused, address_public, webhook_url_check
from tests.base import Cast, logged_in, make_cast
from tests.hits.factories import make_benchmark
from tests.hits.test_notifications import Receiver

NOT_PUBLIC = [
    "127.0.0.1",
    "127.8.9.10",
    "10.1.2.3",
    "172.16.0.9",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "240.0.0.1",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
]
PUBLIC = ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_private_loopback_link_local_and_reserved_addresses_are_not_public(address: str) -> None:
    assert not address_public(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_addresses_on_the_internet_are_public(address: str) -> None:
    assert address_public(address)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://localhost/hook",
        "https://169.254.169.254/latest/meta-data/",
        "http://[::1]:9000/",
        "https://10.0.0.5/hook",
    ],
)
def test_a_url_reaching_a_non_public_address_is_refused_unless_allowed(url: str, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    with pytest.raises(WebhookAddressRefused, match="not a public address"):
        webhook_url_check(url)
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    webhook_url_check(url)


def test_a_url_whose_host_does_not_resolve_is_refused(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    with pytest.raises(WebhookAddressRefused, match="does not resolve"):
        webhook_url_check("https://no-such-host.invalid/hook")


@pytest.mark.django_db
def test_the_page_refuses_a_private_webhook_url_and_saves_nothing(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    cast: Cast = make_cast()
    benchmark = make_benchmark()
    answer = logged_in(cast.researcher).post(
        f"/benchmarks/{benchmark.name}/operations/",
        {"budget_cap": "", "webhook_url": "http://169.254.169.254/latest/", "email_me": ""},
    )
    assert answer.status_code == 200
    page = answer.content.decode()
    assert "reaches 169.254.169.254, which is not a public address" in page
    assert not NotificationSettings.objects.filter(benchmark=benchmark).exclude(webhook_url="").exists()


@pytest.mark.django_db
def test_the_service_refuses_a_private_url_for_every_caller_and_accepts_a_public_one(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    cast = make_cast()
    benchmark = make_benchmark()
    with pytest.raises(ValidationError) as refused:
        notification_settings_update(
            benchmark=benchmark, webhook_url="http://localhost:8080/", email_me=False, user=cast.researcher
        )
    assert "which is not a public address" in refused.value.message_dict["webhook_url"][0]
    assert not NotificationSettings.objects.filter(benchmark=benchmark).exclude(webhook_url="").exists()
    found, secret = notification_settings_update(
        benchmark=benchmark, webhook_url="https://93.184.215.14/hook", email_me=False, user=cast.researcher
    )
    assert found.webhook_url == "https://93.184.215.14/hook" and len(secret) == 64


@pytest.mark.django_db
def test_the_address_connected_to_is_checked_again_when_an_event_is_sent(
    settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Saved while allowed (as a name that resolved to a public address would be), refused when sent:
    the post never reaches the receiver, and the try says why."""
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    cast = make_cast()
    benchmark = make_benchmark()
    with Receiver([200]) as receiver:
        # "localhost": the name is resolved when connecting, and the address reached is loopback.
        url = receiver.url.replace("127.0.0.1", "localhost")
        notification_settings_update(benchmark=benchmark, webhook_url=url, email_me=False, user=cast.researcher)
        settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
        notification = notification_record(
            benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:1", summary="batch 1 is done", data={}
        )
        assert notification is not None
        assert notification_deliver(notification_id=notification.pk) is None
        assert receiver.received == []
        delivery = WebhookDelivery.objects.get(notification=notification)
        assert delivery.status_code is None
        assert "127.0.0.1" in delivery.error and "not a public address" in delivery.error
        assert "gave up after 1 attempts: refused:" in Notification.objects.get(pk=notification.pk).webhook_error
        # Allowed again (a lab's own network), the same URL is posted to.
        settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
        again = notification_record(
            benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:2", summary="batch 2 is done", data={}
        )
        assert again is not None
        assert notification_deliver(notification_id=again.pk) is None
        assert len(receiver.received) == 1
