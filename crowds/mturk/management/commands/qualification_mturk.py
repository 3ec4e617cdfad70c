"""python manage.py qualification_mturk BENCHMARK [--sandbox | --production]

Makes the benchmark's qualification type on MTurk (once per endpoint), grants it to the MTurk workers
who passed the test on this platform, and records who took MTurk's own form of the test
(docs/qualification.md). Publishing a batch of the benchmark makes the type by itself.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.mturk import MTurkError, environment_for
from crowds.mturk.qualification import mturk_qualification_grant, mturk_qualification_sync
from hits.qualification.models import QualificationTest
from hits.qualification.services import no_test_message, offered_gold_scheme


class Command(BaseCommand):
    help = "Make a benchmark's MTurk qualification type, grant it to those who passed, read MTurk's results."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--sandbox", action="store_true", default=None)
        where.add_argument("--production", dest="sandbox", action="store_false")

    def handle(self, *args: Any, **options: Any) -> None:
        test = (
            QualificationTest.objects.select_related("benchmark").filter(benchmark__name=options["benchmark"]).first()
        )
        if test is not None and offered_gold_scheme(test.benchmark) is None:
            raise CommandError(no_test_message(test.benchmark))
        if test is None:
            raise CommandError(f"{options['benchmark']!r} has no qualification test (qualification_build makes one)")
        sandbox = settings.MTURK_SANDBOX if options["sandbox"] is None else options["sandbox"]
        environment = environment_for(sandbox=sandbox)
        try:
            granted = mturk_qualification_grant(test=test, environment=environment)
            recorded = mturk_qualification_sync(test=test, environment=environment)
        except MTurkError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"MTurk {environment}: qualification type {granted.type_id}; granted to {len(granted.granted)} "
            f"worker(s) who passed here ({granted.already} already had it); {recorded} new result(s) from MTurk's form."
        )
