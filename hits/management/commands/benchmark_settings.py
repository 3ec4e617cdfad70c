"""python manage.py benchmark_settings BENCHMARK [--set NAME=VALUE ...]

Shows a benchmark's collection settings (its scheme's, the reward and the seed) and what is locked;
``--set`` changes scheme settings through the same service as the settings page and the API
(``hits.services.benchmark_settings_update``), e.g. ``--set stopping_policy=curtail``.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from hits.services import benchmark_settings, benchmark_settings_update


def _value(text: str) -> Any:
    """A setting's value: JSON where it reads as JSON (3, 0.9, true), the text itself otherwise (curtail)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class Command(BaseCommand):
    help = "Show a benchmark's collection settings, or change its scheme's settings with --set NAME=VALUE."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark name")
        parser.add_argument(
            "--set",
            dest="changes",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a scheme setting to change (repeat for more); locked once collection started",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['benchmark']!r}")
        changes: dict[str, Any] = {}
        for change in options["changes"]:
            name, sep, value = change.partition("=")
            if not sep or not name.strip():
                raise CommandError(f"--set {change!r}: write NAME=VALUE, e.g. stopping_policy=curtail")
            changes[name.strip()] = _value(value.strip())
        if changes:
            try:
                state = benchmark_settings_update(benchmark=benchmark, scheme_settings=changes)
            except ValidationError as error:
                problems = "; ".join(
                    f"{name}: {' '.join(messages)}" for name, messages in sorted(error.message_dict.items())
                )
                raise CommandError(f"nothing changed: {problems}") from None
        else:
            state = benchmark_settings(benchmark=benchmark)
        lines = [f"{name} = {json.dumps(value)}" for name, value in state.scheme_settings.items()]
        lines += [f"reward = {state.reward}", f"seed = {state.seed}"]
        lines.append(state.locked_message or "Nothing has been collected yet: every setting can change.")
        self.stdout.write("\n".join(lines))
