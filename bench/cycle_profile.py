"""The API's claim + submit cycle in one process, through production's WSGI handler: what its Python costs.

    python -m bench.cycle_profile prepare [--hits 3000] [--annotators 30]
    python -m bench.cycle_profile run [--cycles 300] [--warmup 60] [--profile FILE]

``prepare`` creates (drops first) a template database seeded as ``bench.claim_cycle`` seeds its own
(``bench.claim_cycle.seed``: a benchmark of step-2 HITs, annotators with API tokens, work done
before) and analysed. ``run`` copies the template into a fresh database, warms the process up with
``--warmup`` cycles, then sends ``--cycles`` claim + submit cycles of the annotators in turn to
``crowdlex.wsgi.application`` with the environment gunicorn builds, and prints the CPU time a
cycle; ``--profile`` writes cProfile's statistics of the measured cycles.

Instructions a cycle, which the machine's load does not move: run it under callgrind twice with
different ``--cycles`` and divide the difference of the totals by the difference of the cycles
(``valgrind --tool=callgrind --callgrind-out-file=/dev/null python -m bench.cycle_profile run ...``;
the total is printed at the end as "Collected"). PostgreSQL's share is not in it: it runs elsewhere.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from typing import Any

from bench import _admin, recreate_database

# This run's keys in the shared cache, which another benchmark may be using: forgotten after it.
CACHE_KEY_PREFIX = "cycle-profile"
DEFAULT_TEMPLATE_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_bench_cycle_template"


def _environment(args: argparse.Namespace, database_url: str) -> None:
    from bench.claim_cycle import server_environment

    os.environ.update(
        server_environment(database_url=database_url, redis_db=args.redis_db, cache_redis_db=args.cache_redis_db)
    )
    os.environ["CACHE_KEY_PREFIX"] = CACHE_KEY_PREFIX


def _forget(redis_url: str, pattern: str) -> None:
    """Delete this run's keys alone: the Redis database may be shared with another benchmark."""
    import redis

    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match=pattern, count=1000):
        client.delete(key)


def prepare(args: argparse.Namespace) -> None:
    _environment(args, args.template_url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from bench.claim_cycle import seed

    recreate_database(args.template_url)
    call_command("migrate", verbosity=0)
    seed(hits=args.hits, clients=args.annotators, history=args.history)
    connections.close_all()
    print(f"prepared {args.template_url}: {args.hits} HITs, {args.annotators} annotators")


def _copy(template_url: str, url: str) -> None:
    admin, template = _admin(template_url)
    _, name = _admin(url)
    with admin.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    admin.close()


def _tokens() -> list[str]:
    """The annotators' API tokens, in the order of their names."""
    from django.db import connections
    from rest_framework.authtoken.models import Token

    tokens = list(Token.objects.order_by("user__username").values_list("key", flat=True))
    connections.close_all()
    return tokens


def _environ(path: str, body: bytes, token: str) -> dict[str, Any]:
    """What gunicorn hands the application for http.client's POST (bench.claim_cycle.client_loop)."""
    return {
        "REQUEST_METHOD": "POST",
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "RAW_URI": path,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8131",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "50000",
        "HTTP_HOST": "127.0.0.1:8131",
        "HTTP_ACCEPT_ENCODING": "identity",
        "HTTP_AUTHORIZATION": f"Token {token}",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def run(args: argparse.Namespace) -> None:
    _copy(args.template_url, args.database_url)
    _environment(args, args.database_url)
    _forget(os.environ["CACHE_URL"], f"*{CACHE_KEY_PREFIX}*")
    # Production's handler, which sets Django up (before any model is imported).
    from crowdlex.wsgi import application

    tokens = _tokens()

    statuses: dict[int, int] = {}

    def request(path: str, body: bytes, token: str) -> bytes:
        answered: list[str] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            answered.append(status)
            return lambda data: None

        response = application(_environ(path, body, token), start_response)
        content = b"".join(response)
        response.close()  # type: ignore[attr-defined]
        code = int(answered[0].split()[0])
        statuses[code] = statuses.get(code, 0) + 1
        return content

    def cycle(number: int) -> None:
        token = tokens[number % len(tokens)]
        claimed = json.loads(request("/api/work/claim", b"{}", token))
        answers = {str(item["id"]): "accept" for item in claimed["items"]}
        body = json.dumps({"answers": answers, "seconds_on_page": 1.0}).encode()
        request(f"/api/work/assignments/{claimed['id']}/submit", body, token)

    for number in range(args.warmup):
        cycle(number)
    profiler = None
    if args.profile:
        import cProfile

        # The thread's CPU time, not the wall's: the waits on PostgreSQL are not the process's work.
        profiler = cProfile.Profile(time.thread_time_ns, 1e-9) if args.cpu_timer else cProfile.Profile()
        profiler.enable()
    started = time.process_time()
    for number in range(args.warmup, args.warmup + args.cycles):
        cycle(number)
    spent = time.process_time() - started
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    print(f"{args.cycles} cycles: {spent / max(args.cycles, 1) * 1000:.3f} ms CPU a cycle; answers {statuses}")
    _forget(os.environ["CACHE_URL"], f"*{CACHE_KEY_PREFIX}*")
    _forget(os.environ["CELERY_BROKER_URL"], "celery")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["prepare", "run"])
    parser.add_argument("--template-url", default=os.environ.get("BENCH_TEMPLATE_URL", DEFAULT_TEMPLATE_URL))
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/crowdlex_bench_cycle"),
    )
    parser.add_argument("--redis-db", type=int, default=3, help="the broker's Redis database")
    parser.add_argument("--cache-redis-db", type=int, default=None, help="the shared cache's (default: the next one)")
    parser.add_argument("--hits", type=int, default=3000)
    parser.add_argument("--annotators", type=int, default=30)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=60)
    parser.add_argument("--profile", default="", help="write cProfile's statistics of the measured cycles here")
    parser.add_argument("--cpu-timer", action="store_true", help="profile by the thread's CPU time, not the wall's")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args)
    else:
        run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
