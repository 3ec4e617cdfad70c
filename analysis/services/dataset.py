"""The dataset folder of a benchmark (``export_benchmark NAME --format dataset --output DIR``):
the tables and the released format written by the scheme's layout (``analysis.exports.dataset``)
and a dataset card a reader understands without the platform."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

import yaml
from django.db.models import F

from analysis.exports.base import benchmark_worker_names
from analysis.exports.dataset import WHOLE, DatasetLayout, dataset_layout, write_table
from analysis.services.reports import (
    benchmark_agreement,
    benchmark_data,
    benchmark_filter_audit,
    benchmark_statistics,
)
from analysis.services.splits import benchmark_splits
from annotation.models import Benchmark
from annotation.selectors import benchmark_simulated
from crowdlex.progress import Progress
from crowds.interface.costs import hourly_wage
from hits.models import SUBMITTED_STATUSES, Assignment, Batch
from review.models import FlagReason, WorkerFlag
from schemes import get_scheme

#: Hugging Face's size categories, by the rows of the largest table.
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))
#: The licenses a dataset card may name: Hugging Face's identifiers (SPDX-like, lower case) of the
#: licenses datasets are usually released under, plus "other" and "unknown".
DATASET_LICENSES = (
    "apache-2.0",
    "cc-by-2.0",
    "cc-by-3.0",
    "cc-by-4.0",
    "cc-by-nc-4.0",
    "cc-by-nc-nd-4.0",
    "cc-by-nc-sa-4.0",
    "cc-by-nd-4.0",
    "cc-by-sa-3.0",
    "cc-by-sa-4.0",
    "cc0-1.0",
    "gpl-3.0",
    "mit",
    "odbl",
    "odc-by",
    "pddl",
    "other",
    "unknown",
)
LICENSES_HINT = "one of " + ", ".join(DATASET_LICENSES) + " (Hugging Face's license identifiers)"


def license_check(license: str) -> None:
    """Refuse a license the dataset card does not know (ValueError naming the known ones)."""
    if license not in DATASET_LICENSES:
        raise ValueError(f"--license {license!r} is not a license the dataset card knows: {LICENSES_HINT}")


SIMULATED_NOTE = (
    "Labels of this benchmark were given by a simulated crowd (`simulate_crowd`), not by people: "
    "use it to rehearse a collection or test a pipeline, never as human judgments."
)


@dataclass
class DatasetFolder:
    """What was written: rows per table and split, and the files, relative to the folder."""

    path: Path
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


def benchmark_dataset_write(
    *, benchmark: Benchmark, directory: Path, license: str = "unknown", progress: Progress | None = None
) -> DatasetFolder:
    """Write the dataset folder into ``directory`` (created; it must not exist or be empty).

    Workers are pseudonymised (``analysis.pseudonyms``). The folder appears complete or not at
    all: it is written beside under a temporary name and renamed. Memory is bounded by a batch of
    rows per table (``analysis.exports.dataset.BATCH_ROWS``). ``progress(files written, files)`` after
    each table of a split, each released file and the card.
    """
    license_check(license)
    if directory.exists() and any(directory.iterdir()):
        raise ValueError(f"{directory} is not empty: give a new folder")
    if not directory.parent.is_dir():
        raise ValueError(f"the folder {directory.parent} does not exist: create it first, or give another --output")
    layout = dataset_layout(benchmark)
    splits: list[str | None] = [*benchmark_splits(benchmark=benchmark)] or [None]
    workers = benchmark_worker_names(benchmark=benchmark)
    partial = directory.with_name(f"{directory.name}.{uuid.uuid4().hex}.partial")
    folder = DatasetFolder(path=directory)
    steps = (len(layout.tables) + 1) * len(splits) + 1
    done = 0

    def advance() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps)

    try:
        for table in layout.tables:
            (partial / table.name).mkdir(parents=True)
            for split in splits:
                name = split or WHOLE
                rows = table.rows(benchmark, split, workers)
                parquet, jsonl = f"{table.name}/{name}.parquet", f"{table.name}/{name}.jsonl"
                folder.rows.setdefault(table.name, {})[name] = write_table(
                    table, rows, parquet=partial / parquet, jsonl=partial / jsonl
                )
                folder.files += [parquet, jsonl]
                advance()
        (partial / layout.released.folder).mkdir()
        for split in splits:
            released = f"{layout.released.folder}/{split or WHOLE}{layout.released.suffix}"
            with (partial / released).open("w", encoding="utf-8") as out:
                layout.released.write(benchmark, split, out)
            folder.files.append(released)
            advance()
        card = dataset_card(benchmark=benchmark, layout=layout, folder=folder, splits=splits, license=license)
        (partial / "README.md").write_text(card, encoding="utf-8")
        folder.files.insert(0, "README.md")
        advance()
        if directory.exists():
            directory.rmdir()
        os.replace(partial, directory)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def benchmark_dataset_zip(*, benchmark: Benchmark, path: Path, license: str = "unknown") -> Path:
    """The dataset folder as one zip file (the export job's file for the page and the API)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / benchmark.name
        benchmark_dataset_write(benchmark=benchmark, directory=folder, license=license)
        archive = shutil.make_archive(str(Path(scratch) / "dataset"), "zip", root_dir=scratch, base_dir=benchmark.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(archive, path)
    return path


# --- the card --------------------------------------------------------------------------------


def _size_category(rows: int) -> str:
    return next((name for limit, name in SIZE_CATEGORIES if rows < limit), "n>1M")


def _header(*, benchmark: Benchmark, layout: DatasetLayout, folder: DatasetFolder, license: str) -> str:
    largest = max((sum(counts.values()) for counts in folder.rows.values()), default=0)
    configs = [
        {
            "config_name": table.name,
            **({"default": True} if number == 0 else {}),
            "data_files": [
                {"split": split, "path": f"{table.name}/{split}.parquet"} for split in folder.rows[table.name]
            ],
        }
        for number, table in enumerate(layout.tables)
    ]
    header = {
        "pretty_name": benchmark.title or benchmark.name,
        "license": license,
        "language": [benchmark.language],
        "task_categories": list(layout.task_categories),
        "tags": ["lexical-substitution", "crowdsourcing", str(benchmark.scheme)],
        "size_categories": [_size_category(largest)],
        "configs": configs,
    }
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _steps(benchmark: Benchmark) -> list[str]:
    """The scheme's steps in words; a step that another scheme runs (SWORDS's generation step) is
    named only if the benchmark collected it, and counts annotators per target, not labels."""
    scheme = get_scheme(benchmark)
    collected = set(Batch.objects.filter(benchmark=benchmark).values_list("step", flat=True))
    words = []
    for step in scheme.steps:
        runner = get_scheme(benchmark, step=step.number)
        per_hit = runner.assignments_per_hit(runner.settings(benchmark), step.number)
        if not step.scheme:
            words.append(f"{step.title}, {per_hit} labels per candidate")
        elif step.number in collected:
            words.append(f"{step.title}, {per_hit} annotators per target")
    return words


def _collection(benchmark: Benchmark, origins: list[str]) -> list[str]:
    scheme = get_scheme(benchmark)
    settings = scheme.settings(benchmark)
    lines = [
        "## How it was collected",
        "",
        f"- **Scheme**: {scheme.title}.",
        "- **Steps**: " + "; ".join(_steps(benchmark)) + ".",
        "- **Items of a HIT**: " + "; ".join(scheme.item_kinds.values()) + ".",
    ]
    threshold = scheme.control_threshold(settings)
    if threshold is not None:
        lines.append(
            f"- **Controls**: a worker whose control accuracy falls below {threshold:.0%} has all their "
            "assignments filtered; their labels do not count, and their HITs are collected again from others."
        )
    batches = list(Batch.objects.filter(benchmark=benchmark).order_by("id"))
    if batches:
        backends = sorted({batch.get_backend_display() for batch in batches})
        rewards = sorted({batch.reward for batch in batches})
        qualifications = sorted(
            {yaml.safe_dump(batch.qualifications).strip() for batch in batches if batch.qualifications}
        )
        lines += [
            f"- **Crowd**: {', '.join(backends)}; {len(batches)} batches.",
            f"- **Qualifications**: {'; '.join(qualifications) or 'none'}.",
            f"- **Reward**: {', '.join(f'${reward}' for reward in rewards)} per assignment.",
        ]
        if benchmark_simulated(benchmark):
            # Simulated workers' times come from a model of people, not from people: no pay follows from them.
            lines.append("- **Time per assignment**: simulated, so no hourly pay is reported.")
        else:
            seconds = _seconds_per_assignment(benchmark)
            wages = [hourly_wage(reward, seconds) for reward in rewards]
            lines.append(
                f"- **Time per assignment** (median): {_number(seconds, 0)} s; implied hourly pay: "
                + ", ".join("n/a" if wage is None else f"${wage}" for wage in wages)
                + "."
            )
    else:
        lines.append("- **Crowd**: no work was collected on the platform; every label was imported.")
    if origins:
        lines.append(f"- **Imported labels** from: {', '.join(f'`{origin}`' for origin in origins)}.")
    return [*lines, ""]


def _seconds_per_assignment(benchmark: Benchmark) -> float | None:
    submitted = Assignment.objects.filter(hit__batch__benchmark=benchmark, status__in=SUBMITTED_STATUSES)
    seconds = [value for value in submitted.values_list("seconds_on_page", flat=True) if value]
    if not seconds:
        spans = submitted.filter(submitted_at__isnull=False).annotate(span=F("submitted_at") - F("claimed_at"))
        seconds = [span.total_seconds() for span in spans.values_list("span", flat=True)]
    return median(seconds) if seconds else None


def _statistics(benchmark: Benchmark, splits: list[str | None]) -> list[str]:
    lines = [
        "## Statistics",
        "",
        "As in Table 2 of Lee et al. (2021): a candidate's score is accepts / valid labels (abstain counts as "
        "not accepted); acceptable means a score above 0.5, conceivable above 0, inconceivable 0.",
        "",
        "| split | contexts | targets | candidates | labels | candidates / target | inconceivable / target "
        "| conceivable / target | acceptable / target | abstain labels |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for split in splits:
        stats = benchmark_statistics(benchmark=benchmark, data=benchmark_data(benchmark=benchmark, split=split))
        per = stats["per_target"]
        lines.append(
            f"| {split or WHOLE} | {stats['contexts']} | {stats['targets']} | {stats['candidates']} "
            f"| {stats['labels']} "
            f"| {_number(per['candidates'])} | {_number(per['inconceivable'])} | {_number(per['conceivable'])} "
            f"| {_number(per['acceptable'])} | {_percent(stats['abstain_share'])} |"
        )
    return [*lines, ""]


def _quality(benchmark: Benchmark) -> list[str]:
    data = benchmark_data(benchmark=benchmark)
    agreement = benchmark_agreement(benchmark=benchmark, data=data, include_pairs=False)
    alpha, without = agreement["alpha"], agreement["alpha_without_abstain"]
    kappa = agreement["kappa"]["summary"]
    lines = [
        "## Agreement",
        "",
        f"- Krippendorff's alpha (nominal, accept / reject / abstain): {_number(alpha['alpha'], 3)}, "
        f"{alpha['confidence']:.0%} bootstrap interval {_number(alpha['low'], 3)} to {_number(alpha['high'], 3)} "
        f"({alpha['units']} candidates, {alpha['resamples']} resamples).",
        f"- Without abstain labels: {_number(without['alpha'], 3)} "
        f"({_number(without['low'], 3)} to {_number(without['high'], 3)}).",
        f"- Cohen's kappa over {kappa['pairs_with_kappa']} pairs of workers with common candidates: "
        f"mean {_number(kappa['mean'], 3)}, weighted by common candidates {_number(kappa['weighted_mean'], 3)}.",
        "",
    ]
    submitted = Assignment.objects.filter(hit__batch__benchmark=benchmark, status__in=SUBMITTED_STATUSES)
    flags = Counter(WorkerFlag.objects.filter(benchmark=benchmark).values_list("reason", flat=True))
    lines += [
        "## Spam filtering",
        "",
        f"- Assignments submitted: {submitted.count()}; filtered (their labels do not count): "
        f"{submitted.filter(filtered=True).count()}.",
        "- Workers flagged, by reason: "
        + ("; ".join(f"{FlagReason(reason).label}: {count}" for reason, count in sorted(flags.items())) or "none")
        + ".",
        "",
    ]
    audit = benchmark_filter_audit(benchmark=benchmark, data=data)
    lines += ["## Filter audit", ""]
    if audit["audited"]:
        lines.append(
            f"Of {audit['audited']} candidates with all {audit['min_labels']} labels, the step-2 rule (at least "
            f"{audit['pass_min_accepts']} accept among the first {audit['step2_labels']} labels) would drop "
            f"{audit['dropped']} ({_percent(audit['share_dropped'])}); {audit['dropped_acceptable']} of them are "
            f"acceptable ({_percent(audit['share_of_acceptable_lost'])} of all acceptable candidates lost)."
        )
    else:
        lines.append("No candidate has all its labels yet, so the step-2 rule cannot be audited.")
    return [*lines, ""]


def _files(layout: DatasetLayout, folder: DatasetFolder) -> list[str]:
    lines = [
        "## Files",
        "",
        "Each table is one configuration with a Parquet file per split (what `datasets.load_dataset` reads) and "
        "the same rows as JSON lines beside it:",
        "",
    ]
    for table in layout.tables:
        counts = ", ".join(f"{split} {rows}" for split, rows in folder.rows[table.name].items())
        lines += [f"### `{table.name}`: {table.description} ({counts} rows)", ""]
        lines += [f"- `{column.name}`: {column.description}" for column in table.columns]
        lines.append("")
    lines += [
        f"`{layout.released.folder}/` holds each split in the scheme's released format: {layout.released.title}.",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'candidates = load_dataset("path/to/this/folder", "{layout.tables[min(1, len(layout.tables) - 1)].name}")',
        "```",
        "",
    ]
    return lines


def _citation(benchmark: Benchmark, layout: DatasetLayout) -> list[str]:
    author = (benchmark.created_by.get_full_name() if benchmark.created_by else "") or "The authors"
    return [
        "## Citation",
        "",
        "```bibtex",
        f"@misc{{{benchmark.name},",
        f"  title = {{{benchmark.title or benchmark.name}}},",
        f"  author = {{{author}}},",
        f"  year = {{{benchmark.created_at.year}}},",
        "  note = {A lexical substitution benchmark collected with crowdlex}",
        "}",
        "```",
        "",
        "It follows the method of:",
        "",
        "```bibtex",
        layout.method_citation,
        "```",
        "",
    ]


def dataset_card(
    *, benchmark: Benchmark, layout: DatasetLayout, folder: DatasetFolder, splits: list[str | None], license: str
) -> str:
    """The README.md of the folder: the YAML header Hugging Face reads, then sections from the benchmark."""
    origins = benchmark_data(benchmark=benchmark).origins
    summary = [
        f"# {benchmark.title or benchmark.name}",
        "",
        benchmark.description or "A lexical substitution benchmark: for a word in context, which substitutes fit?",
        "",
        *(
            [
                f"**Simulated data.** {SIMULATED_NOTE}",
                "",
            ]
            if benchmark_simulated(benchmark)
            else []
        ),
        f"License: `{license}`. Workers appear under pseudonyms that are stable within this dataset and cannot be "
        "linked to other datasets or to their crowd accounts.",
        "",
    ]
    sections = [
        summary,
        [
            *_collection(benchmark, origins)[:-1],
            *(layout.collection_notes(benchmark) if layout.collection_notes else []),
            "",
        ],
        *(
            [layout.card_sections(benchmark, splits)]
            if layout.card_sections is not None
            else [_statistics(benchmark, splits), _quality(benchmark)]
        ),
        _files(layout, folder),
        _citation(benchmark, layout),
    ]
    return (
        _header(benchmark=benchmark, layout=layout, folder=folder, license=license)
        + "\n"
        + "\n".join(line for section in sections for line in section)
    )


__all__ = [
    "DATASET_LICENSES",
    "LICENSES_HINT",
    "SIMULATED_NOTE",
    "DatasetFolder",
    "benchmark_dataset_write",
    "benchmark_dataset_zip",
    "dataset_card",
    "license_check",
]
