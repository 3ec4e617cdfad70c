"""The small interface every crowd backend implements (docs/conventions.md, "Registries").

A backend speaks to one crowd. It records its own bookkeeping (remote ids) on the rows it
publishes, and reports the crowd's view of assignments; the domain decisions (which work counts,
what gets approved, when to re-collect) stay in ``crowds.services.publishing`` so that every crowd
follows the same rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    from django import forms
    from django.http import HttpRequest, HttpResponse
    from django.urls import URLPattern

    from annotation.models import Worker
    from crowdlex.progress import Progress
    from crowds.interface.costs import CostEstimate, FeeRule


# The interface sits below hits (docs/architecture.md): a batch, a HIT and an assignment are hits'
# rows and a publish plan the crowd selectors'; each backend, above hits, types them as they are.
Batch: TypeAlias = Any
HIT: TypeAlias = Any
Assignment: TypeAlias = Any
PublishPlan: TypeAlias = Any


class BackendError(Exception):
    """A crowd refused or failed an operation; the message is the crowd's own, ready to show."""

    def __init__(self, message: str, *, operation: str = "", code: str = "", retryable: bool = False) -> None:
        super().__init__(message)
        self.operation = operation
        self.code = code
        # True when trying again later may succeed (the crowd was busy or out of reach).
        self.retryable = retryable


class CrowdActionRefused(Exception):
    """The operation is not allowed in the current state; the message says why, for the researcher or worker."""


# How a crowd's workers arrive (``CrowdBackend.arrival``): signed in here, claiming HITs from the
# local queue, or sent by the crowd's own site to the batch's public page with their ids in the URL.
ARRIVAL_QUEUE = "queue"
ARRIVAL_LINK = "link"

# What a crowd can do beyond publishing, syncing and approving (``CrowdBackend.capabilities``); the
# pages offer, and the services attempt, only what the batch's crowd declares.
BLOCK = "block"  # keep a worker from its work on the crowd itself
BONUS = "bonus"  # pay a bonus through the crowd
NOTIFY = "notify"  # message its workers through the crowd
EXTEND = "extend"  # offer more assignments of a posted HIT (re-collection)
EXPIRE = "expire"  # take postings down before their time
QUALIFICATION = "qualification"  # a qualification type on the crowd that follows the benchmark's test
CAPABILITIES = frozenset({BLOCK, BONUS, NOTIFY, EXTEND, EXPIRE, QUALIFICATION})


class RemoteStatus:
    """Assignment states as a remote crowd reports them (MTurk's spelling; each backend translates)."""

    SUBMITTED = "Submitted"
    APPROVED = "Approved"
    REJECTED = "Rejected"
    # Given back, or out of time, on the crowd (Prolific's RETURNED and TIMED-OUT): never paid, so
    # never counted, and the crowd offers the place again by itself.
    RETURNED = "Returned"
    TIMED_OUT = "TimedOut"


# What the crowd withdrew: work saved here under such an assignment must not count.
WITHDRAWN_STATUSES = frozenset({RemoteStatus.RETURNED, RemoteStatus.TIMED_OUT})


@dataclass(frozen=True)
class RemoteAssignment:
    """One assignment as the crowd knows it."""

    external_id: str
    worker_external_id: str
    hit_external_id: str
    status: str
    submitted_at: datetime | None = None


@dataclass
class PublishResult:
    hits_created: int = 0
    hits_existing: int = 0
    hit_type_id: str = ""
    messages: list[str] = field(default_factory=list)


@dataclass
class NotifyResult:
    notified: int = 0
    failures: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CrowdPreview:
    """How a crowd shows a HIT to a worker who has not taken it (the batch's worker preview,
    docs/batches.md): ``page`` renders it (given the researcher's bar as extra context), ``viewer``
    is what the page's frame knows of its reader (a crowd's worker has no account here),
    ``public_url`` the crowd's own preview once published ("" before)."""

    page: Callable[[HttpRequest, HIT, Mapping[str, Any]], HttpResponse]
    viewer: Mapping[str, Any]
    public_url: Callable[[Batch, HIT], str]


def crowd_worker_viewer() -> dict[str, Any]:
    """What a preview's frame knows of a paid crowd's worker: nobody with an account here."""
    from django.contrib.auth.models import AnonymousUser

    return {"user": AnonymousUser(), "is_researcher": False, "is_annotator": False}


