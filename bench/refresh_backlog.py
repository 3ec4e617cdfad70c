"""Does the pipeline refresh keep up with submits? Queue length over time and the time to current.

    python -m bench.refresh_backlog [--rate 60] [--seconds 30] [--prefill 2000] [--annotators 12]

Creates (drops first) a dedicated PostgreSQL database, migrates it, fills it with a benchmark of
--hits step-2 HITs (10 candidates and 2 controls each, 3 assignments per HIT) of which --prefill
HITs already hold three submitted assignments with their labels (2,000 HITs: 60,000 labels; the
issue's 150,000 labels is --prefill 5000), and starts one real Celery worker (prefork,
--concurrency processes, 2 as docs/deploy.md runs it, acknowledging late as in production) on
Redis database --redis-db. Then --annotators threads claim and submit through the services (no
HTTP: the load is the refresh's) at --rate submits per second together, for --seconds; one
annotator in six fails the controls, so the refresh has spam to filter and slots to re-open.

Every --sample-every seconds (0.1 s) it samples the broker's queue (messages waiting, and taken but
not acknowledged), printed every few seconds. A refresh, a run of the bot signals and a warm queued
at the same moment make a short burst that the next task's start takes away, so one sample in a
second says mostly whether it fell on such a moment: the queue is given over the whole run by its
median, its 95th percentile and its maximum, and the goal is on the 95th percentile (nearest rank:
the queue is at most that long 95 % of the run); the maximum is printed beside it.

After the last submit it waits until the refresh is current (no refresh queued and no touched work
left: every submit's work refreshed and committed), then until the bot signals are (no run pending:
one that began after the last refresh's request has committed; their task is throttled, so this
takes longer), then until the broker is empty. It then checks the result: a whole refresh and a
computation of the bot signals from scratch must both change nothing, and every submit's labels are
stored once. The worker's log gives each task's run times.

The floor (``bench.floor``), measured in the same run before the load: the statements and COPYs of
one whole refresh of the prefilled benchmark (advancing its targets, writing the follow-up HITs),
recorded in this process, run again by psycopg2 alone; the refresh itself is measured the same way.
Both are rolled back, so each starts from the same rows. The ratio is of CPU, this process's and
its PostgreSQL backend's (on a shared machine the wall clock mostly measures the queue for the
CPUs); the wall-clock ratio is printed beside it. Goal: the refresh within 2 times its floor (the
spam decisions and the planning of the next step's HITs are real work the floor does not do).

The floor of the time to current, measured after the checks with the worker stopped: the backlog
one refresh took in during the load (the load's submits over the refreshes that ran, those sent
again because another was running left out) is submitted again by the annotators in turn, and the
refresh those submits queue (of the work they touched) is recorded, then its statements and COPYs
run by psycopg2 alone, rolled back (median of 3; the platform's own refresh of them in process is
printed beside). What a system with no framework must do after the last submit is that refresh;
the platform also waits for the refresh running when the last submit commits, sends its own again
shortly (``review.tasks.BUSY_RETRY_SECONDS``) and hands it through the broker: the time to current
within 5 times that floor. The queue's floor is the worker's cost per submit: the seconds its
refresh tasks ran over the load's submits, against the floor refresh's seconds over the backlog's,
within 2 times (the queue stays short while that cost is under the time between two submits).
The queue's length itself stays a count of its own, at most two messages waiting at the 95th
percentile: one refresh and one run of the bot signals, what coalescing leaves while the worker is
busy. Seconds are context, with the machine described.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import figure, process_cpu_seconds, recreate_database
from bench.claim_cycle import CANDIDATES_PER_HIT, step2_hits
from bench.floor import (
    StatementRecorder,
    machine,
    psycopg2_connection,
    ratio_figure,
    replay,
    statements_and_copies_recorded,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_bench_refresh"
QUEUE = "celery"
# The time to current against its floor (module docstring).
GOAL_CURRENT_RATIO = 5.0
# One refresh waiting and one run of the bot signals, whatever the rate; over the run's samples, at
# this percentile (module docstring).
GOAL_QUEUE_MESSAGES = 2
GOAL_QUEUE_PERCENTILE = 95
TASKS = {"refresh": "review.tasks.benchmark_refresh", "signals": "review.tasks.benchmark_signals"}
SPAMMER_EVERY = 6
GOAL_FLOOR_RATIO = 2.0


@dataclass
class Load:
    submits: int = 0
    last_submit: float = 0.0  # time.monotonic() when the last submit returned
    no_work: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def seed(*, hits: int, prefill: int, annotators: int) -> int:
    """Bulk-create the benchmark, its HITs, ``prefill`` HITs' worth of submitted work and the
    annotators; returns the benchmark's id."""
    from django.db import connection
    from django.utils import timezone

    from annotation.models import Label, Worker, WorkerKind
    from annotation.tallies import tallies_benchmark_recount
    from hits.models import HIT, Answer, Assignment, AssignmentStatus, HITItem
    from schemes.swords.items import ItemKind

    batch, hit_rows, items = step2_hits(name="refresh-backlog", hits=hits)
    benchmark = batch.benchmark

    crowd = Worker.objects.bulk_create(
        [Worker(kind=WorkerKind.SIMULATED, external_id=f"prefill-{i}") for i in range(30)]
        + [Worker(kind=WorkerKind.SIMULATED, external_id=f"annotator-{i}") for i in range(annotators)]
    )
    earlier = crowd[:30]
    now = timezone.now()
    rng = random.Random(1)
    by_hit: dict[int, list[HITItem]] = {}
    for item in items:
        by_hit.setdefault(item.hit_id, []).append(item)
    for start in range(0, prefill, 500):
        chunk = hit_rows[start : min(prefill, start + 500)]
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    hit=hit,
                    worker=worker,
                    status=AssignmentStatus.SUBMITTED,
                    claimed_at=now,
                    deadline=now,
                    submitted_at=now,
                    seconds_on_page=60.0,
                    controls_correct=2,
                    controls_total=2,
                )
                for hit in chunk
                for worker in rng.sample(earlier, 3)
            ]
        )
        answers: list[Answer] = []
        labels: list[Label] = []
        for assignment in assignments:
            for item in by_hit[assignment.hit_id]:
                value = "accept" if item.kind == ItemKind.CONTROL_TARGET else "reject"
                if item.candidate_id is not None:
                    value = rng.choice(["accept", "reject", "abstain"])
                    labels.append(
                        Label(
                            candidate_id=item.candidate_id,
                            benchmark_id=benchmark.pk,
                            value=value,
                            step=2,
                            worker_id=assignment.worker_id,
                            assignment=assignment,
                        )
                    )
                answers.append(Answer(assignment=assignment, item=item, value=value))
        Answer.objects.bulk_create(answers, batch_size=5000)
        Label.objects.bulk_create(labels, batch_size=5000)
    # Bulk-inserted rather than submitted: the candidates' tallies (what advancement and generation
    # read, annotation.tallies) are counted once, as after a bulk load.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    HIT.objects.filter(pk__in=[hit.pk for hit in hit_rows[:prefill]]).update(assignments_active=3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return benchmark.pk


