"""Claim + submit cycles per second through the REST API or the HTML pages, with many annotators at once.

    python -m bench.claim_cycle [--path api|html] [--clients 64] [--seconds 20] [--rate 40] [--port 8131]
                                [--workers 4] [--threads 8] [--no-closed-loop]

Creates (drops first) a dedicated PostgreSQL database, migrates it, fills it with a benchmark of
--hits HITs (10 candidates and 2 controls each, 3 assignments per HIT), --history HITs of work done
before (a closed batch whose assignments are submitted, with their answers and labels, as a
database in use holds) and --clients annotator accounts for each run (with API tokens and
signed-in sessions), serves the platform with gunicorn on 127.0.0.1, and lets --clients threads
(one keep-alive HTTP connection each) claim and submit HITs for a fixed time. Through the API a
cycle is the claim and the submit; through the pages (--path html) it is the page of the HIT and
the form's submit, which stores the answers, claims the next HIT and redirects to it, as a
browser does. It prints cycles per second and the median and 99th
percentile of each request's and the whole cycle's latency, measured after a short warm-up, then
checks the counters against the rows.

Two runs of each side. First at a fixed offered rate, --rate R (40 by default): the clients together
start R cycles per second (an annotator spends clients / R seconds per HIT), the platform and the
floor alike; this run gives the figures (the ratio to the floor, the 99th percentile of a request's
latency). Then a closed loop, every client looping without pause, which measures the most cycles
per second each side sustains (by Little's law a cycle then takes clients / throughput seconds,
whatever the code); its figures are printed as context only (--no-closed-loop leaves it out).
--rate 0 runs the closed loop alone and takes the figure from it, as this benchmark did before.

Why the figure is taken at a fixed rate: PostgreSQL's CPU a cycle falls as the cycles a second rise
(the commits of concurrent transactions are flushed to the WAL together), so in a closed loop the
faster side pays less of the database's CPU a cycle for the same statements, and the ratio mixes
the cost of the code with the throughput it reaches. At one rate both sides sustain, each cycle
meets the same conditions. 40 cycles a second is well within what a machine half as fast as a
2-core box sustains through either path (the API's closed loop reached 150, the pages' 114, on
such a box at rest); the run says so when a side falls behind the offered rate, and then the
ratio compares unlike loads: lower --rate. The CPU time of gunicorn and of the Postgres backends
per cycle is printed for each run: on a shared machine it says what the cycle costs independently
of what else runs.

Every run starts from the same state: the database vacuumed and analysed (as autovacuum keeps one
in use), and annotators of its own, so that no run walks past the HITs an earlier run's annotators
took, nor the dead index entries their claims left. --table-statistics prints PostgreSQL's
counters a cycle per table (scans, rows fetched, buffers) for each run: where the database's work
differs between the platform and its floor.

The floor (``bench.claim_floor``), measured in the same run unless --no-floor: the statements of
one steady-state cycle are recorded from the platform itself, then a bare WSGI app serves the same
URLs under the same gunicorn to the same clients, running those statements (following the ids the
database hands back) with psycopg2 alone and answering the recorded bodies. The goal is a ratio:
the platform's CPU per cycle (gunicorn + PostgreSQL) at most 1.5 times the floor's, for the API
and the pages alike. The latency of a request at the offered rate is a ratio too: the 99th
percentile of the slower of the cycle's two requests (the claim or the page, the submit) at most 2
times the floor app's, measured the same way at the same rate in the same run. Cycles per second,
median latencies and CPU per cycle of both stay as context, with the machine described.

Celery tasks queued by submit go to Redis database --redis-db (not run inline, as in
production where workers run them), and the shared cache (sessions, throttles) to the next one
(or --cache-redis-db);
both are flushed at the end.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from bench import process_cpu_seconds, recreate_database, stop_process
from bench.floor import machine, ratio_figure

GOAL_FLOOR_RATIO = 1.5
# The 99th percentile of a request's latency at the offered rate, against the floor app's in the same
# run (module docstring).
GOAL_P99_RATIO = 2.0
# The offered rate of the run that gives the figures, in cycles a second (module docstring).
DEFAULT_RATE = 40.0
# Below this share of the offered rate a side has fallen behind it, and the ratio compares unlike loads.
SUSTAINED_SHARE = 0.95

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_bench_claim"
CANDIDATES_PER_HIT = 10


@dataclass
class ClientStats:
    claims: list[float] = field(default_factory=list)
    submits: list[float] = field(default_factory=list)
    cycles: list[float] = field(default_factory=list)
    no_work: int = 0
    errors: list[str] = field(default_factory=list)
    # The measured window: cycles that began before it (the warm-up) or ended after it are not counted
    # in the latencies.
    start_measuring: float = 0.0
    stop: float = float("inf")
    # The cycles whose work the CPU measured in the window paid for: each cycle's share of its time
    # that fell inside the window, summed. With many clients a cycle is in flight at each end of the
    # window for every client: whole cycles alone would leave their CPU without its cycles, and
    # overstate the CPU a cycle most where cycles are slowest.
    worked: float = 0.0

    def record(self, began: float, middle: float, done: float) -> None:
        """One cycle: its first request from ``began`` to ``middle``, its submit to ``done``."""
        inside = min(done, self.stop) - max(began, self.start_measuring)
        if inside > 0:
            self.worked += inside / (done - began)
        if began >= self.start_measuring and done <= self.stop:
            self.claims.append(middle - began)
            self.submits.append(done - middle)
            self.cycles.append(done - began)


@dataclass
class Pace:
    """When a client starts its next cycle: at once (``interval`` 0), or every ``interval`` seconds
    from ``next_start``, as an annotator who spends that long per HIT; one behind starts at once."""

    interval: float
    next_start: float

    def wait(self, stop: float) -> bool:
        """Sleep until the next cycle is due; False if that is past ``stop``."""
        if self.interval:
            time.sleep(max(0.0, self.next_start - time.monotonic()))
            self.next_start = max(self.next_start + self.interval, time.monotonic())
        return time.monotonic() < stop


def exchange(
    connection: http.client.HTTPConnection, method: str, path: str, body: str | None, headers: dict[str, str]
) -> tuple[http.client.HTTPResponse, bytes]:
    """One request and its response. The server closes idle keep-alive connections; like a browser,
    reconnect once and resend (safe here: every request of the cycle is idempotent)."""
    for attempt in (1, 2):
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response, response.read()
        except (ConnectionError, http.client.RemoteDisconnected):
            connection.close()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def server_environment(*, database_url: str, redis_db: int, cache_redis_db: int | None = None) -> dict[str, str]:
    """The environment of a benchmark's servers and workers: production's settings on loopback, the
    broker in Redis database ``redis_db`` and the shared cache in ``cache_redis_db`` (the next one
    by default)."""
    cache_db = redis_db + 1 if cache_redis_db is None else cache_redis_db
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "crowdlex.settings",
            "DATABASE_URL": database_url,
            "DATABASE_CONN_MAX_AGE": "600",
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-secret-key-not-for-production",
            "ALLOWED_HOSTS": "127.0.0.1",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:6379/{redis_db}",
            # As in production with several processes: sessions and throttles in a shared cache.
            "CACHE_URL": f"redis://127.0.0.1:6379/{cache_db}",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "LOG_LEVEL": "WARNING",
            # Every client works as fast as it can, far past what the throttles allow a person: no limit.
            "THROTTLE_CLAIM_RATE": "",
            "THROTTLE_SUBMIT_RATE": "",
        }
    )
    return env


def step2_hits(*, name: str, hits: int) -> tuple[Any, list[Any], list[Any]]:
    """Bulk-create a benchmark with one step-2 batch of ``hits`` HITs, one target each, every HIT with
    ten candidates and the two controls; returns (batch, HITs, items)."""
    from annotation.models import Benchmark, Candidate, Context, Target, text_digest
    from hits.models import HIT, Batch, HITItem
    from schemes.swords.items import ItemKind

    benchmark = Benchmark.objects.create(name=name)
    batch = Batch.objects.create(benchmark=benchmark, step=2, assignments_per_hit=3)
    texts = [f"Sentence number {i} says that the old house stood on a quiet hill." for i in range(hits)]
    contexts = Context.objects.bulk_create(
        [Context(benchmark=benchmark, text=text, digest=text_digest(text)) for text in texts]
    )
    offset = texts[0].index("old")
    targets = Target.objects.bulk_create(
        [Target(context=c, benchmark=benchmark, word="old", offset=offset, pos="adj") for c in contexts]
    )
    words = ["ancient", "aged", "former", "elderly", "antique", "vintage", "worn", "stale", "classic", "past"]
    candidates = Candidate.objects.bulk_create(
        [Candidate(target=t, text=w, normalized=w) for t in targets for w in words[:CANDIDATES_PER_HIT]]
    )
    hit_rows = HIT.objects.bulk_create(
        [HIT(batch=batch, target=t, part=0, assignments_required=batch.assignments_per_hit) for t in targets]
    )
    items: list[HITItem] = []
    for index, hit in enumerate(hit_rows):
        own = candidates[index * CANDIDATES_PER_HIT : (index + 1) * CANDIDATES_PER_HIT]
        rows: list[tuple[ItemKind, Candidate | None, str]] = [(ItemKind.CANDIDATE, c, c.text) for c in own]
        rows.insert(3, (ItemKind.CONTROL_TARGET, None, "old"))
        rows.insert(8, (ItemKind.CONTROL_DISTRACTOR, None, "window"))
        items += [
            HITItem(hit=hit, position=p, kind=kind, control=c is None, candidate=c, text=text)
            for p, (kind, c, text) in enumerate(rows)
        ]
    items = HITItem.objects.bulk_create(items, batch_size=5000)
    return batch, hit_rows, items


def seed_history(*, hits: int, workers: list[int]) -> None:
    """Work done before the run, as a database in use holds: a closed batch of ``hits`` HITs of
    another benchmark, each with three submitted assignments by annotators of ``workers`` (ids), their
    answers and labels.

    Without it the assignments, answers and labels tables are empty when the first server starts,
    and the statements prepared on its connections are planned for empty tables: sequential scans
    kept (a generic plan) as the tables grow, which the server measured second, planning when they
    have rows, does not pay (docs/benchmarks.md, "The claim cycle's figure at a fixed offered rate")."""
    from django.utils import timezone

    from annotation.models import Label, LabelValue
    from hits.models import Answer, Assignment, AssignmentStatus, BatchStatus

    batch, hit_rows, items = step2_hits(name="claim-cycle-history", hits=hits)
    batch.status = BatchStatus.CLOSED
    batch.save(update_fields=["status"])
    now = timezone.now()
    # Distinct annotators on each HIT, as the claim gives them.
    per_hit = min(batch.assignments_per_hit, len(workers))
    assignments = Assignment.objects.bulk_create(
        [
            Assignment(
                hit=hit,
                worker_id=workers[(index + offset) % len(workers)],
                status=AssignmentStatus.SUBMITTED,
                claimed_at=now,
                deadline=now,
                submitted_at=now,
                seconds_on_page=1.0,
            )
            for index, hit in enumerate(hit_rows)
            for offset in range(per_hit)
        ],
        batch_size=5000,
    )
    HIT = type(hit_rows[0])
    HIT.objects.filter(batch=batch).update(assignments_active=per_hit)
    by_hit: dict[int, list[Any]] = {}
    for item in items:
        by_hit.setdefault(item.hit_id, []).append(item)
    answers, labels = [], []
    for assignment in assignments:
        for item in by_hit[assignment.hit_id]:
            answers.append(Answer(assignment=assignment, item=item, value=LabelValue.ACCEPT))
            if item.candidate_id is not None:
                labels.append(
                    Label(
                        candidate_id=item.candidate_id,
                        benchmark_id=batch.benchmark_id,
                        value=LabelValue.ACCEPT,
                        step=2,
                        worker_id=assignment.worker_id,
                        assignment=assignment,
                    )
                )
    Answer.objects.bulk_create(answers, batch_size=5000)
    Label.objects.bulk_create(labels, batch_size=5000)


def seed(*, hits: int, clients: int, history: int = 0) -> list[tuple[str, str]]:
    """Bulk-create the benchmark, its HITs, the annotators and ``history`` HITs of work done before
    (``seed_history``); return their API tokens and the keys of sessions signed in as them."""
    from django.contrib.auth.models import User
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from annotation.models import Worker, WorkerKind
    from annotation.roles import ensure_groups
    from bench.claim_floor import spread_sequences

    # Ids unique across tables, so that the floor's replay can follow them (bench.claim_floor).
    spread_sequences()
    step2_hits(name="claim-cycle", hits=hits)

    _, annotators = ensure_groups()
    users = User.objects.bulk_create([User(username=f"bench{i:04d}", password="!") for i in range(clients)])
    annotators.user_set.add(*users)
    workers = Worker.objects.bulk_create([Worker(kind=WorkerKind.LOCAL, external_id=u.username, user=u) for u in users])
    tokens = Token.objects.bulk_create([Token(user=u, key=Token.generate_key()) for u in users])
    if history:
        seed_history(hits=history, workers=[worker.pk for worker in workers])
    sessions = [signed_in_session(user) for user in users]
    # Planner statistics, as autovacuum would have gathered them on a database in use.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return [(token.key, session) for token, session in zip(tokens, sessions, strict=True)]


def signed_in_session(user: Any) -> str:
    """The key of a session signed in as ``user``, as the sign-in page would have left it."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.utils import timezone

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    # The backend that signs people in (after the lockout check); a run on an older checkout finds its own.
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    try:
        from hits.signin import SIGNED_IN_KEY
    except ImportError:  # a checkout from before the count since sign-in
        pass
    else:
        session[SIGNED_IN_KEY] = timezone.now().isoformat()
    session.create()
    return str(session.session_key)


