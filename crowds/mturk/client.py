"""The MTurk service as this platform speaks to it: endpoints, the boto3 client, request tokens,
the ExternalQuestion, qualifications and HIT type parameters (docs/design.md §4).

Credentials come from the standard AWS chain (environment variables, shared profile, instance
role): nothing secret is stored in the database or the settings. Every create carries a
``UniqueRequestToken`` derived from the rows it creates (``request_token``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from django.conf import settings
from django.urls import reverse

from crowds.interface.base import BackendError

if TYPE_CHECKING:
    from mypy_boto3_mturk import MTurkClient
    from mypy_boto3_mturk.type_defs import QualificationRequirementTypeDef

    from hits.models import HIT, Batch

logger = logging.getLogger(__name__)

# The crowd's name (``Batch.backend``, ``Worker.kind``), for the package's own modules.
NAME = "mturk"
SANDBOX = "sandbox"
PRODUCTION = "production"
ENDPOINTS = {
    SANDBOX: "https://mturk-requester-sandbox.us-east-1.amazonaws.com",
    PRODUCTION: "https://mturk-requester.us-east-1.amazonaws.com",
}
# Where workers find the HITs, for links shown to researchers.
WORKER_SITES = {SANDBOX: "https://workersandbox.mturk.com", PRODUCTION: "https://worker.mturk.com"}
REQUESTER_SITES = {SANDBOX: "https://requestersandbox.mturk.com", PRODUCTION: "https://requester.mturk.com"}

# MTurk's system qualification types (SWORDS used all three).
QUALIFICATION_APPROVAL_RATE = "000000000000000000L0"
QUALIFICATION_LOCALE = "00000000000000000071"
QUALIFICATION_APPROVED_HITS = "00000000000000000040"

# MTurk opens the ExternalQuestion with this assignmentId while the worker only previews the HIT.
PREVIEW_ASSIGNMENT_ID = "ASSIGNMENT_ID_NOT_AVAILABLE"
EXTERNAL_QUESTION_SCHEMA = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
)
# Setting a HIT's expiration to any past time expires it at once.
EXPIRE_NOW = datetime(2015, 1, 1, tzinfo=UTC)
# MTurk forbids growing a HIT from under 10 to 10 or more assignments, and charges 40 % on 10+.
LARGE_HIT_ASSIGNMENTS = 10
NOTIFY_BATCH_SIZE = 100
RETRYABLE_CODES = {"ServiceFault", "ServiceUnavailable", "ThrottlingException", "Throttling", "InternalFailure"}


class MTurkError(BackendError):
    """MTurk refused or failed a call; ``str()`` is MTurk's own message with the operation named."""


def environment_for(*, sandbox: bool) -> str:
    return SANDBOX if sandbox else PRODUCTION


def endpoint_url(environment: str) -> str:
    """Where calls for the sandbox or production go: ``MTURK_ENDPOINT_URL`` (or botocore's
    ``AWS_ENDPOINT_URL_MTURK``) when set, so a test or a staging run never reaches Amazon by accident."""
    return settings.MTURK_ENDPOINT_URL or ENDPOINTS[environment]


def mturk_client(environment: str) -> MTurkClient:
    """A boto3 MTurk client for the sandbox or production, retrying throttled calls with backoff.

    Throttling and 5xx answers are retried by botocore itself (``MTURK_RETRY_MODE``, up to
    ``MTURK_MAX_ATTEMPTS`` attempts in all), so callers see them only when MTurk stays busy.
    boto3 is imported here: it takes half a second, which every command and web process paid at
    start-up when it was imported with this module.
    """
    import boto3
    from botocore.config import Config

    retries: Any = {"mode": settings.MTURK_RETRY_MODE, "total_max_attempts": settings.MTURK_MAX_ATTEMPTS}
    config = Config(
        retries=retries,
        connect_timeout=10,
        read_timeout=60,
    )
    return boto3.client(
        "mturk", region_name=settings.MTURK_REGION, endpoint_url=endpoint_url(environment), config=config
    )


def request_token(*parts: object) -> str:
    """A UniqueRequestToken (at most 64 characters) that is the same every time for the same parts.

    Callers include the batch's creation time among the parts: MTurk remembers tokens for 24
    hours, and ids alone would repeat in a fresh database.
    """
    digest = hashlib.sha256(":".join(str(part) for part in parts).encode("utf-8")).hexdigest()
    return f"crowdlex-{digest[:48]}"


def hit_token(*, batch: Batch, hit: HIT, round: int) -> str:
    return request_token("hit", batch.pk, batch.created_at.isoformat(), hit.pk, round)


def external_url(hit: HIT) -> str:
    """The page MTurk frames for this HIT: the platform's public base URL plus the HIT page path."""
    return settings.SITE_URL + reverse("mturk-hit", kwargs={"token": hit.public_token})