def claim_and_submit(benchmark: Any, worker: Any, *, spammer: bool, rng: random.Random) -> bool:
    """One HIT claimed and submitted by ``worker`` through the services; False if none was left."""
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit
    from schemes.swords.items import ItemKind

    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    if assignment is None:
        return False
    answers: dict[int, str] = {}
    for pk, kind in HITItem.objects.filter(hit_id=assignment.hit_id).values_list("pk", "kind"):
        if kind == ItemKind.CONTROL_TARGET:
            answers[pk] = "reject" if spammer else "accept"
        elif kind == ItemKind.CONTROL_DISTRACTOR:
            answers[pk] = "accept" if spammer else "reject"
        else:
            answers[pk] = "accept" if spammer else rng.choice(["accept", "reject"])
    assignment_submit(assignment=assignment, answers=answers, seconds_on_page=rng.uniform(20, 90))
    return True


def annotate(
    *, benchmark_id: int, worker_id: int, spammer: bool, interval: float, phase: float, stop: float, load: Load
) -> None:
    """Claim and submit one HIT every ``interval`` seconds until ``stop``."""
    from django.db import connection

    from annotation.models import Benchmark, Worker

    benchmark = Benchmark.objects.get(pk=benchmark_id)
    worker = Worker.objects.get(pk=worker_id)
    rng = random.Random(worker_id)
    next_start = time.monotonic() + phase
    try:
        while True:
            time.sleep(max(0.0, next_start - time.monotonic()))
            next_start = max(next_start + interval, time.monotonic())
            if time.monotonic() >= stop:
                return
            try:
                if not claim_and_submit(benchmark, worker, spammer=spammer, rng=rng):
                    with load.lock:
                        load.no_work += 1
                    continue
                with load.lock:
                    load.submits += 1
                    load.last_submit = max(load.last_submit, time.monotonic())
            except Exception as error:  # reported, not hidden: the run is then marked failed
                with load.lock:
                    load.errors.append(repr(error)[:200])
    finally:
        connection.close()


