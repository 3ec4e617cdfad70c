"""Prolific's REST API as this platform speaks to it: the HTTP client, the study's parameters,
the participant's entry URL and the submission statuses (docs/prolific.md).

Calls go to ``PROLIFIC_API_URL`` (Prolific's API by default) with ``Authorization: Token …``
from ``PROLIFIC_API_TOKEN``; the token is never stored in the database. Throttled (429) and
failing (5xx) answers and lost connections are retried with backoff by urllib3's ``Retry``, but
only for calls that are safe to repeat: reads, the PATCH of a study's places (an absolute
number) and a submission's transitions (Prolific documents them as idempotent). Creating a study,
a bonus payment or a message, paying bonuses, and a study's transitions (a second PUBLISH is
refused) are sent once: the callers make them safe to run again.
"""

from __future__ import annotations

import hashlib
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

import requests
from django.conf import settings
from django.urls import reverse
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from crowds.interface.base import BackendError

if TYPE_CHECKING:
    from hits.models import Batch

# The crowd's name (``Batch.backend``, ``Worker.kind``), for the package's own modules.
NAME = "prolific"
API = "/api/v1"
# Statuses Prolific gives a submission (its spelling), and what this platform calls them.
AWAITING_REVIEW = "AWAITING REVIEW"
APPROVED = "APPROVED"
REJECTED = "REJECTED"
RETURNED = "RETURNED"
TIMED_OUT = "TIMED-OUT"
# Study statuses: a draft is UNPUBLISHED; PUBLISH makes it ACTIVE; STOP ends it.
UNPUBLISHED = "UNPUBLISHED"
# The query parameters Prolific fills in on the study's URL.
URL_PARAMETERS = "PROLIFIC_PID={%PROLIFIC_PID%}&STUDY_ID={%STUDY_ID%}&SESSION_ID={%SESSION_ID%}"
# Prolific asks for a category with every rejection, and a message of at least 100 characters.
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
# Our controls are Prolific's attention checks.
DEFAULT_REJECTION_CATEGORY = "FAILED_CHECK"
MIN_REJECTION_MESSAGE = 100
RETRY_STATUSES = (429, 500, 502, 503, 504)
# Prolific asks for whole minutes, at least one.
DEFAULT_ESTIMATED_MINUTES = 1


class ProlificError(BackendError):
    """Prolific refused or failed a call; ``str()`` is Prolific's own message with the operation named."""


def _detail(response: requests.Response) -> str:
    """Prolific's error text: ``{"error": {"detail": ..., "title": ...}}``, else the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:500] or response.reason
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        detail = error.get("detail") or error.get("title") or error
        if isinstance(detail, dict):
            return "; ".join(f"{key}: {value}" for key, value in detail.items())
        return str(detail)
    return str(error)


class ProlificClient:
    """One base URL and token; two sessions, one retrying (calls safe to repeat), one not."""

    def __init__(self, *, base_url: str, token: str, max_attempts: int, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        retry = Retry(
            total=max(0, max_attempts - 1),
            backoff_factor=0.5,
            status_forcelist=RETRY_STATUSES,
            allowed_methods=None,
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._retrying = self._session(retry)
        self._once = self._session(Retry(total=0, raise_on_status=False))

    def _session(self, retry: Retry) -> requests.Session:
        session = requests.Session()
        adapter = HTTPAdapter(max_retries=retry)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def call(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        json: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        repeatable: bool = True,
    ) -> dict[str, Any]:
        """One call; every failure becomes a ProlificError carrying Prolific's message."""
        if not self.token:
            raise ProlificError(
                "No Prolific API token: set PROLIFIC_API_TOKEN to a token of your workspace "
                "(create one in your Prolific settings).",
                operation=operation,
                code="NoToken",
            )
        url = path if path.startswith("http") else f"{self.base_url}{path}"
        session = self._retrying if repeatable else self._once
        try:
            response = session.request(
                method,
                url,
                json=json,
                params=params,
                headers={"Authorization": f"Token {self.token}", "Accept": "application/json"},
                timeout=self.timeout,
            )
        except requests.RequestException as error:
            raise ProlificError(
                f"Could not reach Prolific ({self.base_url}) for {operation}: {error}",
                operation=operation,
                code=type(error).__name__,
                retryable=True,
            ) from error
        if response.status_code >= 400:
            status = response.status_code
            if status == 401:
                message = "Prolific refused the API token (PROLIFIC_API_TOKEN): " + _detail(response)
            else:
                message = f"Prolific refused {operation} ({status}): {_detail(response)}"
            raise ProlificError(message, operation=operation, code=str(status), retryable=status in RETRY_STATUSES)
        if not response.content:
            return {}
        try:
            body = response.json()
        except ValueError:
            raise ProlificError(
                f"Prolific answered {operation} with something that is not JSON", operation=operation
            ) from None
        return body if isinstance(body, dict) else {"results": body}


_clients: dict[tuple[Any, ...], ProlificClient] = {}


def prolific_client() -> ProlificClient:
    """The client for the current settings, shared by the process (a sync makes hundreds of calls)."""
    key = (
        settings.PROLIFIC_API_URL,
        settings.PROLIFIC_API_TOKEN,
        settings.PROLIFIC_MAX_ATTEMPTS,
        settings.PROLIFIC_TIMEOUT_SECONDS,
    )
    found = _clients.get(key)
    if found is None:
        found = _clients[key] = ProlificClient(
            base_url=settings.PROLIFIC_API_URL,
            token=settings.PROLIFIC_API_TOKEN,
            max_attempts=settings.PROLIFIC_MAX_ATTEMPTS,
            timeout=settings.PROLIFIC_TIMEOUT_SECONDS,
        )
    return found


def study_token(batch: Batch) -> str:
    """The study's ``internal_name``: the same for the same batch, so a publish that died after
    creating the study finds it again instead of making a second one."""
    digest = hashlib.sha256(f"study:{batch.pk}:{batch.created_at.isoformat()}".encode()).hexdigest()
    return f"crowdlex-batch-{batch.pk}-{digest[:16]}"


def entry_url(batch: Batch) -> str:
    """The page Prolific sends participants to, with the placeholders Prolific fills in."""
    return settings.SITE_URL + reverse("prolific-study", kwargs={"token": batch.public_token}) + "?" + URL_PARAMETERS


def completion_url(code: str) -> str:
    return f"{settings.PROLIFIC_COMPLETION_URL}?cc={code}"


def cents(amount: Decimal) -> int:
    """Prolific counts money in the currency's minor unit."""
    return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def estimated_minutes(batch: Batch) -> int:
    return max(1, int(batch.external.get("estimated_minutes") or DEFAULT_ESTIMATED_MINUTES))


def study_params(batch: Batch, *, places: int, code: str) -> dict[str, Any]:
    """The body of ``POST /api/v1/studies/`` for a batch (also what the dry run prints)."""
    return {
        "name": batch.title,
        "internal_name": study_token(batch),
        "description": batch.description,
        "external_study_url": entry_url(batch),
        "prolific_id_option": "url_parameters",
        "completion_codes": [{"code": code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
        "total_available_places": places,
        "estimated_completion_time": estimated_minutes(batch),
        "maximum_allowed_time": max(estimated_minutes(batch), int(batch.assignment_duration.total_seconds() // 60)),
        "reward": cents(batch.reward),
        "device_compatibility": ["desktop", "tablet", "mobile"],
    }


def rejection_category(batch: Batch) -> str:
    category = str(batch.external.get("rejection_category") or DEFAULT_REJECTION_CATEGORY)
    return category if category in REJECTION_CATEGORIES else DEFAULT_REJECTION_CATEGORY
