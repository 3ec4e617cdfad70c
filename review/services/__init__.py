"""Writes of the review room: the refresh that filters, flags and advances, and researchers' decisions."""

from hits.services.workers import worker_block
from review.services.refresh import benchmark_refresh, signals_due
from review.services.result import RefreshResult
from review.services.workers import review_settings_update, worker_flag_clear, worker_unblock

__all__ = [
    "RefreshResult",
    "benchmark_refresh",
    "review_settings_update",
    "signals_due",
    "worker_block",
    "worker_flag_clear",
    "worker_unblock",
]