# Set in the worker's environment: the worker imports this module (``-I``) and warms itself up.
WARM_WORKER = "REFRESH_BACKLOG_WARM_WORKER"


def warm_worker() -> None:
    """Load WordNet in the worker's parent process before it forks its processes, as a worker that
    has run for a while has it: advancing a target plans step-3 HITs, which lemmatize with WordNet,
    and each cold process would otherwise pay that (6 s of CPU, half a minute on a loaded box) at
    its first advancing refresh, whenever that comes in the measured load."""
    from annotation.wordnet import lemmatize

    lemmatize("perched", pos="verb")


def start_worker(*, database_url: str, broker_url: str, log_path: Path, concurrency: int) -> subprocess.Popen[bytes]:
    """One Celery worker with production's settings (late acknowledgement, prefetch 1)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-not-for-production",
        "LOG_LEVEL": "WARNING",
        WARM_WORKER: "1",
    }
    celery = Path(sys.executable).with_name("celery")
    command = [
        str(celery),
        "-A",
        "crowdlex",
        "worker",
        "-c",
        str(concurrency),
        "-I",
        "bench.refresh_backlog",
        "-Q",
        QUEUE,
        "-n",
        "refresh-bench@localhost",
    ]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=INFO"]
    log = log_path.open("w")
    worker = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while "ready." not in log_path.read_text():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the Celery worker did not start:\n{log_path.read_text()[-2000:]}")
        time.sleep(0.2)
    return worker


def backlog(client: object) -> tuple[int, int]:
    """(messages waiting, messages taken and not yet acknowledged) in the broker."""
    waiting = client.llen(QUEUE)  # type: ignore[attr-defined]
    unacked = client.hlen("unacked")  # type: ignore[attr-defined]
    return int(waiting), int(unacked)


def percentile(values: list[int], percent: float) -> int:
    """The nearest-rank ``percent``-th percentile of ``values`` (the smallest value at least that share
    of them is at or below); 0 for none. Pure."""
    if not values:
        return 0
    ordered = sorted(values)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]


def describe_queue(samples: list[int]) -> str:
    """The messages waiting over the samples: median, the goal's percentile and the maximum."""
    return (
        f"median {percentile(samples, 50)}, {GOAL_QUEUE_PERCENTILE}th percentile "
        f"{percentile(samples, GOAL_QUEUE_PERCENTILE)}, max {max(samples, default=0)} messages "
        f"over {len(samples)} samples"
    )


def refresh_records(benchmark_id: int) -> str:
    """The coalescing records of the refresh and of the bot signals."""
    from annotation.models import RefreshQueued, RefreshTouched
    from review.models import SignalsState

    queued = RefreshQueued.objects.filter(benchmark_id=benchmark_id).exists()
    touched = RefreshTouched.objects.filter(benchmark_id=benchmark_id).count()
    state = SignalsState.objects.filter(benchmark_id=benchmark_id).first()
    signals = "-" if state is None else f"{'pending' if state.pending else 'current'} ({state.assignments} seen)"
    return f"   refresh queued {'yes' if queued else 'no '}  workers touched {touched:3d}   signals {signals}"


