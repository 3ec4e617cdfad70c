"""What an import did, for the command, the API and the upload form."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from typing import Any

from annotation.importers.records import CandidateRecord
from annotation.models import normalize_candidate

# A target's word, normalised once for all its candidates rather than once for each.
_normalized_word = functools.lru_cache(maxsize=4096)(normalize_candidate)
# A file whose every id is wrong would otherwise fill the report; the count stays exact.
MAX_LISTED_MISMATCHES = 50
# How HITs treat a candidate spelled like its target (schemes.swords.planning, docs/batches.md).
SAME_AS_TARGET_TREATMENT = (
    "each is shown once in its HIT, as a candidate to judge, and that HIT has no target-copy control"
)


@dataclass
class EntityCounts:
    """created: new rows; merged: folded into another row (duplicates, new sources, re-spaced
    contexts); skipped: already stored unchanged, as when the same file is imported again."""

    created: int = 0
    merged: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class IdMismatch:
    """A SWORDS id that is not the SHA-1 of its fields. Kept as written so exports reproduce the file."""

    kind: str
    file_id: str
    expected_id: str


@dataclass(frozen=True)
class LabelOverlap:
    """Candidates that this import labels and that already hold labels imported under another origin."""

    origin: str
    candidates: int


@dataclass
class ImportReport:
    benchmark: str
    origin: str
    format: str
    benchmark_created: bool = False
    contexts: EntityCounts = field(default_factory=EntityCounts)
    targets: EntityCounts = field(default_factory=EntityCounts)
    candidates: EntityCounts = field(default_factory=EntityCounts)
    labels: EntityCounts = field(default_factory=EntityCounts)
    # Rows that existed before and were changed: candidates whose sources grew, file-level facts.
    updated: int = 0
    id_mismatch_count: int = 0
    id_mismatches: list[IdMismatch] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Set when the labels were declared a new label set; label_overlaps then says beside which origins.
    new_label_set: bool = False
    label_overlaps: list[LabelOverlap] = field(default_factory=list)
    # New candidates equal to their target word after normalisation, e.g. "'name' for target 'Name' (line 4)";
    # the first MAX_LISTED_MISMATCHES of them, the count stays exact.
    same_as_target_count: int = 0
    same_as_target: list[str] = field(default_factory=list)
    # New candidates by source name ("" for none), e.g. {"coinco": 12, "crowd": 3}.
    candidates_by_source: dict[str, int] = field(default_factory=dict)
    # The file was the one last imported under its origin, byte for byte: answered without reading it.
    unchanged: bool = False
    seconds: float = 0.0

    def add_mismatch(self, mismatch: IdMismatch) -> None:
        self.id_mismatch_count += 1
        if len(self.id_mismatches) < MAX_LISTED_MISMATCHES:
            self.id_mismatches.append(mismatch)

    def add_candidate(self, *, target_word: str, candidate: CandidateRecord) -> None:
        """Note a new candidate: counted by source; one spelled like its target word (after
        normalisation) is listed."""
        for source in candidate.sources or [""]:
            self.candidates_by_source[source] = self.candidates_by_source.get(source, 0) + 1
        if candidate.normalized != _normalized_word(target_word):
            return
        self.same_as_target_count += 1
        if len(self.same_as_target) < MAX_LISTED_MISMATCHES:
            where = candidate.where.item or f"line {candidate.where.line}"
            self.same_as_target.append(f"{candidate.text!r} for target {target_word!r} ({where})")

    @property
    def changed(self) -> bool:
        """Whether the database changed. Merges alone need not: a file that repeats a target merges
        it on every import."""
        created = sum(counts.created for counts in (self.contexts, self.targets, self.candidates, self.labels))
        return self.benchmark_created or created > 0 or self.updated > 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line per kind of row, then id mismatches and warnings; the command prints it."""
        lines = [f"Imported {self.origin} ({self.format}) into {self.benchmark} in {self.seconds:.2f} s"]
        if self.unchanged:
            lines.append("  the same file as the last import of this origin: nothing new, nothing written")
        for name in ("contexts", "targets", "candidates", "labels"):
            counts: EntityCounts = getattr(self, name)
            lines.append(
                f"  {name:<10} created {counts.created:>8}  merged {counts.merged:>8}  skipped {counts.skipped:>8}"
            )
        if self.candidates_by_source:
            by_source = ", ".join(
                f"{source or 'no source'} {count}" for source, count in sorted(self.candidates_by_source.items())
            )
            lines.append(f"  new candidates by source: {by_source}")
        if self.updated:
            lines.append(f"  {self.updated} existing rows updated (new sources, file facts)")
        if self.id_mismatch_count:
            lines.append(f"  {self.id_mismatch_count} ids of the file do not match their fields (kept as written):")
            lines.extend(f"    {m.kind} {m.file_id} (expected {m.expected_id})" for m in self.id_mismatches)
        if self.same_as_target_count:
            lines.append(
                f"  candidates equal to their target word: {self.same_as_target_count}; {SAME_AS_TARGET_TREATMENT}:"
            )
            lines.extend(f"    {description}" for description in self.same_as_target)
        lines.extend(f"  warning: {warning}" for warning in self.warnings)
        if self.new_label_set and self.label_overlaps:
            lines.append(f"  labels added as a new label set beside {self.overlapping_origins()}")
        return "\n".join(lines)

    def overlapping_origins(self) -> str:
        """The other origins that label the same candidates, and on how many: "'a.json' (9 candidates)"."""
        return ", ".join(
            f"{overlap.origin!r} ({overlap.candidates} candidate{'' if overlap.candidates == 1 else 's'})"
            for overlap in self.label_overlaps
        )
