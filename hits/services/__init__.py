"""Writes on batches, HITs and assignments: one function per domain operation."""

from hits.services.batches import BatchStateError, batch_close, batch_reopen
from hits.services.generation import HitsGenerationError, hits_generate

__all__ = [
    "BatchStateError",
    "HitsGenerationError",
    "batch_close",
    "batch_reopen",
    "hits_generate",
]
