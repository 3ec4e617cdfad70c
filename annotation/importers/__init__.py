"""Importing benchmarks: our JSONL and CSV formats and the public SWORDS JSON (docs/formats.md).

The public names are re-exported by :mod:`annotation.services`.
"""

from annotation.importers.errors import ImportFailed
from annotation.importers.reading import FORMATS, validate_upload_size
from annotation.importers.report import EntityCounts, IdMismatch, ImportReport
from annotation.importers.service import benchmark_import

__all__ = [
    "FORMATS",
    "EntityCounts",
    "IdMismatch",
    "ImportFailed",
    "ImportReport",
    "benchmark_import",
    "validate_upload_size",
]
