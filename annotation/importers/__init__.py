"""Importing benchmarks: our JSONL and CSV formats and the public SWORDS JSON (docs/formats.md),
and removing an import again by its origin.

The public names are re-exported by :mod:`annotation.services`.
"""

from annotation.importers.errors import ImportFailed
from annotation.importers.reading import FORMATS, validate_upload_size
from annotation.importers.removal import ImportRemoval, ImportRemovalRefused, import_delete
from annotation.importers.report import EntityCounts, IdMismatch, ImportReport, LabelOverlap
from annotation.importers.service import benchmark_import

__all__ = [
    "FORMATS",
    "EntityCounts",
    "IdMismatch",
    "ImportFailed",
    "ImportRemoval",
    "ImportRemovalRefused",
    "ImportReport",
    "LabelOverlap",
    "benchmark_import",
    "import_delete",
    "validate_upload_size",
]
