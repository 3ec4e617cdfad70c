"""Importing benchmarks: a registry of formats by name (ours, JSONL and CSV, here; schemes add
their released formats from their packages), candidates from other sources (WordNet), one
writer, and removing an import again by its origin (docs/formats.md).

The public names are re-exported by :mod:`annotation.services`.
"""

# The built-in formats register themselves when imported.
from annotation.importers import csv_format, jsonl  # noqa: F401
from annotation.importers.errors import ImportFailed
from annotation.importers.formats import (
    ImportFormat,
    ParsedFile,
    import_format,
    import_format_names,
    import_formats,
    register_import_format,
)
from annotation.importers.reading import auto_format_help, validate_upload_size
from annotation.importers.removal import ImportRemoval, ImportRemovalRefused, import_delete
from annotation.importers.report import EntityCounts, IdMismatch, ImportReport, LabelOverlap
from annotation.importers.service import benchmark_import

__all__ = [
    "EntityCounts",
    "IdMismatch",
    "ImportFailed",
    "ImportFormat",
    "ImportRemoval",
    "ImportRemovalRefused",
    "ImportReport",
    "LabelOverlap",
    "ParsedFile",
    "auto_format_help",
    "benchmark_import",
    "import_delete",
    "import_format",
    "import_format_names",
    "import_formats",
    "register_import_format",
    "validate_upload_size",
]