def wait_until_up(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited with code {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                connection.close()
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"gunicorn did not answer on 127.0.0.1:{port} within {timeout:.0f} s")


def client_loop(
    *,
    port: int,
    token: str,
    stop: float,
    stats: ClientStats,
    barrier: threading.Barrier,
    interval: float = 0.0,
    phase: float = 0.0,
) -> None:
    """Claim, answer every item, submit; until ``stop`` (bounded by time and by the work left).

    With ``interval`` > 0 a cycle starts every ``interval`` seconds (offset by ``phase``), as an
    annotator who spends that long per HIT would; a client that falls behind starts at once.
    """
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(path: str, body: dict[str, object]) -> tuple[int, bytes]:
        response, content = exchange(connection, "POST", path, json.dumps(body), headers)
        return response.status, content

    barrier.wait()
    pace = Pace(interval, time.monotonic() + phase)
    try:
        while pace.wait(stop):
            began = time.monotonic()
            status, body = post("/api/work/claim", {})
            claimed = time.monotonic()
            if status == 204:
                stats.no_work += 1
                time.sleep(0.2)
                continue
            if status != 200:
                stats.errors.append(f"claim {status}: {body[:200]!r}")
                time.sleep(0.2)
                continue
            assignment = json.loads(body)
            answers = {str(item["id"]): "accept" for item in assignment["items"]}
            status, body = post(
                f"/api/work/assignments/{assignment['id']}/submit", {"answers": answers, "seconds_on_page": 1.0}
            )
            if status != 200:
                stats.errors.append(f"submit {status}: {body[:200]!r}")
                continue
            stats.record(began, claimed, time.monotonic())
    except (OSError, http.client.HTTPException) as error:
        stats.errors.append(f"connection: {error!r}")
    finally:
        connection.close()


# The form's CSRF token: the secret itself is accepted as well as a masked one.
CSRF_SECRET = "benchcsrfsecretbenchcsrfsecret00"
ITEM_FIELD = re.compile(rb'name="item-(\d+)"')


def html_client_loop(
    *,
    port: int,
    session: str,
    stop: float,
    stats: ClientStats,
    barrier: threading.Barrier,
    interval: float = 0.0,
    phase: float = 0.0,
) -> None:
    """As a browser: open the HIT's page, answer every row, submit the form, follow the redirect to
    the next HIT (the submit claims it); until ``stop``. Cookies are kept as a browser keeps them
    (the session, the CSRF cookie, the messages the submit leaves for the next page)."""
    cookies = {"sessionid": session, "csrftoken": CSRF_SECRET}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(method: str, path: str, body: str | None = None) -> tuple[int, str, bytes]:
        headers = {"Cookie": "; ".join(f"{name}={value}" for name, value in cookies.items())}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        response, content = exchange(connection, method, path, body, headers)
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            value = rest.split(";", 1)[0]
            if not value or "max-age=0" in header.lower() or "1970" in header:
                cookies.pop(name, None)
            else:
                cookies[name] = value
        return response.status, response.headers.get("Location", ""), content

    barrier.wait()
    pace = Pace(interval, time.monotonic() + phase)
    try:
        status, location, body = request("POST", "/work/next", f"csrfmiddlewaretoken={CSRF_SECRET}")
        while time.monotonic() < stop:
            if status != 302 or "/work/assignments/" not in location:
                stats.no_work += 1
                time.sleep(0.2)
                status, location, body = request("POST", "/work/next", f"csrfmiddlewaretoken={CSRF_SECRET}")
                continue
            if not pace.wait(stop):
                break
            began = time.monotonic()
            status, _, page = request("GET", location)
            shown = time.monotonic()
            if status != 200:
                stats.errors.append(f"page {status}: {page[:200]!r}")
                break
            fields = [f"item-{item.decode()}=accept" for item in dict.fromkeys(ITEM_FIELD.findall(page))]
            form = "&".join([f"csrfmiddlewaretoken={CSRF_SECRET}", "seconds_on_page=1", *fields])
            status, location, body = request("POST", location, form)
            if status != 302:
                stats.errors.append(f"submit {status}: {body[:200]!r}")
                break
            stats.record(began, shown, time.monotonic())
    except (OSError, http.client.HTTPException) as error:
        stats.errors.append(f"connection: {error!r}")
    finally:
        connection.close()


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far (Linux /proc), 0 for any that is gone."""
    return sum(process_cpu_seconds(pid) or 0.0 for pid in pids)


def server_pids(server: subprocess.Popen[bytes]) -> list[int]:
    """The gunicorn master and its workers."""
    try:
        with open(f"/proc/{server.pid}/task/{server.pid}/children") as children:
            return [server.pid, *map(int, children.read().split())]
    except OSError:
        return [server.pid]


def postgres_pids(database: str) -> list[int]:
    """Backends connected to the bench database (the server's persistent connections)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [database])
        return [row[0] for row in cursor.fetchall()]


def machine_busy_seconds() -> float:
    """CPU time all processes of the machine spent busy so far (/proc/stat), in seconds."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:>7}: no samples"
    return (
        f"{name:>7}: median {statistics.median(values) * 1000:6.1f} ms   "
        f"p99 {percentile(values, 0.99) * 1000:6.1f} ms   max {max(values) * 1000:6.1f} ms"
    )


def check_counters() -> str:
    from django.db.models import Count, F, Q

    from annotation.models import Label
    from hits.models import HIT, Assignment, AssignmentStatus

    live = Q(assignments__status=AssignmentStatus.CLAIMED) | Q(
        assignments__status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED],
        assignments__filtered=False,
    )
    mismatched = (
        HIT.objects.annotate(counted=Count("assignments", filter=live)).exclude(assignments_active=F("counted")).count()
    )
    over = HIT.objects.filter(assignments_active__gt=F("assignments_required")).count()
    submitted = Assignment.objects.filter(status=AssignmentStatus.SUBMITTED).count()
    labels = Label.objects.count()
    ok = mismatched == 0 and over == 0 and labels == submitted * CANDIDATES_PER_HIT
    return (
        f"check: {submitted} submitted assignments, {labels} labels "
        f"({CANDIDATES_PER_HIT} per assignment expected), {over} HITs over-assigned, "
        f"{mismatched} HIT counters off: {'OK' if ok else 'FAILED'}"
    )


@dataclass
class Measured:
    """One server's run: each client's figures, and the CPU used in the measured window per cycle
    (ms: gunicorn, PostgreSQL backends, the clients, the whole machine)."""

    stats: list[ClientStats]
    used: list[float]
    load: tuple[float, float]
    # Transactions committed and rolled back in the bench database per cycle (pg_stat_database).
    transactions: float = 0.0
    # The cycles' work inside the measured window, in cycles (``ClientStats.worked``).
    worked: float = 0.0
    # The offered rate in cycles a second (0: a closed loop).
    rate: float = 0.0
    # With --table-statistics: per table (and the database), PostgreSQL's counters a cycle
    # (``table_statistics``), to tell where the database's work a cycle differs between two runs.
    tables: dict[str, list[float]] = field(default_factory=dict)

    @property
    def cycles(self) -> list[float]:
        return [value for stat in self.stats for value in stat.cycles]

    def report(self, args: argparse.Namespace, what: str) -> list[str]:
        """Print the run's figures; return its errors."""
        cycles, errors = self.cycles, [error for stat in self.stats for error in stat.errors]
        offered = f"offered {self.rate:.0f} cycles/s" if self.rate else "closed loop, no think time"
        print(
            f"\n{what}: {args.clients} clients ({offered}), gunicorn {args.workers} workers x {args.threads} "
            f"threads (gthread), {os.cpu_count()} CPUs, load average before {self.load[0]:.2f}, "
            f"after {self.load[1]:.2f}"
        )
        first = "claim" if args.path == "api" else "page"
        print(
            f"cycles ({first} + submit, {args.path}) in {args.seconds:.0f} s: {len(cycles)} whole, "
            f"{self.worked:.1f} counting the parts in the window of those in flight at either end"
        )
        print(report(first, [value for stat in self.stats for value in stat.claims]))
        print(report("submit", [value for stat in self.stats for value in stat.submits]))
        print(report("cycle", cycles))
        if cycles:
            used = self.used
            others = used[3] - sum(used[:3])
            print(
                f"CPU per cycle: gunicorn {used[0]:.1f} ms, postgres {used[1]:.1f} ms, clients {used[2]:.1f} ms; "
                f"other processes on the machine used {others * self.worked / 1000 / args.seconds:.2f} of "
                f"{os.cpu_count()} CPUs meanwhile"
            )
            ceiling = (os.cpu_count() or 1) * 1000 / sum(used[:3])
            print(f"CPU ceiling at this cost per cycle with the machine to itself: about {ceiling:.0f} cycles/s")
            print(f"transactions per cycle in PostgreSQL: {self.transactions:.2f}")
        if self.tables:
            print(f"a cycle in PostgreSQL's counters ({', '.join(TABLE_COUNTERS)}):")
            for table, values in sorted(self.tables.items()):
                if any(values):
                    print(f"  {table:<40} " + " ".join(f"{value:9.2f}" for value in values))
        print(f"no work: {sum(stat.no_work for stat in self.stats)}   errors: {len(errors)}")
        for error in errors[:5]:
            print(f"  {error}")
        return errors


def settle(database_url: str) -> None:
    """``VACUUM (ANALYZE)`` the bench database, as autovacuum keeps a database in use, so that every
    run starts from the same state: the dead rows and index entries a run before it left (each
    claim and submit updates its HIT's row, whose key in the claim's index changes) cleared, and the
    planner's statistics those of the rows there are now. Without it the run measured second
    walks the first's dead entries in the claim's index (twice the buffers a cycle), and the first
    plans for the tables as seeded (docs/benchmarks.md, "The claim cycle's figure at a fixed offered
    rate")."""
    import psycopg2

    connection = psycopg2.connect(database_url)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE)")
    finally:
        connection.close()


def serve_and_measure(
    command: list[str], env: dict[str, str], tokens: list[tuple[str, str]], args: argparse.Namespace, rate: float
) -> Measured:
    """Serve with ``command`` (gunicorn) and let the clients cycle through it, ``rate`` cycles a
    second offered in all (0: a closed loop; module docstring). The database is vacuumed and
    analysed first (``settle``)."""
    settle(args.database_url)
    server = subprocess.Popen(command, env=env)
    try:
        wait_until_up(args.port, server)
        load_before = os.getloadavg()
        barrier = threading.Barrier(len(tokens) + 1)
        begin = time.monotonic() + 0.5
        start_measuring, stop = begin + args.warmup, begin + args.warmup + args.seconds
        stats = [ClientStats(start_measuring=start_measuring, stop=stop) for _ in tokens]
        loop, credential = (client_loop, "token") if args.path == "api" else (html_client_loop, "session")
        threads = [
            threading.Thread(
                target=loop,
                kwargs={
                    "port": args.port,
                    credential: token if args.path == "api" else session,
                    "stop": stop,
                    "stats": stat,
                    "barrier": barrier,
                    "interval": len(tokens) / rate if rate else 0.0,
                    "phase": index / rate if rate else 0.0,
                },
                daemon=True,
            )
            for index, ((token, session), stat) in enumerate(zip(tokens, stats, strict=True))
        ]
        for thread in threads:
            thread.start()
        barrier.wait()
        # CPU used in the measured window, by process group: what the cycle costs, whatever the load.
        time.sleep(max(0.0, start_measuring - time.monotonic()))
        gunicorn, backends = server_pids(server), postgres_pids(urlparse(args.database_url).path.lstrip("/"))
        cpu_before = (cpu_seconds(gunicorn), cpu_seconds(backends), cpu_seconds([os.getpid()]), machine_busy_seconds())
        transactions_before = database_transactions()
        tables_before = table_statistics() if args.table_statistics else {}
        time.sleep(max(0.0, stop - time.monotonic()))
        cpu_after = (cpu_seconds(gunicorn), cpu_seconds(backends), cpu_seconds([os.getpid()]), machine_busy_seconds())
        transactions_after = database_transactions()
        tables_after = table_statistics() if args.table_statistics else {}
        for thread in threads:
            thread.join(timeout=60)
        load_after = os.getloadavg()
    finally:
        stop_process(server)
    # What the window's CPU paid for: the cycles' work inside it (``ClientStats.worked``).
    worked = sum(stat.worked for stat in stats)
    count = max(1e-9, worked)
    used = [(after - before) * 1000 / count for before, after in zip(cpu_before, cpu_after, strict=True)]
    return Measured(
        stats=stats,
        used=used,
        load=(load_before[0], load_after[0]),
        transactions=(transactions_after - transactions_before) / count,
        tables={
            key: [(after - before) / count for before, after in zip(tables_before.get(key, ()), values, strict=False)]
            for key, values in tables_after.items()
        },
        worked=worked,
        rate=rate,
    )


def offered_rates(args: argparse.Namespace) -> list[float]:
    """The offered rate of each run in order, 0 for the closed loop: the first gives the figures."""
    if not args.rate:
        return [0.0]
    return [args.rate] if args.no_closed_loop else [args.rate, 0.0]


def sustained(measured: Measured, args: argparse.Namespace) -> float:
    """Cycles a second the run sustained (its cycles' work inside the window over the window)."""
    return measured.worked / args.seconds


def served_ms(measured: Measured) -> str:
    """The CPU a cycle of gunicorn and PostgreSQL, each and in all."""
    return f"{measured.used[0]:.1f} + {measured.used[1]:.1f} = {sum(measured.used[:2]):.1f} ms"


def slowest_request_p99(measured: Measured) -> float:
    """The 99th percentile of the latency of the slower of a cycle's two requests, in seconds."""
    return max(
        percentile(values, 0.99)
        for values in (
            [v for s in measured.stats for v in s.claims],
            [v for s in measured.stats for v in s.submits],
        )
        if values
    )


def report_figures(args: argparse.Namespace, platform: Measured, floor: Measured | None, statements: str) -> None:
    """The FIGURE lines, from the first run: the ratio to the floor and, at an offered rate, the
    99th percentile of a request's latency; a side that fell behind the offered rate is named."""
    if platform.rate:
        slowest = slowest_request_p99(platform)
        floor_p99 = slowest_request_p99(floor) if floor is not None and floor.cycles else 0.0
        if floor_p99:
            ratio_figure(
                f"p99 latency of a request ({args.path}, {platform.rate:.0f} cycles/s offered)",
                slowest,
                floor_p99,
                goal=GOAL_P99_RATIO,
                context=f"platform {slowest * 1000:.1f} ms, floor {floor_p99 * 1000:.1f} ms (the slower of the "
                "two requests' 99th percentiles on each side)",
            )
        else:
            print(f"p99 latency of a request ({args.path}): {slowest * 1000:.1f} ms (no floor measured)")
        for name, measured in (("platform", platform), ("floor", floor)):
            if measured is not None and sustained(measured, args) < SUSTAINED_SHARE * platform.rate:
                print(
                    f"WARNING: the {name} sustained {sustained(measured, args):.1f} of the {platform.rate:.0f} "
                    "cycles/s offered: the ratio compares unlike loads (lower --rate)"
                )
    if not platform.rate:
        print(f"cycles per second ({args.path}, {args.clients} clients): {sustained(platform, args):.1f}")
    print(f"CPU per cycle, server + PostgreSQL + client ({args.path}): {sum(platform.used[:3]):.1f} ms")
    if floor is not None and floor.cycles:
        load = f"{platform.rate:.0f} cycles/s offered to each" if platform.rate else "closed loop"
        ratio_figure(
            f"claim cycle ({args.path}), CPU per cycle in gunicorn + PostgreSQL",
            sum(platform.used[:2]),
            sum(floor.used[:2]),
            goal=GOAL_FLOOR_RATIO,
            context=f"{load}: platform {served_ms(platform)} ({sustained(platform, args):.1f} cycles/s, "
            f"{platform.transactions:.2f} transactions a cycle), floor {served_ms(floor)} "
            f"({sustained(floor, args):.1f} cycles/s, {floor.transactions:.2f}); {statements}",
        )


def report_context(args: argparse.Namespace, platform: Measured, floor: Measured | None) -> None:
    """The closed loop's figures, printed as context (not FIGURE lines)."""
    print(f"cycles per second ({args.path}, {args.clients} clients): {sustained(platform, args):.1f}")
    line = f"closed loop, as context: platform {served_ms(platform)} a cycle"
    if floor is not None and floor.cycles:
        ratio = sum(platform.used[:2]) / max(1e-9, sum(floor.used[:2]))
        line += (
            f", floor {served_ms(floor)} ({sustained(floor, args):.1f} cycles/s): {ratio:.2f} x its floor "
            "(each side at its own throughput, which lowers PostgreSQL's CPU a cycle on the faster one)"
        )
    print(line)


TABLE_COUNTERS = ("seq_scan", "idx_scan", "idx_tup_fetch", "tup_ins", "tup_upd", "tup_hot", "tup_del", "blks_hit")


def table_statistics() -> dict[str, tuple[int, ...]]:
    """PostgreSQL's counters so far of each table of the bench database (and, as ``(database)``,
    the database's tuples returned and fetched, sessions begun, rows written and blocks hit):
    scans, rows, buffers."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT t.relname, coalesce(t.seq_scan, 0), coalesce(t.idx_scan, 0), coalesce(t.idx_tup_fetch, 0),"
            " t.n_tup_ins, t.n_tup_upd, t.n_tup_hot_upd, t.n_tup_del,"
            " coalesce(io.heap_blks_hit, 0) + coalesce(io.idx_blks_hit, 0) + coalesce(io.toast_blks_hit, 0)"
            " FROM pg_stat_user_tables t JOIN pg_statio_user_tables io USING (relid)"
        )
        found = {row[0]: tuple(int(value) for value in row[1:]) for row in cursor.fetchall()}
        cursor.execute(
            "SELECT tup_returned, tup_fetched, sessions, tup_inserted, tup_updated, 0, tup_deleted, blks_hit"
            " FROM pg_stat_database WHERE datname = current_database()"
        )
        # The database's own counters under the tables' names: tuples returned (as by scans), fetched
        # (by index), sessions begun (a new backend each), rows written, blocks hit.
        found["(database: returned, fetched, sessions)"] = tuple(int(value) for value in cursor.fetchone())
    return found


def database_transactions() -> int:
    """Transactions the bench database has committed and rolled back so far (PostgreSQL's
    statistics, which backends report when their transaction ends or within a second after)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", choices=["api", "html"], default="api", help="the REST API or the HTML pages")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time (after the warm-up)")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        help="offered load in cycles/s spread over the clients, of the run that gives the figures "
        f"(default {DEFAULT_RATE:.0f}; 0: the closed loop alone, every client flat out)",
    )
    parser.add_argument(
        "--no-closed-loop", action="store_true", help="leave out the closed loop run (context) after the paced one"
    )
    parser.add_argument("--hits", type=int, default=8000, help="HITs seeded (3 assignments each), enough for every run")
    parser.add_argument(
        "--history",
        type=int,
        default=2000,
        help="HITs of work done before the run (3 submitted assignments each, their answers and labels), "
        "so that no server plans its statements for empty tables (0: none)",
    )
    parser.add_argument("--port", type=int, default=8131)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--redis-db", type=int, default=3)
    parser.add_argument(
        "--cache-redis-db", type=int, default=None, help="Redis database of the shared cache (default: --redis-db + 1)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the bench database afterwards")
    parser.add_argument("--no-floor", action="store_true", help="do not measure the floor")
    parser.add_argument("--show-statements", action="store_true", help="print the floor's recorded statements")
    parser.add_argument(
        "--table-statistics",
        action="store_true",
        help="print PostgreSQL's counters a cycle per table (scans, rows, buffers) for each run",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser()
    args = parser.parse_args(argv)
    if not 1 <= args.clients <= 512 or not 0 < args.seconds <= 600:
        parser.error("--clients must be 1..512 and --seconds 0..600")

    env = server_environment(database_url=args.database_url, redis_db=args.redis_db, cache_redis_db=args.cache_redis_db)
    # The pages' static files, collected as a deployment collects them (DEBUG is off).
    static_root = tempfile.mkdtemp(prefix="crowdlex-bench-static-")
    env["STATIC_ROOT"] = static_root
    # This process seeds, and records the floor's cycle through the platform: with the servers' settings.
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection, connections

    print(f"database {args.database_url}: recreating and migrating", flush=True)
    recreate_database(args.database_url)
    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        described = machine(cursor)
    call_command("collectstatic", interactive=False, verbosity=0)
    started = time.monotonic()
    rates = offered_rates(args)
    # Each run's clients are annotators of its own, so that none starts with the work of an earlier
    # run behind it (the claim passes over the HITs an annotator already took: a later run would
    # walk further for the same claim); the first annotator records the floor's cycle.
    servings = len(rates) * (1 if args.no_floor else 2)
    tokens = seed(hits=args.hits, clients=1 + args.clients * servings, history=args.history)
    print(
        f"seeded {args.hits} HITs, {len(tokens)} annotators ({args.clients} for each of {servings} runs) and "
        f"{args.history} HITs of work done before in {time.monotonic() - started:.1f} s",
        flush=True,
    )
    recorder, tokens = tokens[0], tokens[1:]

    def clients(serving: int) -> list[tuple[str, str]]:
        return tokens[serving * args.clients : (serving + 1) * args.clients]

    connections.close_all()
    # The client's own collector runs would stall its threads and count as the server's latency:
    # what Django and the seeding left in this process is put out of their walks, as the server does.
    gc.collect()
    gc.freeze()

    options = ["-w", str(args.workers), "-k", "gthread", "--threads", str(args.threads)]
    options += ["-b", f"127.0.0.1:{args.port}", "--log-level", "warning"]
    script_file = ""
    if not args.no_floor:
        from bench.claim_floor import record_cycle, save

        users = list(User.objects.filter(username__startswith="bench").select_related("worker").order_by("username"))
        every = [recorder, *tokens]
        script = record_cycle(args.path, users, [token for token, _ in every], [session for _, session in every])
        script_file = os.path.join(static_root, "floor-script.pickle")
        save(script, script_file)
        connections.close_all()
        if args.show_statements:
            for step in script.steps.values():
                print(f"{step.name}: {len(step.statements)} statements, answered {step.status}")
                for statement in step.statements:
                    print(f"  {' '.join(statement.sql.split())[:150]}")
    platform_command = [sys.executable, "-m", "gunicorn", "crowdlex.wsgi", *options]
    floor_env = {**env, "FLOOR_SCRIPT": script_file}
    floor_command = [sys.executable, "-m", "gunicorn", "bench.claim_floor:app", *options]
    # The run that gives the figures (at the offered rate, or the closed loop alone with --rate 0),
    # then the closed loop as context (module docstring).
    runs: list[tuple[Measured, Measured | None]] = []
    errors: list[str] = []
    serving = 0
    for rate in rates:
        platform = serve_and_measure(platform_command, env, clients(serving), args, rate)
        serving += 1
        errors += platform.report(args, "the platform")
        floor: Measured | None = None
        if script_file:
            floor = serve_and_measure(floor_command, floor_env, clients(serving), args, rate)
            serving += 1
            errors += floor.report(args, "its floor (the same statements from a bare WSGI app)")
        runs.append((platform, floor))
    print(f"machine: {described}")
    statements = ""
    if script_file:
        first, second = ("claim", "submit") if args.path == "api" else ("page", "form")
        counts = len(script.steps[first].statements), len(script.steps[second].statements)
        statements = f"{counts[0]} + {counts[1]} statements a cycle"
    for index, (platform, floor) in enumerate(runs):
        if not platform.cycles:
            continue
        if index == 0:
            report_figures(args, platform, floor, statements)
        else:
            report_context(args, platform, floor)
    print(check_counters())

    import redis

    redis.Redis.from_url(env["CELERY_BROKER_URL"]).flushdb()
    redis.Redis.from_url(env["CACHE_URL"]).flushdb()
    connections.close_all()
    if not args.keep:
        recreate_database(args.database_url, create=False)
    shutil.rmtree(static_root, ignore_errors=True)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