class CrowdBackend(Protocol):
    """What the services need from a crowd. Every method is safe to retry."""

    name: str
    # What the pages call it ("Amazon Mechanical Turk"), and for short ("MTurk").
    label: str
    short_label: str
    # What its publish makes and ``PublishResult.hit_type_id`` names ("HIT type", "study").
    posting_name: str
    # True when the crowd pays workers and keeps its own record of assignments: completion is then
    # confirmed by a sync that finds the work in the crowd's list, never by the submission alone.
    remote: bool
    # How its workers arrive (ARRIVAL_QUEUE or ARRIVAL_LINK), and the ``Worker.kind`` of those who
    # arrive by its link ("" for the queue's signed-in annotators).
    arrival: str
    worker_kind: str
    # What the pages call one of those workers ("Prolific participant").
    worker_label: str
    # What it can do (a subset of CAPABILITIES).
    capabilities: frozenset[str]

    @property
    def approval_hold(self) -> timedelta:
        """How long a sync waits after a submission before approving or rejecting it, so that
        filtering has seen the worker's later work."""
        ...

    @property
    def reconcile_grace(self) -> timedelta:
        """How long work saved here may wait to appear in the crowd's list before it is flagged unknown."""
        ...

    # The shortest rejection message the crowd accepts (Prolific: 100 characters).
    rejection_message_min_length: int
    # Keys of ``Batch.external`` a follow-up batch (step 3) takes from its parent, so that its work
    # reaches the same crowd as the earlier step's (MTurk: the endpoint).
    inherited_settings: tuple[str, ...]
    # What pausing a batch means on this crowd, in words for the batch page (docs/design.md §16).
    pause_meaning: str

    @property
    def fees(self) -> FeeRule:
        """The crowd's fee on rewards and bonuses."""
        ...

    def worker_preview(self) -> CrowdPreview:
        """The page this crowd's workers see of a HIT before they take it."""
        ...

    def public_urls(self) -> list[URLPattern]:
        """The pages its workers arrive at (ARRIVAL_LINK), served at the site's root; none for the queue."""
        ...

    def publish_form(self, *, batch: Batch, data: Mapping[str, Any] | None = None) -> forms.Form:
        """The crowd page's form of this crowd's publish options, initialised from the batch."""
        ...

    def publish_options(self, *, form: forms.Form) -> dict[str, Any]:
        """The options of a valid ``publish_form``, as ``publish_prepare`` takes them (JSON-able)."""
        ...

    def publish_prepare(self, *, batch: Batch, options: Mapping[str, Any]) -> list[str]:
        """Check the options and keep them on the (unsaved) batch; returns the fields changed. An
        unknown or bad option, or one that can no longer change, raises ``CrowdActionRefused``."""
        ...

    def publish_api_fields(self) -> dict[str, Any]:
        """Its publish options as serializer fields of the publish API's body (named apart from other crowds')."""
        ...

    def publish_api_options(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Its publish options from the API body's validated fields (other crowds' fields left aside)."""
        ...

    def publish_where(self, *, batch: Batch, options: Mapping[str, Any]) -> str:
        """Where publishing with these options sends the work, in words ("MTurk's sandbox")."""
        ...

    def publish_plan(
        self,
        *,
        plan: PublishPlan,
        batch: Batch,
        pending: Sequence[HIT],
        sandbox: bool | None,
        median_seconds: float | None,
    ) -> PublishPlan:
        """Fill in what publishing ``pending`` would send this crowd (``plan.details``, its first
        URL, its warnings) without calling it; ``sandbox``: the endpoint asked for, where there is one."""
        ...

    def crowd_page_context(self, *, batch: Batch, environment: str) -> dict[str, Any]:
        """What the batch's crowd page shows of this crowd: its links, ids and notes."""
        ...

    def publish(self, *, batch: Batch, progress: Progress | None = None) -> PublishResult:
        """Make the batch's HITs available to workers; HITs already published are left as they are.
        ``progress(HITs posted, HITs to post)`` as it goes, where posting takes a call per HIT."""
        ...

    def hits_added(self, *, batch_id: int) -> None:
        """HITs were added to a batch already published (a follow-up batch grows): offer them (a
        crowd that publishes queues its publish task; the local queue offers them by itself)."""
        ...

    def sync(self, *, batch: Batch) -> list[RemoteAssignment] | None:
        """The crowd's view of the batch's submitted assignments, or None if this platform is the record."""
        ...

    def expire(self, *, batch: Batch) -> int:
        """Stop offering the batch's HITs now; returns how many postings were expired."""
        ...

    def withdraw(self, *, batch: Batch, hits: Sequence[HIT]) -> int:
        """Stop offering what is left of these HITs of the batch (their targets need no more work);
        returns how many postings were expired."""
        ...

    def pause(self, *, batch: Batch) -> None:
        """Stop handing out the batch's work to new workers; work already taken may still be submitted."""
        ...

    def resume(self, *, batch: Batch, paused_at: datetime) -> None:
        """Hand the batch's work out again after a pause that began at ``paused_at``."""
        ...

    def approve(self, *, assignment: Assignment, message: str) -> None: ...

    def reject(self, *, assignment: Assignment, message: str) -> None: ...

    def bonus(self, *, worker: Worker, assignment: Assignment, amount: Decimal, reason: str, token: str) -> None: ...

    def block(self, *, worker: Worker, reason: str) -> None: ...

    def notify(self, *, workers: Sequence[Worker], subject: str, text: str) -> NotifyResult: ...

    def recollect(self, *, hit: HIT, missing: int, budget: Decimal | None = None) -> int:
        """Offer ``missing`` more assignments of a HIT; returns how many new ones were posted.

        ``budget``: dollars this may spend, fees included (None: no limit); a crowd that would
        spend more posts nothing and raises ``BackendError`` saying so."""
        ...

    def price(
        self, *, assignments_per_hit: Sequence[int], reward: Decimal, seconds_per_assignment: float | None = None
    ) -> CostEstimate:
        """What HITs of these sizes cost on this crowd, each assignment paid ``reward``, with its fee.

        The one cost rule of a crowd: the batch form's preview, the publish page and the batch page
        all price work through it, so the three show the same figures."""
        ...

    def cost_estimate(self, *, batch: Batch, median_seconds: float | None = None) -> CostEstimate:
        """``price`` of the batch's HITs."""
        ...
