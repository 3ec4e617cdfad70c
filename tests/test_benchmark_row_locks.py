"""A benchmark's row is locked to serialise work on it (HIT generation, imports, settings, batches)
with ``FOR NO KEY UPDATE``: it excludes every other such locker, and lets through the foreign-key
checks of rows that reference the benchmark, which PostgreSQL runs at commit (``FOR KEY SHARE``).
A plain ``FOR UPDATE`` there deadlocked a return, whose change-key rows are checked at its commit,
against HIT generation moving the same change key while it held the benchmark (the soak found it)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

from annotation.changes import benchmark_changed
from annotation.models import Benchmark
from tests.hits.factories import make_benchmark

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ["annotation", "schemes", "hits", "crowds", "review", "analysis", "crowdlex"]


def benchmark_row_locks() -> list[tuple[str, int, bool]]:
    """Every ``Benchmark.objects.select_for_update(...)`` in the product: (file, line, no_key)."""
    found = []
    for app in PRODUCT:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "select_for_update"
                    and "Benchmark.objects" in ast.unparse(node.func.value)
                ):
                    no_key = any(
                        k.arg == "no_key" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords
                    )
                    found.append((str(path.relative_to(ROOT)), node.lineno, no_key))
    return found


def test_every_lock_on_a_benchmarks_row_lets_foreign_key_checks_through() -> None:
    locks = benchmark_row_locks()
    assert len(locks) > 10  # the walk finds the services' locks
    assert [(path, line) for path, line, no_key in locks if not no_key] == []


@pytest.mark.django_db(transaction=True)
def test_a_change_commits_while_another_transaction_holds_the_benchmark() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    benchmark = make_benchmark()
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '5s'")
            # The change key's rows reference the benchmark: their check at commit must not wait.
            benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
    finally:
        release.set()
        holder.join(30)
