"""The soak's PostgreSQL transactions told apart by who ran them (``python -m bench.soak --account``).

PostgreSQL counts a database's transactions (``pg_stat_database``) but not by connection. With
``--account`` the soak has its database log every statement (``log_statement``, set on that
database alone, dropped with it), each process names itself to PostgreSQL (``application_name``),
and afterwards this module reads the server's log between the two counts: each backend's statements
are grouped into transactions (``BEGIN`` … ``COMMIT``/``ROLLBACK``, else one statement each, as
autocommit runs it), each backend is named by the process it served (sampled from
``pg_stat_activity``), and a Celery worker's transactions are given to the task that ended next in
that worker's log (one pool process per worker: its tasks run one after the other). Rows written
per table come from ``pg_stat_user_tables``, read before and after like the database's counts.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

LOG_PATH = Path("/var/log/postgresql")
# "2026-11-28 00:04:23.100 UTC [2207] postgres@sw_soak LOG:  statement: BEGIN" (Debian's log_line_prefix)
_LINE = re.compile(
    r"^(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \w+ \[(?P<pid>\d+)\] (?P<who>\S*@\S*) "
    r"(?P<level>[A-Z]+):  (?P<text>.*)$"
)
_STATEMENT = re.compile(r"^(?:statement|execute [^:]*): (?P<sql>.*)$", re.DOTALL)
# "[2026-11-28 00:10:00,123: INFO/ForkPoolWorker-1] Task review.tasks.benchmark_refresh[…] succeeded in 0.1s: …"
_TASK_END = re.compile(
    r"^\[(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): \w+/ForkPoolWorker-\d+\] "
    r"Task (?P<name>[\w.]+)\[[^\]]+\] (?:succeeded in (?P<seconds>[\d.]+)s|raised|retry|failed)"
)
# How far a statement's time may fall outside its task's (the two logs' clocks are one, their
# times are read at slightly different moments).
SLACK_SECONDS = 0.05


def server_log() -> Path | None:
    """The cluster's log file (Debian's ``pg_ctlcluster`` layout), if this process can read it."""
    logs = sorted(LOG_PATH.glob("postgresql-*-main.log"))
    return logs[-1] if logs else None


def log_offset() -> int:
    found = server_log()
    return found.stat().st_size if found else 0


@dataclass(frozen=True)
class Task:
    """A task a Celery worker ran: its name, when it began (when its run time is logged) and ended."""

    name: str
    began: float | None
    ended: float


@dataclass
class Transaction:
    pid: int
    started: float  # Unix time of its first statement
    statements: list[str] = field(default_factory=list)


def _shape(sql: str) -> str:
    """A statement with its literals and whitespace taken out, short enough to group by."""
    text = " ".join(sql.split())
    text = re.sub(r"'(?:[^']|'')*'", "?", text)
    text = re.sub(r"\b\d+(?:\.\d+)?\b", "N", text)
    text = re.sub(r"(?:\$N|%s)(?:\s*,\s*(?:\$N|%s))+", "…", text)
    return text[:90]


def transactions_in_log(*, path: Path, start: int, end: int, database: str) -> list[Transaction]:
    """The transactions of ``database``'s backends that the log holds between two offsets."""
    with path.open("rb") as log:
        log.seek(start)
        text = log.read(max(0, end - start)).decode(errors="replace")
    entries: list[tuple[float, int, str]] = []
    for line in text.split("\n"):
        if line.startswith("\t"):
            if entries:  # a statement's next line
                when, pid, sql = entries[-1]
                entries[-1] = (when, pid, f"{sql}\n{line[1:]}")
            continue
        matched = _LINE.match(line)
        if matched is None:
            continue
        if not matched["who"].endswith(f"@{database}") or matched["level"] != "LOG":
            if entries and matched["level"] == "DETAIL":
                continue
            continue
        statement = _STATEMENT.match(matched["text"])
        if statement is None:
            continue
        when = datetime.strptime(matched["when"], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
        entries.append((when, int(matched["pid"]), statement["sql"]))
    open_by_pid: dict[int, Transaction] = {}
    done: list[Transaction] = []
    for when, pid, sql in entries:
        word = sql.lstrip().split(None, 1)[0].upper().rstrip(";") if sql.strip() else ""
        current = open_by_pid.get(pid)
        if word in ("BEGIN", "START"):
            if current is not None:
                done.append(current)
            open_by_pid[pid] = Transaction(pid=pid, started=when)
        elif word in ("COMMIT", "END", "ABORT") or (word == "ROLLBACK" and " TO " not in sql.upper()):
            if current is not None:
                done.append(open_by_pid.pop(pid))
            else:
                done.append(Transaction(pid=pid, started=when, statements=[sql]))
        elif current is not None:
            current.statements.append(sql)
        else:
            done.append(Transaction(pid=pid, started=when, statements=[sql]))
    done.extend(open_by_pid.values())
    return sorted(done, key=lambda each: each.started)


def tasks_run(log_path: Path) -> list[Task]:
    """The tasks of a Celery worker's log, in the order they ended (the log's clock is this
    machine's local time)."""
    tasks = []
    for line in log_path.read_text(errors="replace").split("\n"):
        matched = _TASK_END.match(line)
        if matched:
            ended = datetime.strptime(matched["when"], "%Y-%m-%d %H:%M:%S,%f").astimezone().timestamp()
            began = ended - float(matched["seconds"]) if matched["seconds"] else None
            tasks.append(Task(name=matched["name"], began=began, ended=ended))
    return sorted(tasks, key=lambda task: task.ended)


def task_of(first: float, last: float, tasks: list[Task]) -> str | None:
    """The task whose run holds statements sent between ``first`` and ``last`` (the shortest such,
    else the first to end after ``first``): a worker's pool process runs its tasks one after the
    other."""
    holding = [
        task
        for task in tasks
        if task.began is not None and task.began - SLACK_SECONDS <= first and last <= task.ended + SLACK_SECONDS
    ]
    if holding:
        return min(holding, key=lambda task: task.ended - (task.began or 0)).name
    after = [task for task in tasks if task.ended >= first - SLACK_SECONDS]
    return min(after, key=lambda task: task.ended).name if after else None


def report(
    *,
    transactions: list[Transaction],
    applications: dict[int, str],
    celery_logs: dict[str, Path],
    submits: int,
    counted: int,
    rows_by_table: dict[str, int],
    shapes: int = 6,
) -> str:
    """The table of transactions per submit by source, with each source's commonest shapes, and the
    rows written per submit by table."""
    tasks = {name: tasks_run(path) for name, path in celery_logs.items() if path.exists()}
    every_task = sorted((task for run in tasks.values() for task in run), key=lambda task: task.ended)
    # Each backend named by its process; a Celery worker's (kept across its tasks, or opened for one
    # and closed at its end, too soon to be sampled) has each transaction named by the task running
    # when it began.
    source_by_pid: dict[int, str] = {}
    worker_tasks: dict[int, list[Task]] = {}
    for pid in sorted({each.pid for each in transactions}):
        application = applications.get(pid, "")
        if application.startswith("soak-web"):
            source_by_pid[pid] = "web (claim, submit, return)"
        elif application and not application.startswith("soak-celery"):
            source_by_pid[pid] = application
        else:
            worker_tasks[pid] = tasks.get(application, every_task)

    def source_of(each: Transaction) -> str:
        if each.pid in source_by_pid:
            return source_by_pid[each.pid]
        name = task_of(each.started, each.started, worker_tasks[each.pid])
        return f"celery: {name}" if name else "(a connection no process or task explains)"

    by_source: Counter[str] = Counter()
    statements: Counter[str] = Counter()
    shapes_of: dict[str, Counter[str]] = defaultdict(Counter)
    for each in transactions:
        source = source_of(each)
        by_source[source] += 1
        statements[source] += len(each.statements)
        opening = next((sql for sql in each.statements if not sql.upper().startswith(("SAVEPOINT", "RELEASE"))), "")
        shapes_of[source][_shape(opening)] += 1
    per = 1 / max(1, submits)
    lines = [
        f"transactions in the statement log: {len(transactions)} ({len(transactions) * per:.2f} a submit); "
        f"pg_stat_database counted {counted} ({counted * per:.2f} a submit)",
        f"{'source':<58} {'transactions':>12} {'a submit':>9} {'statements':>11}",
    ]
    for source, count in by_source.most_common():
        lines.append(f"{source:<58} {count:>12d} {count * per:>9.3f} {statements[source]:>11d}")
        for shape, times in shapes_of[source].most_common(shapes):
            lines.append(f"    {times * per:7.3f}  {shape}")
    lines.append("rows written (inserted + updated + deleted) a submit, by table:")
    for table, rows in sorted(rows_by_table.items(), key=lambda item: -item[1]):
        if rows:
            lines.append(f"    {rows * per:8.2f}  {table}")
    return "\n".join(lines)
