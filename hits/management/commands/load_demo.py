"""python manage.py load_demo: the demo benchmark, its first batch and the accounts (idempotent; `make run` calls it).

It lives in ``hits`` because it opens a batch, and ``annotation`` (the benchmark and accounts) imports nothing from
``hits``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from annotation.services import demo_load
from hits.services import demo_batch_open


class Command(BaseCommand):
    help = (
        "Load the demo benchmark 'demo', open its step-2 batch and create the demo accounts (a researcher, "
        "two annotators); safe to repeat."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        result = demo_load()
        report = result.report
        state = "loaded" if report.changed else "already loaded"
        self.stdout.write(
            f"Demo benchmark {report.benchmark!r} {state}: {report.targets.created + report.targets.skipped} targets, "
            f"{report.candidates.created + report.candidates.skipped} candidates."
        )
        batch, opened = demo_batch_open()
        state = "opened" if opened else "already there"
        self.stdout.write(f"Demo batch {batch.pk} (step {batch.step}, {batch.hits.count()} HITs) {state}.")
        self.stdout.write("Demo accounts (log in at http://127.0.0.1:8000/accounts/login/):")
        for account, created in result.accounts:
            role = "researcher (staff, admin)" if account.researcher else "annotator"
            note = "" if created else "  (existing account: password left as it was)"
            self.stdout.write(f"  {account.username:<12} password {account.password:<22} {role}{note}")