def external_question_xml(url: str, *, frame_height: int | None = None) -> str:
    height = settings.MTURK_FRAME_HEIGHT if frame_height is None else frame_height
    return (
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_SCHEMA}">'
        f"<ExternalURL>{escape(url)}</ExternalURL>"
        f"<FrameHeight>{int(height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


# MTurk compares qualification values as 32-bit integers.
MAX_APPROVED_HITS = 2**31 - 1


@dataclass(frozen=True)
class Qualifications:
    """Who may accept a batch's HITs. A None turns a requirement off.

    Read from ``Batch.qualifications``: a missing key takes SWORDS's value, ``null`` or ``false``
    turns the requirement off, e.g. ``{"approved_hits": null}`` for a sandbox test account.
    """

    approval_rate: int | None = 98
    locale: str | None = "US"
    approved_hits: int | None = 10000

    KEYS = ("approval_rate", "locale", "approved_hits")

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Qualifications:
        data = dict(data or {})
        unknown = sorted(set(data) - set(cls.KEYS))
        if unknown:
            raise ValueError(f"qualifications: unknown key(s) {', '.join(unknown)}; known: {', '.join(cls.KEYS)}")
        defaults = cls()
        values: dict[str, Any] = {}
        for key in ("approval_rate", "approved_hits"):
            raw = data.get(key, getattr(defaults, key))
            if raw is None or raw is False:
                values[key] = None
            elif isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
                raise ValueError(f"qualifications: {key} must be a whole number >= 0 or null, not {raw!r}")
            else:
                values[key] = raw
        if values["approval_rate"] is not None and values["approval_rate"] > 100:
            raise ValueError(f"qualifications: approval_rate is a percentage, not {values['approval_rate']!r}")
        locale = data.get("locale", defaults.locale)
        if locale is None or locale is False:
            values["locale"] = None
        elif not isinstance(locale, str) or len(locale) != 2 or not locale.isalpha():
            raise ValueError(f"qualifications: locale must be a two-letter country code such as 'US', not {locale!r}")
        else:
            values["locale"] = locale.upper()
        return cls(**values)

    @classmethod
    def parse_overrides(cls, text: str, base: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``approval_rate=95,locale=off`` on top of ``base``: the JSON to store on the batch."""
        result = dict(base or {})
        for part in filter(None, (piece.strip() for piece in text.split(","))):
            key, sep, value = part.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or key not in cls.KEYS:
                raise ValueError(f"qualifications: {part!r} is not KEY=VALUE with KEY one of {', '.join(cls.KEYS)}")
            if value.lower() in {"off", "none", "null", ""}:
                result[key] = None
            elif key == "locale":
                result[key] = value
            else:
                try:
                    result[key] = int(value)
                except ValueError:
                    raise ValueError(f"qualifications: {key} must be a whole number or off, not {value!r}") from None
        cls.from_json(result)
        return result

    def as_json(self) -> dict[str, Any]:
        return {"approval_rate": self.approval_rate, "locale": self.locale, "approved_hits": self.approved_hits}

    def requirements(self) -> list[QualificationRequirementTypeDef]:
        """MTurk QualificationRequirements. Workers who lack one may preview but not accept."""
        found: list[QualificationRequirementTypeDef] = []
        if self.approval_rate is not None:
            found.append(
                {
                    "QualificationTypeId": QUALIFICATION_APPROVAL_RATE,
                    "Comparator": "GreaterThan",
                    "IntegerValues": [self.approval_rate],
                    "ActionsGuarded": "Accept",
                }
            )
        if self.locale is not None:
            found.append(
                {
                    "QualificationTypeId": QUALIFICATION_LOCALE,
                    "Comparator": "EqualTo",
                    "LocaleValues": [{"Country": self.locale}],
                    "ActionsGuarded": "Accept",
                }
            )
        if self.approved_hits is not None:
            found.append(
                {
                    "QualificationTypeId": QUALIFICATION_APPROVED_HITS,
                    "Comparator": "GreaterThan",
                    "IntegerValues": [self.approved_hits],
                    "ActionsGuarded": "Accept",
                }
            )
        return found

    def describe(self) -> list[str]:
        lines = []
        if self.approval_rate is not None:
            lines.append(f"approval rate > {self.approval_rate} %")
        if self.locale is not None:
            lines.append(f"locale = {self.locale}")
        if self.approved_hits is not None:
            lines.append(f"HITs approved > {self.approved_hits:,}")
        return lines or ["none"]


def batch_environment(batch: Batch) -> str:
    """The endpoint a batch lives on: the one it was published to, else the MTURK_SANDBOX setting."""
    environment = batch.external.get("environment")
    if environment in ENDPOINTS:
        return str(environment)
    return environment_for(sandbox=settings.MTURK_SANDBOX)
