"""The permission matrix: every URL pattern of the project (pages, API, admin) by every role, two
researchers on two benchmarks, against one table of decisions (docs/permissions.md).

The URL resolver is walked, so a new URL without a line in ``DECISIONS`` (or, for the admin, a model
without one in ``ADMIN_MODELS``) fails the test: each new URL must be decided. Path parameters are
filled from the fixtures by the segment before them (``batches/<pk>`` takes a batch of the benchmark
under test). Every request runs in a savepoint that is rolled back, so each cell sees the same data.
Asserted in every cell: no 5xx, and an /api/ error is JSON with a detail (a missing credential a
401 saying how to authenticate). Per cell, the role's outcome: allowed, sent to sign in, 403, or 404;
a researcher without a grant gets 404 on every benchmark-scoped URL of the other benchmark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.db.models import Model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern
from rest_framework.authtoken.models import Token

from analysis import services as analysis_services
from analysis.browser import saved_view_save
from analysis.plot_files import plot_names
from annotation.access import Role, access_grant
from annotation.activity import activity_record
from annotation.importers.jobs import import_job_create, import_job_run
from annotation.models import ActivityKind, Benchmark, Candidate, Target, Worker
from annotation.roles import ensure_groups
from annotation.services import benchmark_import
from hits.models import HIT, AssignmentTelemetry, Batch, Bonus, CrowdLimits, HITFlag, Mitigations, Pledge, RemoteHIT
from hits.qualification import GoldItem, qualification_attempt_start, qualification_build
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from review.models import ReviewSettings, WorkerFlag
from tests.base import make_user

pytestmark = pytest.mark.django_db(transaction=False)

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# ---- who ----------------------------------------------------------------------------------------

ROLES = ["anonymous", "annotator", "owner", "viewer", "stranger", "superuser"]

# What a role may do at a URL: a level of the table below.
PUBLIC = "public"  # anyone, signed in or not
SIGNED_IN = "signed-in"  # any account
ANNOTATOR = "annotator"  # annotators (and researchers, who may try the queue)
OWN_WORK = "own-work"  # the annotator whose assignment it is; anyone else's reads as missing
RESEARCHER = "researcher"  # any researcher; not benchmark-scoped (lists show only their rows)
STAFF = "staff"  # the admin's own pages for any researcher (staff)
SUPERUSER = "superuser"  # superusers only (the admin of accounts, tokens, sign-in records)
SCOPED = {Role.VIEWER: "viewer+", Role.EDITOR: "editor+", Role.OWNER: "owner+"}


@dataclass(frozen=True)
class Decision:
    """What each method of a URL allows: ``{method: level}``. ``scheme`` picks the benchmark
    the path is filled from (a scheme's own page); ``both_ways`` runs it on each benchmark."""

    methods: dict[str, str]
    scheme: str = "swords"
    # role (or "METHOD role") -> outcome, where a level cannot say
    outcome: dict[str, str] = field(default_factory=dict)

    @property
    def scoped(self) -> bool:
        return any(level in SCOPED.values() for level in self.methods.values())


def D(*pairs: str, scheme: str = "swords", **outcome: str) -> Decision:
    methods = dict(zip(pairs[::2], pairs[1::2], strict=True))
    return Decision(methods, scheme, outcome)


V, E, O = SCOPED[Role.VIEWER], SCOPED[Role.EDITOR], SCOPED[Role.OWNER]  # noqa: E741

# ---- the table: one decision per URL name --------------------------------------------------------

DECISIONS: dict[str, Decision] = {
    # the project
    "home": D("GET", SIGNED_IN),
    "healthz": D("GET", PUBLIC),
    "login": D("GET", PUBLIC),
    # Signing out ends on the sign-in page, whoever asks.
    "logout": D("POST", PUBLIC, **dict.fromkeys(ROLES, "sign-in")),
    "api-token": D("GET", SIGNED_IN, "POST", SIGNED_IN),
    "api-schema": D("GET", RESEARCHER),
    "api-auth-token": D("POST", PUBLIC),
    "admin-login": D("GET", PUBLIC),
    # benchmarks (pages)
    "benchmark-list": D("GET", RESEARCHER, "POST", RESEARCHER),
    "benchmark-detail": D("GET", V),
    "benchmark-access": D("GET", V, "POST", O),
    "benchmark-access-revoke": D("POST", O),
    "benchmark-candidates-add": D("POST", E),
    "benchmark-import": D("GET", E, "POST", E),
    "import-job": D("GET", V),
    "import-delete": D("GET", O, "POST", O),
    # benchmarks (API)
    "api-benchmark-list": D("GET", RESEARCHER),
    "api-benchmark-detail": D("GET", V),
    "api-benchmark-access": D("GET", V, "POST", O),
    "api-benchmark-access-member": D("DELETE", O),
    "api-benchmark-import": D("POST", E),
    "api-benchmark-candidates-add": D("POST", E),
    "api-import-list": D("GET", V),
    "api-import-delete": D("DELETE", O),
    "api-target-level": D("PUT", E),
    # the annotator's queue and the MTurk page (not a researcher's matter)
    "work-home": D("GET", ANNOTATOR),
    "work-next": D("GET", ANNOTATOR, "POST", ANNOTATOR),
    "work-mine": D("GET", ANNOTATOR),
    "work-project-next": D("POST", ANNOTATOR),
    "work-assignment": D("GET", OWN_WORK, "POST", OWN_WORK),
    "work-return": D("POST", OWN_WORK),
    "work-flag": D("POST", OWN_WORK),
    "mturk-hit": D("GET", PUBLIC),
    # The database-id address of a published, open HIT or study sends on to its token URL (307).
    "mturk-hit-by-id": D("GET", PUBLIC),
    "api-work-claim": D("POST", ANNOTATOR),
    "api-work-history": D("GET", ANNOTATOR),
    "api-work-projects": D("GET", ANNOTATOR),
    "api-work-submit": D("POST", OWN_WORK),
    "api-work-return": D("POST", OWN_WORK),
    "api-work-flag": D("POST", OWN_WORK),
    "api-work-draft": D("GET", OWN_WORK, "POST", OWN_WORK),
    # batches and HITs (pages)
    "batch-list": D("GET", V, "POST", E),
    "benchmark-assignments": D("GET", V),
    "batch-detail": D("GET", V),
    "batch-close": D("POST", E),
    "batch-reopen": D("POST", E),
    "batch-pause": D("POST", E),
    "batch-resume": D("POST", E),
    # The budget cap and notifications: editors set the webhook and their e-mail; a cap change is the
    # owners' (the form refuses it to an editor), an empty post changes nothing.
    "benchmark-operations": D("GET", V, "POST", E),
    "benchmark-webhook-secret": D("POST", E),
    "api-batch-pause": D("POST", E),
    "api-batch-resume": D("POST", E),
    "api-benchmark-budget": D("GET", V),
    "api-benchmark-notifications": D("GET", V),
    "batch-export": D("GET", V),
    "hit-detail": D("GET", V),
    "benchmark-flags": D("GET", V),
    "candidate-exclude": D("POST", E),
    # batches and HITs (API)
    "api-batch-list": D("GET", RESEARCHER, "POST", RESEARCHER),
    "api-batch-detail": D("GET", V),
    "api-batch-close": D("POST", E),
    "api-batch-hits": D("GET", V),
    "api-hit-detail": D("GET", V),
    "api-assignment-list": D("GET", RESEARCHER),
    "api-benchmark-assignments": D("GET", V),
    # crowds: reading is a viewer's, reviewing an editor's, spending an owner's
    "batch-crowd": D("GET", V),
    "batch-crowd-publish": D("POST", O),
    "batch-crowd-sync": D("POST", O),
    "batch-crowd-expire": D("POST", E),
    "batch-crowd-policy": D("POST", O),
    "batch-crowd-notify": D("POST", E),
    "assignment-crowd-approve": D("POST", O),
    "assignment-crowd-reject": D("POST", E),
    "assignment-crowd-bonus": D("POST", O),
    "worker-crowd-block": D("POST", E),
    "api-batch-publish-plan": D("GET", V),
    "api-batch-publish": D("POST", O),
    "api-batch-sync": D("POST", O),
    "api-batch-expire": D("POST", E),
    "api-batch-crowd-status": D("GET", V),
    "api-batch-review-policy": D("POST", O),
    "api-batch-notify": D("POST", E),
    "api-assignment-approve": D("POST", O),
    "api-assignment-reject": D("POST", E),
    "api-assignment-bonus": D("POST", O),
    "api-worker-crowd-block": D("POST", E),
    # review
    "pipeline-progress": D("GET", V),
    "pipeline-refresh": D("POST", E),
    "pipeline-workers": D("GET", V),
    "pipeline-review-settings": D("POST", E),
    "pipeline-flag-clear": D("POST", E),
    "pipeline-worker-block": D("POST", E),
    "pipeline-worker-unblock": D("POST", E),
    "api-pipeline-progress": D("GET", V),
    "api-pipeline-refresh": D("POST", E),
    "api-flag-list": D("GET", V),
    "api-review-settings": D("GET", V, "PATCH", E),
    "api-flag-clear": D("POST", E),
    "api-worker-block": D("POST", E),
    "api-worker-unblock": D("POST", E),
    # analysis: figures and exports are a viewer's; marks, splits and the leaderboard an editor's
    "analysis-statistics": D("GET", V),
    "analysis-reannotation": D("POST", E),
    "analysis-evaluation": D("GET", V, "POST", E),
    # Sending a system's unscored substitutes to be judged spends money; re-scoring replaces figures.
    "analysis-evaluation-judge": D("POST", E),
    "analysis-evaluation-rescore": D("POST", E),
    "analysis-exports": D("GET", V, "POST", V),
    "analysis-sws-suggestions": D("GET", V, scheme="sws"),
    "analysis-proposals": D("GET", V),
    "analysis-export-direct": D("GET", V),
    "analysis-export-download": D("GET", V),
    "analysis-export-restart": D("POST", V),
    "api-benchmark-statistics": D("GET", V),
    "api-benchmark-source-yield": D("GET", V),
    "api-benchmark-agreement": D("GET", V),
    "api-benchmark-filter-audit": D("GET", V),
    "api-benchmark-reannotation": D("PUT", E),
    "api-benchmark-exports": D("GET", V, "POST", V),
    "api-benchmark-export": D("GET", V),
    "api-benchmark-suggestions": D("GET", V, scheme="sws"),
    "api-benchmark-proposals": D("GET", V),
    "api-benchmark-splits": D("GET", V, "POST", E),
    "api-benchmark-evaluations": D("GET", V, "POST", E),
    "api-benchmark-evaluation-judgements": D("GET", V, "POST", E),
    "api-benchmark-evaluation-rescore": D("POST", E),
    "api-export-detail": D("GET", V),
    "api-import-job": D("GET", V),
    "api-export-download": D("GET", V),
    "api-export-restart": D("POST", V),
    "analysis-plot": D("GET", V),
    "api-benchmark-plots": D("GET", V),
    "api-benchmark-plot": D("GET", V),
    # the workbench: targets, settings (the reward in them is the owners'), the activity log, pages
    # that refresh themselves, cloning and pricing a batch (a dry run of creating one: editors)
    "target-list": D("GET", V),
    # the data browser: its tables and their CSV are a viewer's; saving a view changes no data (a
    # viewer's too), deleting or renaming another's saved view an editor's
    "data-browser": D("GET", V),
    **{f"data-{table}": D("GET", V) for table in ("items", "candidates", "labels", "hits", "workers")},
    **{f"data-{table}-csv": D("GET", V) for table in ("items", "candidates", "labels", "hits", "workers")},
    "data-view-save": D("POST", V),
    "data-view-delete": D("POST", E),
    "data-view-rename": D("POST", E),
    "target-detail": D("GET", V),
    # adjudication: the queue and an item are read by viewers; deciding, resolving and applying
    # decisions to the figures change what the benchmark says: editors'
    "adjudication-queue": D("GET", V),
    "adjudication-item": D("GET", V),
    "adjudication-decide": D("POST", E),
    "adjudication-resolve": D("POST", E),
    "adjudication-apply": D("POST", E),
    "benchmark-settings": D("GET", V, "POST", E),
    "api-benchmark-settings": D("GET", V, "PATCH", E),
    "benchmark-activity": D("GET", V),
    "api-benchmark-activity": D("GET", V),
    "benchmark-live": D("GET", V),
    "batch-live": D("GET", V),
    "batch-clone": D("POST", E),
    "api-batch-clone": D("POST", E),
    "api-batch-preview": D("POST", RESEARCHER),
    # task design: read by viewers, changed by editors; the worker's preview is the benchmark's
    # researchers' (an unpublished batch's page is nobody else's to see)
    "batch-design": D("GET", V, "POST", E),
    "design-template": D("GET", V, "POST", E),
    "batch-worker-preview": D("GET", V),
    "api-batch-design": D("GET", V, "PUT", E),
    "api-benchmark-design": D("GET", V, "PUT", E),
    # the qualification test: taken as annotators take HITs (a researcher too, but not the test of a
    # benchmark they may not see: it is missing, as the benchmark is); read by viewers, built,
    # switched and reset by editors
    "qualification-take": D("GET", ANNOTATOR, "POST", ANNOTATOR, stranger="missing"),
    "api-work-qualification": D("GET", ANNOTATOR, stranger="missing"),
    "api-work-qualification-submit": D("POST", ANNOTATOR, stranger="missing"),
    "qualification-detail": D("GET", V),
    "qualification-build": D("POST", E),
    "qualification-active": D("POST", E),
    "qualification-reset": D("POST", E),
    "api-qualification": D("GET", V, "PUT", E),
    "api-qualification-attempts": D("GET", V),
    # Prolific's participants have no account: the study page is open, as the MTurk page is. A post
    # without the signed token of a session it opened is refused to anyone, signed in or not.
    "prolific-study": D("GET", PUBLIC, "POST", PUBLIC, **{f"POST {role}": "forbidden" for role in ROLES}),
    "prolific-study-by-id": D("GET", PUBLIC),
    "api-docs": D("GET", RESEARCHER),
    # undoing a closed batch, an exclusion or a block from the activity log: as doing it, an editor's
    "activity-undo": D("POST", E),
    # People (docs/people.md): annotators' accounts are the platform's, not a benchmark's, so every
    # researcher lists them and makes new ones. A sign-in link or a reset signs in as the person: once
    # they have signed in, it needs the editor's role in a benchmark they worked in (the stranger has
    # none in the other benchmark: 403). Naming someone for a batch is an editor's, as creating it is.
    "people": D("GET", RESEARCHER, "POST", RESEARCHER),
    "people-import": D("GET", RESEARCHER, "POST", RESEARCHER),
    "people-detail": D("GET", RESEARCHER),
    "people-signin-link": D("POST", E, stranger="forbidden"),
    "people-password-reset": D("POST", E, stranger="forbidden"),
    "people-batch-add": D("POST", RESEARCHER),
    "api-people": D("GET", RESEARCHER, "POST", RESEARCHER),
    "api-people-import": D("POST", RESEARCHER),
    "api-person-signin-link": D("POST", E, stranger="forbidden"),
    "api-person-password-reset": D("POST", E, stranger="forbidden"),
    "api-batch-annotators": D("POST", E),
    # The page a one-time link opens is for someone not signed in yet: open to all (a wrong link says so).
    "people-signin": D("GET", PUBLIC),
    # the admin's own pages
    "admin:index": D("GET", STAFF),
    "admin:app_list": D("GET", STAFF),
    "admin:login": D("GET", PUBLIC),
    # The admin's sign-out shows its page to whoever is not signed in to it, and sends staff on to sign in.
    "admin:logout": D("POST", PUBLIC, **dict.fromkeys(["owner", "viewer", "stranger", "superuser"], "sign-in")),
    "admin:password_change": D("GET", STAFF),
    "admin:password_change_done": D("GET", STAFF),
    "admin:jsi18n": D("GET", STAFF),
    # A bare autocomplete names no field to complete: refused to anyone signed in to the admin.
    "admin:autocomplete": D("GET", STAFF, **dict.fromkeys(["owner", "viewer", "stranger", "superuser"], "forbidden")),
    # The shortcut to a row's page on the site: no model here has one, so it is missing for all.
    "admin:view_on_site": D("GET", STAFF, **dict.fromkeys(["owner", "viewer", "stranger", "superuser"], "missing")),
    # Sign-in records are written by sign-ins alone: not even a superuser adds one.
    "admin:axes_accessattempt_add": D("GET", SUPERUSER, superuser="forbidden"),
    "admin:axes_accessfailurelog_add": D("GET", SUPERUSER, superuser="forbidden"),
    "admin:axes_accesslog_add": D("GET", SUPERUSER, superuser="forbidden"),
    # Anything else under /admin/: the admin's own 404, for staff; the rest are sent to sign in.
    "admin:admin/<url>": D("GET", STAFF, **dict.fromkeys(["owner", "viewer", "stranger", "superuser"], "missing")),
    "admin:auth_user_password_change": D("GET", SUPERUSER),
    # Rows written by services alone (the activity log, tests built by qualification_build, attempts
    # started by taking the test, pledges and telemetry sent by the HIT page): nobody adds one in the admin.
    **{
        f"admin:{model}_add": D(
            "GET", STAFF, **dict.fromkeys(["owner", "viewer", "stranger", "superuser"], "forbidden")
        )
        for model in (
            "annotation_activity",
            "hits_qualificationtest",
            "hits_qualificationattempt",
            "hits_pledge",
            "hits_assignmenttelemetry",
        )
    },
    # The activity log is what happened: only a superuser removes an entry.
    "admin:annotation_activity_delete": D("GET", SUPERUSER),
}

# The admin of each registered model: SCOPED models open to researchers for their benchmarks (rows
# seen as a viewer, changed and deleted with the role given), the rest to superusers alone.
ADMIN_MODELS: dict[str, Role | None] = {
    "annotation.benchmark": Role.OWNER,
    "annotation.context": Role.EDITOR,
    "annotation.target": Role.EDITOR,
    "annotation.candidate": Role.EDITOR,
    "annotation.label": Role.EDITOR,
    "annotation.worker": None,
    "annotation.activity": Role.EDITOR,  # read-only for all; deleting is the superuser's (DECISIONS)
    "hits.batch": Role.EDITOR,
    "hits.remotehit": Role.EDITOR,
    "hits.bonus": Role.OWNER,
    "hits.crowdlimits": Role.OWNER,
    "hits.hit": Role.EDITOR,
    "hits.assignment": Role.EDITOR,
    "hits.hitflag": Role.EDITOR,
    "hits.qualificationtest": Role.EDITOR,
    "hits.qualificationattempt": Role.EDITOR,
    "hits.mitigations": Role.EDITOR,  # as in the review settings
    "hits.pledge": Role.EDITOR,  # read-only rows
    "hits.assignmenttelemetry": Role.EDITOR,  # read-only rows  # deleting an attempt resets it, as on the test's page
    "review.workerflag": Role.EDITOR,
    "review.reviewsettings": Role.EDITOR,
    "analysis.exportjob": Role.EDITOR,
    "auth.user": None,
    "auth.group": None,
    "authtoken.tokenproxy": None,
    "axes.accessattempt": None,
    "axes.accessfailurelog": None,
    "axes.accesslog": None,
}


def admin_decision(name: str) -> Decision | None:
    found = re.fullmatch(r"admin:(\w+?)_(\w+)_(changelist|add|history|delete|change)", name)
    old = re.fullmatch(r"admin:admin/(\w+)/(\w+)/<path:object_id>/", name)
    if old is not None:  # the admin's old address of a row: a redirect to its change page, for any id
        found = old
    if found is None:
        return None
    app, model = found.groups()[:2]
    page = found.group(3) if old is None else "redirect"
    label = f"{app}.{model}"
    if label not in ADMIN_MODELS:
        return None
    change_role = ADMIN_MODELS[label]
    if page == "redirect":
        return D("GET", STAFF)
    if change_role is None:
        return D("GET", SUPERUSER)
    if page in ("changelist", "add"):
        return D("GET", STAFF)
    return D("GET", SCOPED[Role.VIEWER] if page in ("change", "history") else SCOPED[change_role])


# ---- walking the resolver ------------------------------------------------------------------------


@dataclass(frozen=True)
class Url:
    name: str
    route: str  # the route as written, parameters included, e.g. "api/batches/<int:pk>/"
    params: tuple[str, ...]


def _walk(patterns: list[Any], prefix: str = "", namespace: str = "") -> Iterator[Url]:
    for pattern in patterns:
        route = prefix + _route(pattern.pattern)
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _walk(pattern.url_patterns, route, inner)
        elif isinstance(pattern, URLPattern):
            view = getattr(pattern.callback, "view_class", pattern.callback)
            if view.__module__.startswith("tests."):
                # A test-only crowd's page (the toy panel, tests/crowds/toy/): the product's URLs are decided here.
                continue
            name = f"{namespace}{pattern.name}" if pattern.name else f"{namespace}{route}"
            yield Url(name, route, tuple(re.findall(r"<(?:\w+:)?(\w+)>", route)))


def _route(pattern: Any) -> str:
    if isinstance(pattern, RoutePattern):
        return str(pattern)
    # Regex patterns (the admin's app list, static files): named groups as <name>.
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", str(pattern)).lstrip("^").rstrip("$").replace("\\", "")


def every_url() -> list[Url]:
    found = {url.name: url for url in _walk(get_resolver().url_patterns)}
    # The admin's sign-in is routed twice (throttled first): one decision for the route before it.
    found["admin-login"] = replace(found.pop("admin/login/"), name="admin-login")
    return sorted(found.values(), key=lambda url: url.name)


def decision_for(url: Url) -> Decision | None:
    return DECISIONS.get(url.name) or admin_decision(url.name)


# ---- the two benchmarks --------------------------------------------------------------------------

LINES = [
    {
        "context": f"Maya was a bright student number {n}, and her teachers expected her to study medicine.",
        "target": "bright",
        "offset": 11,
        "pos": "adj",
        "candidates": [{"text": "clever", "labels": ["accept", "accept", "reject"]}, "shining", "gifted", "smart"],
    }
    for n in range(3)
]


@dataclass
class World:
    users: dict[str, User]
    benchmarks: dict[str, Benchmark]  # "a", "b" (swords), "sws"
    objects: dict[tuple[str, str], Any]  # (benchmark key, kind) -> row or value


def _world(tmp_path: Path) -> World:
    ensure_groups()
    ada = make_user("ada", researcher=True)
    ben = make_user("ben", researcher=True)
    vic = make_user("vic", researcher=True)
    sue = make_user("sue", researcher=True)
    sue.is_superuser = True
    sue.save()
    alice = make_user("alice")
    bob = make_user("bob")
    users = {"ada": ada, "ben": ben, "vic": vic, "sue": sue, "alice": alice, "bob": bob}

    benchmarks: dict[str, Benchmark] = {}
    objects: dict[tuple[str, str], Any] = {}
    data = tmp_path / "words.jsonl"
    data.write_text("\n".join(json.dumps(line) for line in LINES) + "\n")
    for key, owner, annotator in (("a", ada, alice), ("b", ben, bob)):
        benchmark_import(path_or_file=data, benchmark_name=f"bench-{key}", created_by=owner)
        benchmark = Benchmark.objects.get(name=f"bench-{key}")
        assert benchmark.members.get().user == owner  # made by a researcher: theirs
        access_grant(benchmark=benchmark, user=vic, role=Role.VIEWER, by=owner)
        benchmarks[key] = benchmark
        targets = list(Target.objects.filter(benchmark=benchmark).order_by("id"))
        local = hits_generate(benchmark=benchmark, step=2, seed=1, targets=targets[:-1], created_by=owner)
        crowd = hits_generate(
            benchmark=benchmark, step=2, seed=1, targets=targets[-1:], backend="mturk", created_by=owner
        )
        worker = Worker.objects.get(user=annotator)
        done = assignment_claim_next(worker=worker, batch=local)
        assert done is not None
        hit = done.hit
        assignment_submit(assignment=done, answers=dict.fromkeys(hit.items.values_list("pk", flat=True), "accept"))
        open_claim = assignment_claim_next(worker=worker, batch=local)
        assert open_claim is not None
        crowd_hit = crowd.hits.first()
        assert crowd_hit is not None
        RemoteHIT.objects.create(hit=crowd_hit, external_id=f"REMOTE{key.upper()}", max_assignments=3)
        flag = WorkerFlag.objects.create(benchmark=benchmark, worker=worker, reason="controls")
        HITFlag.objects.create(assignment=done, reason="other", note="odd")
        Mitigations.objects.create(benchmark=benchmark, pledge=True)
        Pledge.objects.create(worker=worker, benchmark=benchmark, assignment=done)
        AssignmentTelemetry.objects.create(assignment=done, data={"version": 1})
        Bonus.objects.create(assignment=done, worker=worker, amount="0.10", reason="thanks", token=f"t-{key}")
        CrowdLimits.objects.create(benchmark=benchmark)
        ReviewSettings.objects.get_or_create(benchmark=benchmark)
        job = analysis_services.export_job_create(benchmark=benchmark, format="labels-csv", created_by=owner)
        analysis_services.export_job_run(job_id=job.pk)
        job.refresh_from_db()
        assert job.status == "done", job.error
        upload = SimpleUploadedFile("more.jsonl", data.read_bytes())
        import_job = import_job_create(upload=upload, benchmark_name=benchmark.name, created_by=owner)
        import_job_run(job_id=import_job.pk)
        context = "The bright student solved it."
        gold = [GoldItem(context, "bright", 4, "clever", "accept"), GoldItem(context, "bright", 4, "table", "reject")]
        test = qualification_build(benchmark=benchmark, items=gold, length=2, pass_mark=1.0, created_by=owner)
        # Started, not submitted: the annotator's queue asks them to finish it, refusing nothing.
        attempt = qualification_attempt_start(test=test, worker=worker)
        prolific = Batch.objects.create(
            benchmark=benchmark, step=2, backend="prolific", external={"study_id": key * 24}
        )
        HIT.objects.create(batch=prolific, target=targets[0], part=0, assignments_required=1)
        activity = activity_record(benchmark=benchmark, kind=ActivityKind.BENCHMARK_CREATED, summary="made", by=owner)
        saved_view = saved_view_save(benchmark=benchmark, table="labels", name="kept", query="", by=owner)
        plots = plot_names(benchmark)
        assert plots, "a SWORDS benchmark draws plots"
        objects.update(
            {
                (key, "batch"): local,
                (key, "crowd-batch"): crowd,
                (key, "hit"): hit,
                (key, "mturk-hit"): crowd_hit,
                (key, "assignment"): done,
                (key, "open-assignment"): open_claim,
                (key, "worker"): worker,
                (key, "flag"): flag,
                (key, "candidate"): Candidate.objects.filter(target__benchmark=benchmark).first(),
                (key, "target"): targets[0],
                (key, "origin"): benchmark.imports.get().origin,
                (key, "job"): job,
                (key, "import-job"): import_job,
                (key, "member"): vic,
                (key, "attempt"): attempt,
                (key, "prolific-batch"): prolific,
                (key, "plot"): plots[0],
                (key, "activity"): activity,
                (key, "saved-view"): saved_view,
                (key, "person"): annotator,
            }
        )
    benchmark_import(path_or_file=FIXTURES / "sws_small.json", benchmark_name="bench-sws", fmt="sws", created_by=ada)
    benchmarks["sws"] = Benchmark.objects.get(name="bench-sws")
    access_grant(benchmark=benchmarks["sws"], user=vic, role=Role.VIEWER, by=ada)
    objects[("sws", "member")] = vic
    # A row for each superuser-only admin, so its pages answer for a row that exists.
    Token.objects.create(user=vic)
    sign_in = {"username": "vic", "ip_address": "127.0.0.1", "user_agent": "x", "path_info": "/", "http_accept": "*/*"}
    AccessAttempt.objects.create(**sign_in, failures_since_start=1)
    AccessLog.objects.create(**sign_in)
    AccessFailureLog.objects.create(**sign_in)
    return World(users, benchmarks, objects)


# Who plays each role on each benchmark: the stranger owns the other one.
CAST = {
    "a": {"annotator": "alice", "owner": "ada", "viewer": "vic", "stranger": "ben", "superuser": "sue"},
    "b": {"annotator": "bob", "owner": "ben", "viewer": "vic", "stranger": "ada", "superuser": "sue"},
    "sws": {"annotator": "alice", "owner": "ada", "viewer": "vic", "stranger": "ben", "superuser": "sue"},
}


def _admin_object(world: World, key: str, model: type[Model]) -> Any:
    """A row of ``model`` in benchmark ``key`` (the admin's object pages)."""
    if model is Worker:
        return world.objects[(key, "worker")]
    if model is User:
        return world.users["vic"]
    path = getattr(model, "benchmark_path", None)
    if path is None:  # not a benchmark's: any row
        return model._default_manager.order_by("pk").first()
    rows = model._default_manager.filter(**{path or "pk": world.benchmarks[key].pk})
    row = rows.order_by("pk").first()
    assert row is not None, f"no {model.__name__} in benchmark {key} for its admin pages"
    return row


def fill(url: Url, world: World, key: str) -> str:
    """The URL with its parameters taken from benchmark ``key``'s fixtures."""
    objects = world.objects
    path = url.route
    for param in url.params:
        before = path.split("<", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        value: Any
        if param == "name":
            value = world.benchmarks[key].name
        elif param == "origin":
            value = objects[(key, "origin")]
        elif param == "target_id":
            value = objects[(key, "target")].pk
        elif param in ("user_id", "username"):
            member = objects[(key, "member")]
            value = member.pk if param == "user_id" else member.username
        elif param == "assignment_id":
            annotators_own = url.name.startswith(("work-", "api-work-"))
            value = objects[(key, "open-assignment" if annotators_own else "assignment")].pk
        elif param == "hit_id":
            value = objects[(key, "mturk-hit")].pk
        elif param == "token":
            # The crowd pages' public tokens: a HIT's on MTurk, a batch's on Prolific.
            crowd_kind = "mturk-hit" if url.name.startswith("mturk") else "prolific-batch"
            value = objects[(key, crowd_kind)].public_token
        elif param == "view_id":
            value = objects[(key, "saved-view")].pk
        elif param == "activity_id":
            value = objects[(key, "activity")].pk
        elif param == "person_id":
            value = objects[(key, "person")].pk
        elif param == "uidb64":
            value = "MQ"
        elif param == "worker_id":
            value = objects[(key, "worker")].pk
        elif param == "flag_id":
            value = objects[(key, "flag")].pk
        elif param == "attempt_id":
            value = objects[(key, "attempt")].pk
        elif param == "batch_id":
            # The annotator's project start takes a local batch; the crowd pages a Prolific one.
            value = objects[(key, "batch" if url.name == "work-project-next" else "prolific-batch")].pk
        elif param == "plot":
            value = objects[(key, "plot")]
        elif param == "file_type":
            value = "svg"
        elif param == "job_id":
            value = objects[(key, "import-job" if url.name in ("import-job", "api-import-job") else "job")].pk
        elif param in ("format", "export_format"):
            value = "labels-csv"
        elif param == "app_label":
            value = "hits"
        elif param == "url":
            value = "nowhere/"
        elif param == "id":
            value = world.users["vic"].pk
        elif param == "content_type_id":
            value = ContentType.objects.get_for_model(Benchmark).pk
        elif param == "object_id":
            model = _admin_model(url)
            value = world.benchmarks[key].pk if model is None else _admin_object(world, key, model).pk
        elif param == "pk":
            kinds = {
                "batches": "crowd-batch" if "crowd" in url.name or "publish" in url.name else "batch",
                "hits": "hit",
                "assignments": "assignment",
                "workers": "worker",
                "flags": "flag",
                "candidates": "candidate",
                "targets": "target",
            }
            value = objects[(key, kinds[before])].pk
        else:
            raise AssertionError(f"{url.name}: no fixture fills <{param}>")
        path = re.sub(rf"<(?:\w+:)?{param}>", str(value), path, count=1)
    return "/" + path


def _admin_model(url: Url) -> type[Model] | None:
    found = re.fullmatch(r"admin:(\w+?)_(\w+)_(history|delete|change)", url.name) or re.fullmatch(
        r"admin:admin/(\w+)/(\w+)/<path:object_id>/", url.name
    )
    if found is None:
        return None
    for model in admin.site._registry:
        if (model._meta.app_label, model._meta.model_name) == found.groups()[:2]:
            return model
    return None


# ---- outcomes ------------------------------------------------------------------------------------


def expected(level: str, role: str, *, in_admin: bool) -> str:
    """allowed, sign-in, forbidden or missing: what ``role`` gets at a URL of ``level``."""
    if level == PUBLIC:
        return "allowed"
    if role == "anonymous":
        return "sign-in"
    if level == SIGNED_IN:
        return "allowed"
    if level == ANNOTATOR:
        return "allowed"
    if level == OWN_WORK:
        return "allowed" if role == "annotator" else "missing"
    if role == "annotator":
        # The admin sends anyone who is not staff to its own sign-in.
        return "sign-in" if in_admin else "forbidden"
    if level in (RESEARCHER, STAFF):
        return "allowed"
    if level == SUPERUSER:
        return "allowed" if role == "superuser" else "forbidden"
    need = next(role_ for role_, name in SCOPED.items() if name == level)
    held = {"owner": Role.OWNER, "superuser": Role.OWNER, "viewer": Role.VIEWER, "stranger": None}[role]
    if held is None:
        return "missing"
    return "allowed" if held >= need else "forbidden"


def outcome_of(response: Any, *, api: bool) -> str:
    status = response.status_code
    assert status < 500, f"{status}"
    if api and status >= 400:
        # One error shape on every /api/ path (docs/api.md): JSON with a detail sentence.
        assert response["Content-Type"].startswith("application/json"), f"{status} {response['Content-Type']}"
        assert "detail" in response.json(), f"{status} without a detail"
    if status in (301, 302) and "login" in response.get("Location", ""):
        return "sign-in"
    # Every /api/ path asks a caller without credentials for them: 401, saying how (never a 403).
    if api and status == 401:
        assert response.get("WWW-Authenticate"), "a 401 says how to authenticate"
        return "sign-in"
    if status == 403:
        return "forbidden"
    if status == 404:
        return "missing"
    return "allowed"


def _request(client: Client, method: str, path: str) -> Any:
    if path.startswith("/api/"):
        return client.generic(method, path, "{}", content_type="application/json")
    if method == "GET":
        return client.get(path)
    return client.generic(method, path, "", content_type="application/x-www-form-urlencoded")


@pytest.fixture
def world(tmp_path: Path, settings: Any) -> World:
    settings.MEDIA_ROOT = str(tmp_path)
    return _world(tmp_path)


def test_every_url_has_a_decision() -> None:
    undecided = [f"{url.name} ({url.route})" for url in every_url() if decision_for(url) is None]
    assert undecided == [], "decide who may open these URLs in DECISIONS (or ADMIN_MODELS)"
    registered = {f"{model._meta.app_label}.{model._meta.model_name}" for model in admin.site._registry}
    assert registered == set(ADMIN_MODELS), "decide the admin of these models in ADMIN_MODELS"


def test_the_permission_matrix(world: World) -> None:
    clients = {}
    for key, cast in CAST.items():
        clients[(key, "anonymous")] = Client()
        for role, username in cast.items():
            clients[(key, role)] = Client()
            clients[(key, role)].force_login(world.users[username])
    failures: list[str] = []
    cells = 0
    for url in every_url():
        decision = decision_for(url)
        assert decision is not None, url.name
        # A URL with parameters runs on both benchmarks (each role played by the cast of that one).
        keys = [decision.scheme] if decision.scheme != "swords" else ["a", "b"] if url.params else ["a"]
        for key in keys:
            path = fill(url, world, key)
            for role in ROLES:
                client = clients[(key, role)]
                if "logout" in url.name and role != "anonymous":
                    # Signing out ends the session: a client of its own, so the others stay signed in.
                    client = Client()
                    client.force_login(world.users[CAST[key][role]])
                for method, level in decision.methods.items():
                    want = (
                        decision.outcome.get(f"{method} {role}")
                        or decision.outcome.get(role)
                        or expected(level, role, in_admin=url.name.startswith("admin"))
                    )
                    cache.clear()  # throttles count per user: every cell starts afresh
                    with transaction.atomic():
                        try:
                            response = _request(client, method, path)
                            got = outcome_of(response, api=path.startswith("/api/"))
                        except AssertionError as error:
                            got = f"5xx {error}"
                        transaction.set_rollback(True)
                    cells += 1
                    if role == "stranger" and "name" in url.params and got != "missing":
                        # Whatever the table says, another's benchmark by name is never there for a
                        # researcher, on the annotators' side (the qualification test) as well.
                        failures.append(f"{method} {path} [{url.name}] as stranger: {got}, not 404")
                    if got != want:
                        failures.append(f"{method} {path} [{url.name}] as {role}: {got}, decided {want}")
    print(f"permission matrix: {cells} cells")
    assert failures == [], "\n".join(failures)
