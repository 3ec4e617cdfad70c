"""The soak: production's topology in miniature under load and faults, then an audit of the data.

    python -m bench.soak [--submissions 10000] [--annotators 200] [--max-seconds 420]

Creates (drops first) a dedicated PostgreSQL database, fills it with a step-2 benchmark (10
candidates and 2 controls per HIT, 3 assignments per HIT) and --annotators accounts with API
tokens, and starts what production runs: two gunicorn servers on two loopback ports (each
-w 2 -k gthread --threads 4, DEBUG off), two Celery workers (separate processes, prefork, late
acknowledgement, Redis database --redis-db as the broker) and Celery beat (the refresh sweep).

Each annotator is a thread that claims, answers and submits through the REST API, sending its
requests to the two servers in turn, as a load balancer would, with no pause between HITs. One
in ten annotators accepts every row (fails the distractor control), so the refresh has spam to
filter and slots to re-open; targets that complete step 2 get step-3 HITs, which the annotators
claim too. Mixed in: one claim in 20 is returned instead of submitted, and one submit in 20 is
sent twice at once, to both servers. A dropped connection is resent once, as a browser does.

Faults, at a quarter, half and three quarters of the submissions (or of --max-seconds): one
gunicorn worker process is killed (SIGKILL); one Celery worker (its main process and its pool
process) is killed while it is inside a refresh's transaction, and started again as a process
supervisor would; and PostgreSQL is restarted (``pg_ctlcluster VERSION main restart``: needs
root, and ends every connection to the cluster, other databases' too; --no-database-restart
leaves it out).

The load stops after --submissions acknowledged submits or --max-seconds. Once the queue has
drained (no refresh waiting, running or owed), the audit: every acknowledged submit is stored
once (its answers and labels, none twice); no HIT holds more valid assignments than it needs,
and every slot counter equals its rows; labels equal answers on candidate rows; a whole refresh
(run in a transaction, rolled back) changes nothing; and no request failed, during the restart
or otherwise. It exits 1 if the audit fails.

The floor of the same work (unless --no-floor), on the same machine in the same run, once the audit
is done and the platform's processes are stopped: the refresh's (``bench.refresh_backlog``: the
backlog one refresh took in during the soak, the load's submits over the refreshes that ran, is
submitted again with no worker running and the refresh of its touched work run by psycopg2 alone,
rolled back: this process's and its backend's CPU over the backlog's submits), then the claim
cycle's (``bench.claim_floor``: a steady-state API claim and submit recorded from the platform, its
statements run by a bare WSGI app) served from the same two servers, workers, threads and ports to
as many annotators of its own looping without pause for --floor-seconds, on fresh step-2 HITs of a
benchmark of their own (the soak's batches closed first; its step-3 HITs hold other items): the CPU
of gunicorn and PostgreSQL a cycle. The figure is the soak's CPU per submit (gunicorn, Celery,
PostgreSQL) over the floor's, against 2 x; submits a second are context. The floor leaves out what
the soak mixes in beside the cycle (returns, doubled submits, the faults' recovery, the bot
signals, the figures' warm after a refresh).

PostgreSQL's transactions and rows written per submit are printed in any case; with --account the
transactions are told apart by process and Celery task, from a log of every statement of the soak's
database, and the rows written by table (``bench.soak_transactions``).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench import figure, process_cpu_seconds, recreate_database, soak_transactions, stop_process
from bench.claim_cycle import (
    ClientStats,
    client_loop,
    cpu_seconds,
    machine_busy_seconds,
    postgres_pids,
    seed,
    server_environment,
    server_pids,
    wait_until_up,
)
from bench.floor import machine, ratio_figure

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_bench_soak"
QUEUE = "celery"
SPAMMER_EVERY = 10
RETURN_EVERY = 20
DUPLICATE_EVERY = 20
# What the annotators know of the benchmark step2_hits builds: its target word and its candidates.
TARGET_WORD = "old"
CANDIDATE_WORDS = {"ancient", "aged", "former", "elderly", "antique", "vintage", "worn", "stale", "classic", "past"}
DRAIN_GOAL_SECONDS = 90.0
# The platform's CPU per submit (gunicorn, Celery, PostgreSQL) against its floor's (module docstring).
GOAL_FLOOR_RATIO = 2.0


@dataclass
class Shared:
    """What the annotator threads report, under one lock."""

    goal: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    acknowledged: dict[int, int] = field(default_factory=dict)  # assignment id -> 200s received
    claims: int = 0
    returns: int = 0
    duplicates: int = 0
    no_work: int = 0
    resent: int = 0
    failures: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, what)
    stop: threading.Event = field(default_factory=threading.Event)

    def submitted(self) -> int:
        with self.lock:
            return len(self.acknowledged)

    def failed(self, what: str) -> None:
        with self.lock:
            self.failures.append((time.monotonic(), what))


class Servers:
    """Keep-alive connections to both servers; each request goes to the next one in turn."""

    def __init__(self, ports: list[int], token: str, shared: Shared) -> None:
        self.ports = ports
        self.connections = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for port in ports]
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        self.turn = 0
        self.shared = shared

    def post(self, path: str, body: dict[str, Any], *, server: int | None = None) -> tuple[int, bytes]:
        """POST to the next server (or to ``server``). A connection the server dropped (its worker
        killed, or idle too long) is opened again and the request resent once: safe, every request
        sent here is idempotent."""
        if server is None:
            server, self.turn = self.turn, (self.turn + 1) % len(self.ports)
        for attempt in (1, 2):
            connection = self.connections[server]
            try:
                connection.request("POST", path, body=json.dumps(body), headers=self.headers)
                response = connection.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException):
                connection.close()
                if attempt == 2:
                    raise
                with self.shared.lock:
                    self.shared.resent += 1
        raise AssertionError("unreachable")

    def other(self) -> Servers:
        """Connections of their own to the same servers, for a request sent alongside."""
        twin = Servers(self.ports, self.headers["Authorization"].split()[1], self.shared)
        twin.turn = self.turn
        return twin

    def close(self) -> None:
        for connection in self.connections:
            connection.close()


def answers_for(items: list[dict[str, Any]], *, spammer: bool, rng: random.Random) -> dict[str, str]:
    """Honest annotators accept the target word and reject a word that is no candidate (the
    distractor control); a spammer accepts every row."""
    answers = {}
    for item in items:
        if spammer or item["text"] == TARGET_WORD:
            value = "accept"
        elif item["text"] in CANDIDATE_WORDS:
            value = "accept" if rng.random() < 0.7 else "reject"
        else:
            value = "reject"
        answers[str(item["id"])] = value
    return answers


def send_into(results: list[tuple[int, bytes]], servers: Servers, path: str, body: dict[str, Any], server: int) -> None:
    results.append(servers.post(path, body, server=server))


def annotate(*, index: int, token: str, ports: list[int], shared: Shared, barrier: threading.Barrier) -> None:
    """Claim, answer and submit until the goal is reached or the run is stopped."""
    rng = random.Random(index)
    servers = Servers(ports, token, shared)
    servers.turn = index % len(ports)
    spammer = index % SPAMMER_EVERY == 0
    barrier.wait()
    try:
        while not shared.stop.is_set() and shared.submitted() < shared.goal:
            status, body = servers.post("/api/work/claim", {})
            if status == 204:
                with shared.lock:
                    shared.no_work += 1
                time.sleep(0.5)
                continue
            if status != 200:
                shared.failed(f"claim {status}: {body[:160]!r}")
                time.sleep(0.2)
                continue
            with shared.lock:
                shared.claims += 1
            assignment = json.loads(body)
            path = f"/api/work/assignments/{assignment['id']}"
            if rng.randrange(RETURN_EVERY) == 0:
                status, body = servers.post(f"{path}/return", {})
                if status != 200:
                    shared.failed(f"return {status}: {body[:160]!r}")
                else:
                    with shared.lock:
                        shared.returns += 1
                continue
            payload = {
                "answers": answers_for(assignment["items"], spammer=spammer, rng=rng),
                "seconds_on_page": rng.uniform(20, 90),
            }
            duplicate = rng.randrange(DUPLICATE_EVERY) == 0
            results: list[tuple[int, bytes]] = []
            twin: threading.Thread | None = None
            if duplicate:
                # The same submit to the other server at the same moment: a double click, a resend.
                other = servers.other()
                server = (servers.turn + 1) % len(ports)
                twin = threading.Thread(
                    target=send_into, args=(results, other, f"{path}/submit", payload, server), daemon=True
                )
                twin.start()
            results.append(servers.post(f"{path}/submit", payload))
            if twin is not None:
                twin.join(timeout=120)
                other.close()
                with shared.lock:
                    shared.duplicates += 1
            for status, body in results:
                if status != 200:
                    shared.failed(f"submit {status}: {body[:160]!r}")
                    continue
                with shared.lock:
                    shared.acknowledged[assignment["id"]] = shared.acknowledged.get(assignment["id"], 0) + 1
    except (OSError, http.client.HTTPException) as error:
        shared.failed(f"connection: {error!r}")
    finally:
        servers.close()


# ---- the processes ----------------------------------------------------------------------------


def start_gunicorn(
    *, port: int, workers: int, threads: int, env: dict[str, str], log_path: Path
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "gunicorn", "crowdlex.wsgi", "-w", str(workers), "-k", "gthread"]
    command += ["--threads", str(threads), "-b", f"127.0.0.1:{port}", "--log-level", "warning"]
    # Connections kept open as a load balancer keeps them; no control socket, which two servers would share.
    command += ["--keep-alive", "30", "--no-control-socket"]
    log = log_path.open("a")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


def start_celery(*, name: str, env: dict[str, str], log_path: Path, beat: bool = False) -> subprocess.Popen[bytes]:
    """A Celery worker (prefork, one pool process, production's settings) or, with ``beat``, Celery beat."""
    celery = str(Path(sys.executable).with_name("celery"))
    if beat:
        command = [celery, "-A", "crowdlex", "beat", "--loglevel=INFO", "-s", str(log_path.with_suffix(".schedule"))]
        ready = "beat: Starting"
    else:
        command = [celery, "-A", "crowdlex", "worker", "-c", "1", "-Q", QUEUE, "-n", f"{name}@localhost"]
        command += ["--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=INFO"]
        ready = "ready."
    # Each process names itself to PostgreSQL, so the benchmark can tell which one is in a transaction.
    env = {**env, "DATABASE_URL": f"{env['DATABASE_URL']}?application_name={name}"}
    log = log_path.open("a")
    earlier = log_path.stat().st_size  # a restarted process appends to its log: look past what is there
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while ready not in log_path.read_bytes()[earlier:].decode(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{name} did not start:\n{log_path.read_text()[-2000:]}")
        time.sleep(0.2)
    return process


def descendants(pid: int) -> list[int]:
    """The process and all its descendants (Linux /proc)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            with open(f"/proc/{current}/task/{current}/children") as children:
                todo += map(int, children.read().split())
        except OSError:
            continue
    return found


class CpuMeter:
    """CPU time per group of processes from ``start`` on, sampled often enough to keep what
    processes that were killed or restarted had used. A process running at ``start`` counts from
    there (its start-up, and this process's seeding, are not the load's); one started later (a
    restarted worker) counts whole."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[int, float]] = {}
        self.before: dict[str, dict[int, float]] = {}

    def start(self, group: str, pids: list[int]) -> None:
        self.before[group] = {pid: used for pid in pids if (used := process_cpu_seconds(pid))}

    def sample(self, group: str, pids: list[int]) -> None:
        mine = self.seen.setdefault(group, {})
        for pid in pids:
            used = process_cpu_seconds(pid)
            if used:
                mine[pid] = max(mine.get(pid, 0.0), used)

    def total(self, group: str) -> float:
        before = self.before.get(group, {})
        return sum(used - before.get(pid, 0.0) for pid, used in self.seen.get(group, {}).items())


# ---- the database side of the run (this process's own connection) ------------------------------


def database_query(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """One query on this process's connection, reconnecting for up to 30 s if PostgreSQL restarted."""
    from django.db import InterfaceError, OperationalError, connection

    deadline = time.monotonic() + 30
    while True:
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params or [])
                return list(cursor.fetchall())
        except (OperationalError, InterfaceError):
            connection.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def backends(database: str, named: dict[int, str] | None = None) -> list[int]:
    """The database's backends now; ``named`` gathers the name each gave itself (``application_name``)."""
    rows = database_query("SELECT pid, application_name FROM pg_stat_activity WHERE datname = %s", [database])
    if named is not None:
        named.update((pid, name) for pid, name in rows if name)
    return [pid for pid, _ in rows]


def rows_written_by_table() -> dict[str, int]:
    """Rows inserted, updated and deleted so far, by table (PostgreSQL's counts)."""
    rows = database_query("SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables")
    return {table: int(written) for table, written in rows}


def in_transaction(application: str) -> str | None:
    """The statement a process named ``application`` is running inside a transaction, if it is."""
    rows = database_query(
        "SELECT query FROM pg_stat_activity WHERE application_name = %s AND xact_start IS NOT NULL AND state <> 'idle'",
        [application],
    )
    return rows[0][0] if rows else None


def drained(broker: Any) -> bool:
    """No refresh waiting in the broker, queued in the database, or owed to touched work."""
    from annotation.models import RefreshQueued, RefreshTouched

    if broker.llen(QUEUE):
        return False
    queued = database_query(f"SELECT EXISTS (SELECT 1 FROM {RefreshQueued._meta.db_table})")[0][0]
    return not queued and not database_query(f"SELECT EXISTS (SELECT 1 FROM {RefreshTouched._meta.db_table})")[0][0]


# ---- the faults -------------------------------------------------------------------------------


@dataclass
class Faults:
    log: list[str] = field(default_factory=list)
    restart_window: tuple[float, float] | None = None
    restart_seconds: float = 0.0

    def say(self, message: str, began: float) -> None:
        line = f"[{time.monotonic() - began:6.1f} s] {message}"
        self.log.append(line)
        print(line, flush=True)


def kill_gunicorn_worker(server: subprocess.Popen[bytes], faults: Faults, began: float) -> None:
    workers = server_pids(server)[1:]
    if not workers:
        faults.say("no gunicorn worker to kill", began)
        return
    os.kill(workers[0], signal.SIGKILL)
    faults.say(f"killed gunicorn worker {workers[0]} (SIGKILL); its master starts another", began)


def kill_celery_mid_refresh(
    *,
    name: str,
    process: subprocess.Popen[bytes],
    restart: Callable[[], subprocess.Popen[bytes]],
    faults: Faults,
    began: float,
    wait: float = 120.0,
) -> subprocess.Popen[bytes]:
    """Wait until the worker is inside a transaction (a refresh: the only tasks that run under load),
    SIGKILL its main and pool processes at once, and start it again."""
    deadline = time.monotonic() + wait
    statement = None
    while time.monotonic() < deadline:
        statement = in_transaction(name)
        if statement is not None:
            break
        time.sleep(0.01)
    if statement is None:
        faults.say(f"{name} was not seen inside a transaction within {wait:.0f} s: killed anyway", began)
    for pid in descendants(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait()
    shown = " ".join((statement or "").split())[:100]
    faults.say(f"killed Celery worker {name} (main and pool process, SIGKILL) inside a transaction: {shown}", began)
    restarted = restart()
    faults.say(f"started {name} again", began)
    return restarted


def restart_postgresql(faults: Faults, began: float) -> None:
    versions = sorted(os.listdir("/etc/postgresql"), key=lambda v: float(v))
    version = versions[-1]
    faults.say(f"restarting PostgreSQL {version} (pg_ctlcluster {version} main restart)", began)
    start = time.monotonic()
    subprocess.run(["pg_ctlcluster", version, "main", "restart"], check=True)
    end = time.monotonic()
    faults.restart_window = (start, end)
    faults.restart_seconds = end - start
    faults.say(f"PostgreSQL back after {end - start:.1f} s", began)


# ---- the audit --------------------------------------------------------------------------------


@dataclass
class Audit:
    acknowledged_missing: int = 0
    duplicates_stored: int = 0
    stored_unacknowledged: int = 0
    over_assigned: int = 0
    counters_off: int = 0
    label_mismatches: int = 0
    refresh_differences: int = 0
    notes: list[str] = field(default_factory=list)


def state_snapshot(benchmark_id: int) -> dict[str, set[tuple[Any, ...]]]:
    """What the pipeline decides, as sets of rows: a whole refresh must leave it as it is."""
    from annotation.models import Candidate, Target
    from hits.models import HIT, Assignment
    from review.models import WorkerFlag

    scope = {"hit__batch__benchmark_id": benchmark_id}
    return {
        "assignments": set(Assignment.objects.filter(**scope).values_list("pk", "status", "filtered")),
        "hits": set(
            HIT.objects.filter(batch__benchmark_id=benchmark_id).values_list(
                "pk", "assignments_active", "assignments_required"
            )
        ),
        "targets": set(Target.objects.filter(benchmark_id=benchmark_id).values_list("pk", "stage")),
        "candidates": set(Candidate.objects.filter(target__benchmark_id=benchmark_id).values_list("pk", "stage")),
        # Which flags are up (their evidence aside: counts that move with every submit).
        "flags": {
            (worker, reason, cleared is None)
            for worker, reason, cleared in WorkerFlag.objects.filter(benchmark_id=benchmark_id).values_list(
                "worker_id", "reason", "cleared_at"
            )
        },
    }


def audit(*, benchmark_id: int, acknowledged: set[int]) -> Audit:
    from django.db import transaction
    from django.db.models import Count

    from annotation.models import Benchmark, Label
    from annotation.selectors import labels_misplaced
    from hits.models import HIT, HOLDS_SLOT, VALID_STATUSES, Answer, Assignment, HITItem
    from review.services import benchmark_refresh

    result = Audit()
    handed_in = Assignment.objects.filter(hit__batch__benchmark_id=benchmark_id, submitted_at__isnull=False)
    stored = set(handed_in.values_list("pk", flat=True))
    result.acknowledged_missing = len(acknowledged - stored)
    result.stored_unacknowledged = len(stored - acknowledged)
    # The constraints forbid these; the audit does not take that on trust.
    result.duplicates_stored = (
        Answer.objects.values("assignment_id", "item_id").annotate(n=Count("id")).filter(n__gt=1).count()
        + Label.objects.values("assignment_id", "candidate_id").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    items = dict(HITItem.objects.values("hit_id").annotate(n=Count("id")).values_list("hit_id", "n"))
    answers = dict(Answer.objects.values("assignment_id").annotate(n=Count("id")).values_list("assignment_id", "n"))
    incomplete = [pk for pk, hit_id in handed_in.values_list("pk", "hit_id") if answers.get(pk) != items[hit_id]]
    if incomplete:
        result.notes.append(f"{len(incomplete)} stored submits without one answer per row, e.g. {incomplete[:5]}")
    result.duplicates_stored += len(incomplete)

    per_hit = Assignment.objects.filter(hit__batch__benchmark_id=benchmark_id).values("hit_id")
    valid = dict(
        per_hit.filter(status__in=VALID_STATUSES, filtered=False).annotate(n=Count("id")).values_list("hit_id", "n")
    )
    holding = dict(per_hit.filter(HOLDS_SLOT).annotate(n=Count("id")).values_list("hit_id", "n"))
    for pk, active, required in HIT.objects.filter(batch__benchmark_id=benchmark_id).values_list(
        "pk", "assignments_active", "assignments_required"
    ):
        result.over_assigned += valid.get(pk, 0) > required
        result.counters_off += holding.get(pk, 0) != active

    candidate_answers = dict(
        Answer.objects.filter(item__candidate__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .values_list("assignment_id", "n")
    )
    labels = dict(Label.objects.values("assignment_id").annotate(n=Count("id")).values_list("assignment_id", "n"))
    result.label_mismatches = sum(
        1 for pk in set(candidate_answers) | set(labels) if candidate_answers.get(pk, 0) != labels.get(pk, 0)
    ) + labels_misplaced(benchmark_id=benchmark_id)

    before = state_snapshot(benchmark_id)
    with transaction.atomic():
        refreshed = benchmark_refresh(benchmark=Benchmark.objects.get(pk=benchmark_id))
        after = state_snapshot(benchmark_id)
        transaction.set_rollback(True)
    for name in before:
        differing = before[name] ^ after[name]
        if differing:
            result.notes.append(f"a whole refresh changes {name}: {sorted(differing, key=str)[:4]}")
        result.refresh_differences += len(differing)
    if refreshed.changed:
        result.notes.append(f"a whole refresh reports changes: {refreshed}")
        result.refresh_differences = max(result.refresh_differences, 1)
    return result


# ---- the run ----------------------------------------------------------------------------------


# ---- the floor ----------------------------------------------------------------------------------


@dataclass
class Floor:
    """The floor's CPU per submit, in ms: the cycle served by the bare WSGI app (gunicorn and
    PostgreSQL) and the refresh of the work a refresh took in by psycopg2 alone (this process and
    its backend)."""

    web_gunicorn: float
    web_postgres: float
    cycles: float
    refresh: float
    backlog: int
    refreshes: int

    @property
    def total(self) -> float:
        return self.web_gunicorn + self.web_postgres + self.refresh


def refresh_floor(
    *, benchmark_id: int, database_url: str, submits: int, celery_logs: list[Path]
) -> tuple[float, int, int]:
    """CPU ms per submit of the refresh's floor (``bench.refresh_backlog``): the submits one refresh
    took in during the load (the load's over the refreshes that ran), submitted again with no worker
    running, and the refresh of their touched work run by psycopg2 alone, rolled back. Also the
    backlog and the refreshes that ran."""
    from annotation.models import Worker
    from bench.refresh_backlog import make_backlog, refresh_against_floor, refreshes_that_ran

    ran = sum(refreshes_that_ran(log) for log in celery_logs if log.exists())
    annotators = list(
        Worker.objects.filter(external_id__startswith="bench", user__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    made = make_backlog(benchmark_id, annotators, max(1, round(submits / max(1, ran))))
    _platform, floor, _statements = refresh_against_floor(benchmark_id, database_url, touched_only=True)
    return 1000 * floor.total_cpu / made, made, ran


def web_floor(
    *,
    args: argparse.Namespace,
    env: dict[str, str],
    clients: list[tuple[str, str]],
    database: str,
    static_root: str,
    benchmark_id: int,
) -> tuple[float, float, float]:
    """CPU ms per cycle of gunicorn and PostgreSQL serving the claim cycle's floor (``bench.claim_floor``:
    the statements of a steady-state claim and submit, recorded from the platform, run by a bare WSGI
    app) from the same two servers (workers, threads, ports) to as many annotators looping without
    pause for --floor-seconds after a second's warm-up, on fresh step-2 HITs of the recorded shape in
    a benchmark of their own (the soak's batches closed first: run after its audit); and the cycles
    counted."""
    from django.contrib.auth.models import User
    from django.db import connection, connections

    from bench.claim_cycle import step2_hits
    from bench.claim_floor import record_cycle, save
    from hits.models import Batch, BatchStatus

    # HITs of one shape, as the recorded cycle's: a benchmark of its own with fresh step-2 HITs (as
    # many as 100 cycles a second need), the soak's batches closed (its step-3 HITs hold other items).
    Batch.objects.filter(benchmark_id=benchmark_id).update(status=BatchStatus.CLOSED)
    step2_hits(name="soak-floor", hits=int(100 * (args.floor_seconds + 2) / 3) + len(clients))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    tokens = {token for token, _ in clients}
    users = [
        user
        for user in User.objects.filter(username__startswith="bench").select_related("worker").order_by("username")
        if user.auth_token.key in tokens
    ]
    by_token = dict(clients)
    keys = [user.auth_token.key for user in users]
    script = record_cycle("api", users, keys, [by_token[key] for key in keys])
    script_file = os.path.join(static_root, "soak-floor-script.pickle")
    save(script, script_file)
    connections.close_all()
    floor_env = {**env, "FLOOR_SCRIPT": script_file}
    servers = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "gunicorn", "bench.claim_floor:app", "-w", str(args.workers)),
                *("-k", "gthread", "--threads", str(args.threads), "-b", f"127.0.0.1:{port}"),
                *("--log-level", "warning", "--keep-alive", "30", "--no-control-socket"),
            ],
            env=floor_env,
        )
        for port in (args.port, args.port + 1)
    ]
    try:
        for port, server in zip((args.port, args.port + 1), servers, strict=True):
            wait_until_up(port, server)
        loopers = keys[1:]  # the first recorded the cycle
        barrier = threading.Barrier(len(loopers) + 1)
        begin = time.monotonic() + 0.5
        start_measuring, stop = begin + 1.0, begin + 1.0 + args.floor_seconds
        stats = [ClientStats(start_measuring=start_measuring, stop=stop) for _ in loopers]
        threads = [
            threading.Thread(
                target=client_loop,
                kwargs={
                    "port": args.port + index % 2,
                    "token": token,
                    "stop": stop,
                    "stats": stat,
                    "barrier": barrier,
                },
                daemon=True,
            )
            for index, (token, stat) in enumerate(zip(loopers, stats, strict=True))
        ]
        for thread in threads:
            thread.start()
        barrier.wait()
        time.sleep(max(0.0, start_measuring - time.monotonic()))
        gunicorn = [pid for server in servers for pid in server_pids(server)]
        backends_now = postgres_pids(database)
        before = cpu_seconds(gunicorn), cpu_seconds(backends_now)
        time.sleep(max(0.0, stop - time.monotonic()))
        after = cpu_seconds(gunicorn), cpu_seconds(backends_now)
        for thread in threads:
            thread.join(timeout=60)
    finally:
        for server in servers:
            stop_process(server)
    errors = [error for stat in stats for error in stat.errors]
    if errors:
        print(f"the floor's clients: {len(errors)} errors, the first: {errors[0]}")
    worked = max(1e-9, sum(stat.worked for stat in stats))
    return 1000 * (after[0] - before[0]) / worked, 1000 * (after[1] - before[1]) / worked, worked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=10_000, help="acknowledged submits to reach (20000: full)")
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--max-seconds", type=float, default=420.0, help="the load stops after this long in any case")
    parser.add_argument("--port", type=int, default=8141, help="the first server's port; the second uses the next")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes per server")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--drain-timeout", type=float, default=240.0, help="longest wait for the queue to drain")
    parser.add_argument("--no-database-restart", action="store_true", help="leave PostgreSQL running")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--redis-db", type=int, default=4)
    parser.add_argument("--keep", action="store_true", help="keep the bench database afterwards")
    parser.add_argument(
        "--account",
        action="store_true",
        help="log every statement of the database and tell its transactions apart by process and task",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379", help="the Redis server (no database)")
    parser.add_argument(
        "--cache-redis-db", type=int, default=None, help="Redis database of the shared cache (default: --redis-db + 1)"
    )
    parser.add_argument("--no-floor", action="store_true", help="do not measure the floor")
    parser.add_argument(
        "--floor-seconds",
        type=float,
        default=20.0,
        help="measured time of the floor's cycle (after a second's warm-up)",
    )
    args = parser.parse_args(argv)
    if not 100 <= args.submissions <= 200_000 or not 2 <= args.annotators <= 500 or not 0 < args.max_seconds <= 7200:
        parser.error("--submissions must be 100..200000, --annotators 2..500 and --max-seconds 0..7200")
    if not 1 <= args.floor_seconds <= 600:
        parser.error("--floor-seconds must be 1..600")
    if not args.no_database_restart and os.geteuid() != 0:
        parser.error("restarting PostgreSQL needs root: run as root or pass --no-database-restart")

    env = server_environment(database_url=args.database_url, redis_db=args.redis_db, cache_redis_db=args.cache_redis_db)
    for name in ("CELERY_BROKER_URL", "CACHE_URL"):
        env[name] = env[name].replace("redis://127.0.0.1:6379", args.redis_url.rstrip("/"))
    # The pages' static files, collected as a deployment collects them (DEBUG is off): the warm task
    # renders the pipeline page's fragments, which name them.
    static_root = tempfile.mkdtemp(prefix="crowdlex-soak-static-")
    env["STATIC_ROOT"] = static_root
    # With the servers' cache, hosts and throttles too: this process records the floor's cycle through
    # the platform, which must run the statements the servers run.
    copied = ("DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY", "STATIC_ROOT", "CACHE_URL", "ALLOWED_HOSTS")
    os.environ.update({key: env[key] for key in (*copied, "THROTTLE_CLAIM_RATE", "THROTTLE_SUBMIT_RATE")})
    # Each process names itself to PostgreSQL (this one, the servers, the Celery workers).
    os.environ["DATABASE_URL"] = f"{env['DATABASE_URL']}?application_name=soak-bench"
    os.environ.update({"CELERY_BROKER_URL": env["CELERY_BROKER_URL"], "CELERY_TASK_ALWAYS_EAGER": "0"})
    import django

    django.setup()
    import redis
    from django.core.management import call_command
    from django.db import connections

    from annotation.models import Benchmark

    broker = redis.Redis.from_url(env["CELERY_BROKER_URL"])
    broker.flushdb()
    database = urlparse(args.database_url).path.lstrip("/")
    print(f"database {args.database_url}: recreating and migrating", flush=True)
    recreate_database(args.database_url)
    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    started = time.monotonic()
    # Step-2 HITs enough for the submissions with room to spare; step-3 HITs come on top.
    hits = args.submissions // 3 + args.submissions // 10 + args.annotators
    # The floor's annotators are others (one more records its cycle).
    clients = args.annotators if args.no_floor else 2 * args.annotators + 1
    seeded = seed(hits=hits, clients=clients)
    tokens = [token for token, _session in seeded[: args.annotators]]
    floor_clients = seeded[args.annotators :]
    benchmark_id = Benchmark.objects.get().pk
    print(f"seeded {hits} HITs and {args.annotators} annotators in {time.monotonic() - started:.1f} s", flush=True)
    if args.account:
        # Every statement of this database alone, from the connections opened from here on.
        with connections["default"].cursor() as cursor:
            cursor.execute(f"ALTER DATABASE \"{database}\" SET log_statement = 'all'")
    connections.close_all()

    logs = Path(os.environ.get("TMPDIR", "/tmp")) / f"soak-{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    ports = [args.port, args.port + 1]
    servers = [
        start_gunicorn(
            port=port,
            workers=args.workers,
            threads=args.threads,
            env={**env, "DATABASE_URL": f"{env['DATABASE_URL']}?application_name=soak-web-{port}"},
            log_path=logs / f"web-{port}.log",
        )
        for port in ports
    ]
    celery: dict[str, subprocess.Popen[bytes]] = {}
    beat: subprocess.Popen[bytes] | None = None
    meter = CpuMeter()
    shared = Shared(goal=args.submissions)
    faults = Faults()
    samples: list[tuple[float, int, int, int]] = []
    named: dict[int, str] = {}

    def groups() -> dict[str, list[int]]:
        """The processes of each group whose CPU is counted, as they are now."""
        return {
            "gunicorn": [pid for server in servers for pid in descendants(server.pid)],
            "celery": [pid for p in [*celery.values(), beat] if p for pid in descendants(p.pid)],
            "postgres": backends(database, named),
            "annotators": [os.getpid()],
        }

    try:
        for port, server in zip(ports, servers, strict=True):
            wait_until_up(port, server)
        names = ["soak-celery-a", "soak-celery-b"]
        for name in names:
            celery[name] = start_celery(name=name, env=env, log_path=logs / f"{name}.log")
        beat = start_celery(name="soak-beat", env=env, log_path=logs / "beat.log", beat=True)
        print(
            f"2 gunicorn servers (ports {ports[0]}, {ports[1]}; {args.workers} x {args.threads} gthread each), "
            f"2 Celery workers and beat up; logs in {logs}",
            flush=True,
        )

        load_before = os.getloadavg()
        busy_before = machine_busy_seconds()
        # The CPU of each group from here, the window the machine's busy seconds cover.
        for group, pids in groups().items():
            meter.start(group, pids)
        tables_before, log_before = rows_written_by_table(), soak_transactions.log_offset()
        stats_before = database_query(
            "SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted FROM pg_stat_database "
            "WHERE datname = %s",
            [database],
        )[0]
        barrier = threading.Barrier(len(tokens) + 1)
        threads = [
            threading.Thread(
                target=annotate,
                kwargs={"index": i, "token": token, "ports": ports, "shared": shared, "barrier": barrier},
                daemon=True,
            )
            for i, token in enumerate(tokens)
        ]
        for thread in threads:
            thread.start()
        barrier.wait()
        began = time.monotonic()
        deadline = began + args.max_seconds
        # Each fault once, at a quarter, half and three quarters of the submissions (or of the time).
        planned = [("gunicorn", 0.25), ("celery", 0.5), ("postgresql", 0.75)]
        if args.no_database_restart:
            planned.pop()
        print(f"\n{'t (s)':>6} {'submits':>8} {'per s':>6} {'waiting':>8} {'unacked':>8} {'failed':>7}", flush=True)
        last_print = 0.0
        while any(thread.is_alive() for thread in threads):
            if time.monotonic() > deadline:
                shared.stop.set()
            done = shared.submitted()
            share = done / args.submissions
            if planned and (share >= planned[0][1] or time.monotonic() - began >= planned[0][1] * args.max_seconds):
                fault, _ = planned.pop(0)
                if fault == "gunicorn":
                    kill_gunicorn_worker(servers[0], faults, began)
                elif fault == "celery":
                    name = names[0]

                    def again(name: str = name) -> subprocess.Popen[bytes]:
                        return start_celery(name=name, env=env, log_path=logs / f"{name}.log")

                    celery[name] = kill_celery_mid_refresh(
                        name=name, process=celery[name], restart=again, faults=faults, began=began
                    )
                else:
                    restart_postgresql(faults, began)
            elapsed = time.monotonic() - began
            for group, pids in groups().items():
                meter.sample(group, pids)
            waiting, unacked = int(broker.llen(QUEUE)), int(broker.hlen("unacked"))
            samples.append((elapsed, done, waiting, unacked))
            if elapsed - last_print >= 10:
                last_print = elapsed
                rate = (done - samples[-11][1]) / (elapsed - samples[-11][0]) if len(samples) > 11 else done / elapsed
                print(
                    f"{elapsed:6.0f} {done:8d} {rate:6.1f} {waiting:8d} {unacked:8d} {len(shared.failures):7d}",
                    flush=True,
                )
            time.sleep(1.0)
        last_submit = time.monotonic()
        load_seconds = last_submit - began
        submitted = shared.submitted()
        print(
            f"load over: {submitted} submits acknowledged in {load_seconds:.0f} s; waiting for the queue to drain",
            flush=True,
        )
        drain_seconds: float | None = None
        while time.monotonic() - last_submit < args.drain_timeout:
            drain_groups = groups()
            meter.sample("celery", drain_groups["celery"])
            meter.sample("postgres", drain_groups["postgres"])
            if drained(broker):
                drain_seconds = time.monotonic() - last_submit
                break
            time.sleep(0.2)
        busy = machine_busy_seconds() - busy_before
        load_after = os.getloadavg()
        stats_after = database_query(
            "SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted FROM pg_stat_database "
            "WHERE datname = %s",
            [database],
        )[0]
        unacked_left = int(broker.hlen("unacked"))
        tables_after, log_after = rows_written_by_table(), soak_transactions.log_offset()
    finally:
        shared.stop.set()
        for process in [*servers, *celery.values(), *([beat] if beat else [])]:
            stop_process(process)

    print(
        f"\n{args.annotators} annotators, {os.cpu_count()} CPUs, load average before {load_before[0]:.2f}, "
        f"after {load_after[0]:.2f}"
    )
    for line in faults.log:
        print(f"  {line}")
    print(
        f"claims {shared.claims}, returns {shared.returns}, duplicate submits {shared.duplicates}, "
        f"no work {shared.no_work}, requests resent after a dropped connection {shared.resent}"
    )
    cpu = {group: meter.total(group) for group in ("gunicorn", "celery", "postgres", "annotators")}
    per = 1000 / max(1, submitted)  # ms per submit
    print(
        f"CPU per submit: gunicorn {cpu['gunicorn'] * per:.1f} ms, Celery {cpu['celery'] * per:.1f} ms, "
        f"PostgreSQL {cpu['postgres'] * per:.1f} ms, annotators {cpu['annotators'] * per:.1f} ms; the machine was busy "
        f"{busy:.0f} CPU-seconds, {busy - sum(cpu.values()):.0f} of them other processes'"
    )
    transactions, rows = stats_after[0] - stats_before[0], stats_after[1] - stats_before[1]
    print(
        f"PostgreSQL: {transactions / max(1, submitted):.1f} transactions and {rows / max(1, submitted):.1f} rows "
        "written per submit (everything: claims, returns, refreshes, the sweep)"
    )
    log_path = soak_transactions.server_log()
    if args.account and log_path is not None:
        print(
            soak_transactions.report(
                transactions=soak_transactions.transactions_in_log(
                    path=log_path, start=log_before, end=log_after, database=database
                ),
                applications=named,
                celery_logs={name: logs / f"{name}.log" for name in names},
                submits=submitted,
                counted=transactions,
                rows_by_table={table: rows - tables_before.get(table, 0) for table, rows in tables_after.items()},
            )
        )
    if unacked_left:
        print(
            f"{unacked_left} message(s) still unacknowledged in Redis: the killed worker's refresh, handed out again "
            f"once CELERY_VISIBILITY_TIMEOUT has passed (the touched work was refreshed meanwhile)"
        )

    for when, what in shared.failures[:8]:
        print(f"  failed at {when - began:6.1f} s: {what}")
    during = 0
    if faults.restart_window is not None:
        start, end = faults.restart_window
        during = sum(1 for when, _ in shared.failures if start - 1 <= when <= end + 15)
    result = audit(benchmark_id=benchmark_id, acknowledged=set(shared.acknowledged))
    for note in result.notes:
        print(f"  {note}")
    rerun = sum(
        (logs / f"web-{port}.log").read_text(errors="replace").count("database connection lost") for port in ports
    )
    print(f"requests run again by the web servers after losing their database connection: {rerun}")
    print(
        f"{len(set(shared.acknowledged))} submits acknowledged; {result.stored_unacknowledged} stored but never "
        f"acknowledged (a request that failed after its commit)"
    )

    # The floor of the same work, on the same machine in the same run, once the audit is done and the
    # platform's processes are stopped (module docstring).
    floor: Floor | None = None
    if not args.no_floor:
        refresh_ms, backlog, refreshes = refresh_floor(
            benchmark_id=benchmark_id,
            database_url=args.database_url,
            submits=submitted,
            celery_logs=[logs / f"{name}.log" for name in names],
        )
        connections.close_all()
        web = web_floor(
            args=args,
            env=env,
            clients=floor_clients,
            database=database,
            static_root=static_root,
            benchmark_id=benchmark_id,
        )
        floor = Floor(web[0], web[1], web[2], refresh_ms, backlog, refreshes)
    served = (cpu["gunicorn"] + cpu["celery"] + cpu["postgres"]) * per
    print(
        f"throughput, as context: {submitted / load_seconds:.1f} submits/s "
        f"({args.annotators} annotators, no pause between HITs)"
    )
    ok = []
    if floor is not None:
        ok.append(
            ratio_figure(
                "soak CPU per submit (gunicorn + Celery + PostgreSQL)",
                served,
                floor.total,
                goal=GOAL_FLOOR_RATIO,
                context=(
                    f"platform {cpu['gunicorn'] * per:.1f} + {cpu['celery'] * per:.1f} + {cpu['postgres'] * per:.1f} "
                    f"= {served:.1f} ms; floor: the claim cycle's statements from a bare WSGI app "
                    f"{floor.web_gunicorn:.1f} + {floor.web_postgres:.1f} ms ({floor.cycles:.0f} cycles in "
                    f"{args.floor_seconds:g} s), the refresh of {floor.backlog} submits (the load's over its "
                    f"{floor.refreshes} refreshes) by psycopg2 alone {floor.refresh:.1f} ms a submit; "
                    f"= {floor.total:.1f} ms; {machine()}"
                ),
            )
        )
    ok += [
        figure("soak failed requests", len(shared.failures), "requests", goal=0),
        figure("soak acknowledged submits not stored", result.acknowledged_missing, "submits", goal=0),
        figure("soak duplicates stored", result.duplicates_stored, "rows", goal=0),
        figure("soak HITs over-assigned or miscounted", result.over_assigned + result.counters_off, "HITs", goal=0),
        figure(
            "soak assignments whose labels differ from their answers", result.label_mismatches, "assignments", goal=0
        ),
        figure("soak differences from a whole refresh", result.refresh_differences, "rows", goal=0),
        figure(
            "soak time to drain after the last submit",
            drain_seconds if drain_seconds is not None else args.drain_timeout,
            "s",
            goal=DRAIN_GOAL_SECONDS,
        ),
    ]
    # A figure of the restart only when there was one (--no-database-restart leaves it out).
    if faults.restart_window is not None:
        ok.append(figure("soak failed requests during the database restart", during, "requests", goal=0))
    else:
        print("no database restart in this run: no figure of the requests during one")
    if faults.restart_window is not None:
        print(f"the PostgreSQL restart took {faults.restart_seconds:.1f} s")
    broker.flushdb()
    redis.Redis.from_url(env["CACHE_URL"]).flushdb()
    connections.close_all()
    if not args.keep:
        recreate_database(args.database_url, create=False)
    shutil.rmtree(static_root, ignore_errors=True)
    # The ratio to the floor is a figure to read; the rest is the audit.
    return 0 if all(ok[0 if floor is None else 1 :]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