def refresh_current(benchmark_id: int) -> bool:
    """Every submit's work refreshed and committed: no refresh queued, no touched work left."""
    from annotation.models import RefreshQueued, RefreshTouched

    return (
        not RefreshQueued.objects.filter(benchmark_id=benchmark_id).exists()
        and not RefreshTouched.objects.filter(benchmark_id=benchmark_id).exists()
    )


def signals_current(benchmark_id: int) -> bool:
    from review.models import SignalsState

    state = SignalsState.objects.filter(benchmark_id=benchmark_id).first()
    return state is None or not state.pending


def wait_until(done: object, *, since: float, timeout: float) -> float | None:
    """Seconds from ``since`` until ``done()`` holds, polled every 0.1 s; None after ``timeout``."""
    while time.monotonic() - since < timeout:
        if done():  # type: ignore[operator]
            return time.monotonic() - since
        time.sleep(0.1)
    return None


def task_times(log_path: Path) -> dict[str, list[float]]:
    """Each task's run times (seconds) from the worker's log lines ``Task NAME[id] succeeded in Xs``."""
    found: dict[str, list[float]] = {name: [] for name in TASKS}
    names = {task: name for name, task in TASKS.items()}
    for match in re.finditer(r"Task ([\w.]+)\[[^\]]+\] succeeded in ([0-9.]+)s", log_path.read_text()):
        if match.group(1) in names:
            found[names[match.group(1)]].append(float(match.group(2)))
    return found


def refreshes_that_ran(log_path: Path) -> int:
    """The refresh tasks that refreshed (answered their summary), from the worker's log: not those
    sent again because another was running (``review.tasks.benchmark_refresh`` answers None)."""
    return len(
        re.findall(rf"Task {re.escape(TASKS['refresh'])}\[[^\]]+\] succeeded in [0-9.]+s: {{", log_path.read_text())
    )


def describe_times(times: list[float]) -> str:
    if not times:
        return "none"
    return (
        f"{len(times)} runs, median {statistics.median(times):.2f} s, max {max(times):.2f} s, total {sum(times):.1f} s"
    )


@dataclass
class Cost:
    """Seconds of one run: wall, this process's CPU and its PostgreSQL backend's CPU."""

    wall: float
    cpu: float
    backend: float

    @property
    def total_cpu(self) -> float:
        return self.cpu + self.backend


def _median_cost(costs: list[Cost]) -> Cost:
    return Cost(
        wall=statistics.median(cost.wall for cost in costs),
        cpu=statistics.median(cost.cpu for cost in costs),
        backend=statistics.median(cost.backend for cost in costs),
    )


def _backend_cpu(cursor: Any) -> Callable[[], float]:
    """The CPU seconds so far of the backend serving ``cursor`` (0 when it runs on another machine)."""
    cursor.execute("SELECT pg_backend_pid()")
    pid = cursor.fetchone()[0]
    return lambda: process_cpu_seconds(pid) or 0.0


def refresh_against_floor(
    benchmark_id: int, url: str, repeat: int = 3, *, touched_only: bool = False
) -> tuple[Cost, Cost, int]:
    """Medians of a whole refresh (``touched_only``: the refresh submits queue, of the work they
    touched) in this process and of its floor (module docstring), each rolled back; and the floor's
    statements. The refresh's COPYs (the follow-up HITs) are recorded with its statements, as
    ``bench.generate_hits`` records them, so the floor writes the same rows."""
    from django.db import connection, transaction

    from annotation.models import Benchmark
    from review.services import benchmark_refresh

    recorder = StatementRecorder()

    def refresh(record: bool) -> Cost:
        with transaction.atomic():
            benchmark = Benchmark.objects.get(pk=benchmark_id)
            with connection.cursor() as cursor:
                backend = _backend_cpu(cursor)
            backend_before, started, cpu = backend(), time.perf_counter(), time.process_time()
            if record:
                with statements_and_copies_recorded(recorder):
                    benchmark_refresh(benchmark=benchmark, touched_only=touched_only)
            else:
                benchmark_refresh(benchmark=benchmark, touched_only=touched_only)
            cost = Cost(time.perf_counter() - started, time.process_time() - cpu, backend() - backend_before)
            transaction.set_rollback(True)
        return cost

    refresh(True)
    platform = _median_cost([refresh(False) for _ in range(repeat)])
    floor_connection = psycopg2_connection(url)
    floors = []
    try:
        with floor_connection.cursor() as cursor:
            backend = _backend_cpu(cursor)
        floor_connection.rollback()
        for _ in range(repeat):
            backend_before, started, cpu = backend(), time.perf_counter(), time.process_time()
            with floor_connection.cursor() as cursor:
                replay(cursor, recorder.statements, follow_ids=False)
            floors.append(Cost(time.perf_counter() - started, time.process_time() - cpu, backend() - backend_before))
            floor_connection.rollback()
    finally:
        floor_connection.close()
    return platform, _median_cost(floors), len(recorder.statements)


