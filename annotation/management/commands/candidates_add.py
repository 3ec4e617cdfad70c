"""python manage.py candidates_add NAME --source wordnet|llm [--model M] [--per-target N] [--prompt FILE]
[--temperature T] [--base-url URL] [--targets ID_OR_WORD ...] [--dry-run] [--json]"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from annotation.services import SOURCE_NAMES, ModelRequest, candidates_add
from crowdlex.progress import progress_bar


class Command(BaseCommand):
    help = (
        "Add candidates to a benchmark's targets from a source, as one import under the source's name: wordnet "
        "(WordNet 3.0's synonyms and similar words of each target's lemma for its part of speech), or llm (a "
        "language model at an OpenAI-compatible chat-completions endpoint, OPENAI_BASE_URL and OPENAI_API_KEY; "
        "import llm:<model>, resumable: a re-run asks only the targets not yet asked under the same model and "
        "prompt). The report says how many were new and how many the targets had already."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--source", required=True, choices=list(SOURCE_NAMES))
        parser.add_argument("--targets", nargs="+", metavar="ID_OR_WORD", help="only these targets (ids or words)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        model = parser.add_argument_group("llm source (docs/candidates.md)")
        model.add_argument("--model", help="the model to ask (default: the LLM_MODEL setting)")
        model.add_argument("--per-target", type=int, help="substitutes asked per target (default: LLM_PER_TARGET, 10)")
        model.add_argument(
            "--prompt", type=Path, metavar="FILE", help="a prompt template (UTF-8) instead of the scheme's"
        )
        model.add_argument("--temperature", type=float, help="sampling temperature (default: LLM_TEMPERATURE, 0.7)")
        model.add_argument("--base-url", help="the endpoint's base URL (default: OPENAI_BASE_URL)")
        model.add_argument(
            "--dry-run", action="store_true", help="print the first target's prompt and a cost estimate; ask nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from django.conf import settings

        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        request = None
        if options["source"] == "llm":
            prompt = None
            if options["prompt"] is not None:
                try:
                    prompt = options["prompt"].read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise CommandError(f"cannot read the prompt file {options['prompt']}: {exc}") from exc
            request = ModelRequest(
                model=options["model"] or settings.LLM_MODEL,
                per_target=options["per_target"],
                temperature=options["temperature"],
                prompt=prompt,
                prompt_name=f"the prompt file {options['prompt']}" if options["prompt"] else "the prompt",
                base_url=options["base_url"],
            )
        elif any(options[name] is not None for name in ("model", "per_target", "prompt", "temperature", "base_url")):
            raise CommandError("--model, --per-target, --prompt, --temperature and --base-url are for --source llm")
        with progress_bar(self.stderr, desc="asking", unit="targets") as bar:
            try:
                report = candidates_add(
                    benchmark=benchmark,
                    source=options["source"],
                    targets=options["targets"],
                    model=request,
                    dry_run=options["dry_run"],
                    progress=bar,
                )
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(report.as_dict(), indent=2) if options["json"] else report.summary())
