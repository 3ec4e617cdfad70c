"""Benchmarks of the platform (``python -m bench`` runs them all; ``--list`` lists them); not tests."""

import os
import signal
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse


def django_setup() -> None:
    """Django in this process, with the development settings unless the environment says otherwise
    (DEBUG is off unless set, and then a SECRET_KEY is required)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux /proc), None once it is gone or when it
    runs on another machine."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """End a server the benchmark started: SIGTERM (a graceful stop), then SIGKILL after 30 s."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def figure(name: str, value: float, unit: str, *, goal: float, higher_is_better: bool = False) -> bool:
    """Print one measured figure against its goal on a line of its own (``make bench`` gathers these
    lines into its summary) and say whether the goal is met."""
    met = value >= goal if higher_is_better else value <= goal
    sign = ">=" if higher_is_better else "<="
    print(f"FIGURE {name}: {value:.4g} {unit} (goal {sign} {goal:g} {unit}): {'met' if met else 'MISSED'}", flush=True)
    return met


def _admin(url: str) -> tuple[Any, str]:
    """An autocommit connection to the server of ``url`` (its ``postgres`` database) and the name
    of the database ``url`` names, which must be plain: the benchmarks create and drop it."""
    import psycopg2

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    if not name.replace("_", "").isalnum():
        raise SystemExit(f"refusing to manage a database named {name!r}")
    admin = psycopg2.connect(
        host=parsed.hostname, port=parsed.port or 5432, user=parsed.username or "postgres", dbname="postgres"
    )
    admin.autocommit = True
    return admin, name


def ensure_database(url: str) -> None:
    """Create the benchmark's database if it does not exist (its data is kept between runs)."""
    admin, name = _admin(url)
    with admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()


def recreate_database(url: str, *, create: bool = True) -> None:
    """Drop the benchmark's database and, unless told not to, create it empty."""
    admin, name = _admin(url)
    with admin.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()