def make_backlog(benchmark_id: int, annotators: list[int], submits: int) -> int:
    """``submits`` HITs claimed and submitted by the annotators in turn (as the load does, one in
    ``SPAMMER_EVERY`` failing the controls), with no worker running: the work a refresh takes in.
    How many were submitted (fewer if the HITs ran out)."""
    from annotation.models import Benchmark, Worker

    benchmark = Benchmark.objects.get(pk=benchmark_id)
    workers = {worker.pk: worker for worker in Worker.objects.filter(pk__in=annotators)}
    rng = random.Random(submits)
    made = 0
    for turn in range(submits):
        index = turn % len(annotators)
        if claim_and_submit(benchmark, workers[annotators[index]], spammer=index % SPAMMER_EVERY == 0, rng=rng):
            made += 1
    return max(1, made)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=60.0, help="submits per second, all annotators together")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the load runs")
    parser.add_argument("--annotators", type=int, default=12)
    parser.add_argument("--hits", type=int, default=6000)
    parser.add_argument("--prefill", type=int, default=2000, help="HITs already fully submitted")
    parser.add_argument(
        "--drain-timeout",
        type=float,
        default=300.0,
        help="longest wait for the state to be current (the bot signals' throttle waits 9 times their last run)",
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--redis-db", type=int, default=4)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379", help="the Redis server (no database)")
    parser.add_argument("--concurrency", type=int, default=2, help="the worker's processes (docs/deploy.md: 2)")
    parser.add_argument("--keep", action="store_true", help="keep the bench database afterwards")
    parser.add_argument(
        "--sample-every", type=float, default=0.1, help="seconds between two samples of the broker's queue"
    )
    args = parser.parse_args(argv)
    if not 0 < args.rate <= 500 or not 0 < args.seconds <= 1800 or not 0 <= args.prefill <= args.hits:
        parser.error("--rate must be 0..500, --seconds 0..1800 and --prefill at most --hits")
    if not 1 <= args.concurrency <= 8:
        parser.error("--concurrency must be 1..8")
    if not 0.01 <= args.sample_every <= 5:
        parser.error("--sample-every must be 0.01..5 seconds")
    broker_url = f"{args.redis_url.rstrip('/')}/{args.redis_db}"
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "crowdlex.settings",
            "DATABASE_URL": args.database_url,
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-secret-key-not-for-production",
            "CELERY_BROKER_URL": broker_url,
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    django.setup()
    import redis
    from django.core.management import call_command
    from django.db import connections

    from annotation.models import Benchmark, Label, Worker
    from hits.models import Assignment, AssignmentStatus

    broker = redis.Redis.from_url(broker_url)
    broker.flushdb()
    print(f"database {args.database_url}: recreating and migrating", flush=True)
    recreate_database(args.database_url)
    call_command("migrate", verbosity=0)
    began = time.monotonic()
    benchmark_id = seed(hits=args.hits, prefill=args.prefill, annotators=args.annotators)
    labels_before = Label.objects.count()
    print(
        f"seeded {args.hits} HITs, {args.prefill} of them submitted ({labels_before} labels) "
        f"in {time.monotonic() - began:.1f} s",
        flush=True,
    )
    from review.services import benchmark_refresh, benchmark_signals

    refresh_cost, floor_cost, floor_statements = refresh_against_floor(benchmark_id, args.database_url)
    with connections["default"].cursor() as cursor:
        described = machine(cursor)
    began = time.monotonic()
    benchmark_refresh(benchmark=Benchmark.objects.get(pk=benchmark_id))
    print(f"one whole refresh at this size (advancing the prefilled targets): {time.monotonic() - began:.2f} s")
    began, cpu = time.monotonic(), time.process_time()
    benchmark_signals(benchmark=Benchmark.objects.get(pk=benchmark_id), force=True)
    print(
        f"one computation of the bot signals at this size: {time.monotonic() - began:.2f} s "
        f"(CPU of this process {time.process_time() - cpu:.2f} s)",
        flush=True,
    )
    annotators = list(
        Worker.objects.filter(external_id__startswith="annotator-").order_by("pk").values_list("pk", flat=True)
    )
    connections.close_all()

    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"refresh-backlog-{os.getpid()}.log"
    worker = start_worker(
        database_url=args.database_url, broker_url=broker_url, log_path=log_path, concurrency=args.concurrency
    )
    load = Load()
    try:
        interval = len(annotators) / args.rate
        begin = time.monotonic() + 0.5
        stop = begin + args.seconds
        threads = [
            threading.Thread(
                target=annotate,
                kwargs={
                    "benchmark_id": benchmark_id,
                    "worker_id": worker_id,
                    "spammer": index % SPAMMER_EVERY == 0,
                    "interval": interval,
                    "phase": 0.5 + index * interval / len(annotators),
                    "stop": stop,
                    "load": load,
                },
                daemon=True,
            )
            for index, worker_id in enumerate(annotators)
        ]
        for thread in threads:
            thread.start()
        print(f"\n{'t (s)':>6} {'submits':>8} {'waiting':>8} {'unacked':>8}", flush=True)
        samples: list[tuple[float, int]] = []
        last_print = 0.0
        next_sample = time.monotonic()
        while any(thread.is_alive() for thread in threads):
            next_sample += args.sample_every
            time.sleep(max(0.0, next_sample - time.monotonic()))
            waiting, unacked = backlog(broker)
            elapsed = time.monotonic() - begin
            samples.append((elapsed, waiting))
            if elapsed - last_print >= 5 or not any(thread.is_alive() for thread in threads):
                last_print = elapsed
                print(
                    f"{elapsed:6.0f} {load.submits:8d} {waiting:8d} {unacked:8d}{refresh_records(benchmark_id)}",
                    flush=True,
                )
        last_submit = load.last_submit or time.monotonic()
        current_after = wait_until(lambda: refresh_current(benchmark_id), since=last_submit, timeout=args.drain_timeout)
        signals_after = wait_until(lambda: signals_current(benchmark_id), since=last_submit, timeout=args.drain_timeout)
        drained_after = wait_until(lambda: backlog(broker) == (0, 0), since=last_submit, timeout=args.drain_timeout)
        connections.close_all()
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()

    rate = load.submits / args.seconds
    waiting_samples = [waiting for _, waiting in samples]
    second_half = [waiting for elapsed, waiting in samples if elapsed > args.seconds / 2]
    print(f"\n{load.submits} submits in {args.seconds:.0f} s ({rate:.1f}/s, offered {args.rate:.0f}/s)")
    print(f"queue, messages waiting: {describe_queue(waiting_samples)}; second half: {describe_queue(second_half)}")
    times = task_times(log_path)
    for name, runs in times.items():
        print(f"{name} tasks: {describe_times(runs)}")
    for what, after in (("refresh", current_after), ("bot signals", signals_after), ("broker", drained_after)):
        state = "NOT current" if after is None else f"current {after:.1f} s"
        print(f"{what}: {state} after the last submit")
    print(f"no work: {load.no_work}   errors: {len(load.errors)}")
    for error in load.errors[:5]:
        print(f"  {error}")
    submitted = Assignment.objects.filter(hit__batch__benchmark_id=benchmark_id, status=AssignmentStatus.SUBMITTED)
    labels = Label.objects.count() - labels_before
    drained = None not in (current_after, signals_after, drained_after)
    benchmark = Benchmark.objects.get(pk=benchmark_id)
    changed = benchmark_refresh(benchmark=benchmark).changed if drained else None
    signals_changed = benchmark_signals(benchmark=benchmark, force=True).changed if drained else None
    ok = labels == load.submits * CANDIDATES_PER_HIT and changed is False and signals_changed is False

    def said(value: bool | None) -> str:
        return "nothing" if value is False else "something" if value else "-"

    print(
        f"check: {submitted.count()} submitted assignments, {labels} new labels for {load.submits} submits, "
        f"a whole refresh afterwards changed {said(changed)}, the bot signals from scratch {said(signals_changed)}: "
        f"{'OK' if ok else 'FAILED'}"
    )
    # The floor of the time to current (module docstring): the submits one refresh took in during the
    # load, submitted again (the worker stopped), and the refresh of the work they touched, in this
    # process and by psycopg2 alone, each rolled back.
    ran = refreshes_that_ran(log_path)
    per_refresh = max(1, round(load.submits / max(1, ran)))
    made = make_backlog(benchmark_id, annotators, per_refresh)
    touched_cost, touched_floor, touched_statements = refresh_against_floor(
        benchmark_id, args.database_url, touched_only=True
    )
    # The name stays the same from run to run; the median and the maximum are on the queue line above.
    figure(
        f"refresh queue, messages waiting, {GOAL_QUEUE_PERCENTILE}th percentile",
        percentile(waiting_samples, GOAL_QUEUE_PERCENTILE),
        "messages",
        goal=GOAL_QUEUE_MESSAGES,
    )
    figure("submits achieved", rate, "submits/s", goal=args.rate * 0.95, higher_is_better=True)
    to_current = current_after if current_after is not None else args.drain_timeout
    ratio_figure(
        "refresh current after the last submit",
        to_current,
        touched_floor.wall,
        goal=GOAL_CURRENT_RATIO,
        context=(
            f"{to_current:.2f} s after the last submit; the floor, the refresh of the {made} submits one refresh "
            f"took in during the load ({load.submits} submits, {ran} refreshes that ran), its {touched_statements} "
            f"statements and COPYs by psycopg2 alone: {touched_floor.wall:.3f} s (the platform's refresh of them "
            f"in process {touched_cost.wall:.3f} s, CPU {touched_cost.total_cpu:.3f} s against "
            f"{touched_floor.total_cpu:.3f} s)"
        ),
    )
    refresh_seconds = sum(times["refresh"])
    ratio_figure(
        "the refresh's time per submit during the load",
        refresh_seconds / max(1, load.submits),
        touched_floor.wall / made,
        goal=GOAL_FLOOR_RATIO,
        context=(
            f"the worker's refresh tasks ran {refresh_seconds:.2f} s for {load.submits} submits "
            f"({1000 * refresh_seconds / max(1, load.submits):.1f} ms each, {1000 / args.rate:.1f} ms between two "
            f"submits offered); the floor {1000 * touched_floor.wall / made:.1f} ms a submit (the same backlog)"
        ),
    )
    ratio_figure(
        "a whole refresh of the prefilled benchmark, CPU",
        refresh_cost.total_cpu,
        floor_cost.total_cpu,
        goal=GOAL_FLOOR_RATIO,
        context=(
            f"{refresh_cost.total_cpu:.2f} s of CPU ({refresh_cost.cpu:.2f} s here + {refresh_cost.backend:.2f} s "
            f"in PostgreSQL); its {floor_statements} statements and COPYs by psycopg2 alone "
            f"{floor_cost.total_cpu:.2f} s ({floor_cost.cpu:.2f} + {floor_cost.backend:.2f} s); wall "
            f"{refresh_cost.wall:.2f} s against {floor_cost.wall:.2f} s, {refresh_cost.wall / floor_cost.wall:.2f} x "
            f"(medians of 3, rolled back); {described}"
        ),
    )
    broker.flushdb()
    connections.close_all()
    if not args.keep:
        recreate_database(args.database_url, create=False)
    if ok and not load.errors:
        log_path.unlink(missing_ok=True)
        return 0
    print(f"the worker's log: {log_path}")
    return 1


if os.environ.get(WARM_WORKER) == "1":
    warm_worker()

if __name__ == "__main__":
    raise SystemExit(main())
