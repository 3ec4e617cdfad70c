"""Writes of the review room: the refresh that filters, flags and advances, the bot signals in a
task of their own, and researchers' decisions."""

from hits.services.workers import worker_block
from review.services.refresh import benchmark_refresh, refresh_running
from review.services.result import RefreshResult
from review.services.signals import (
    SignalsResult,
    benchmark_signals,
    signals_current,
    signals_gap,
    signals_request,
    signals_sweep,
)
from review.services.undo import UNDOABLE, UndoPlan, UndoRefused, activity_undo, activity_undo_plan
from review.services.workers import review_settings_update, worker_flag_clear, worker_unblock

__all__ = [
    "UNDOABLE",
    "RefreshResult",
    "SignalsResult",
    "UndoPlan",
    "UndoRefused",
    "activity_undo",
    "activity_undo_plan",
    "benchmark_refresh",
    "benchmark_signals",
    "refresh_running",
    "review_settings_update",
    "signals_current",
    "signals_gap",
    "signals_request",
    "signals_sweep",
    "worker_block",
    "worker_flag_clear",
    "worker_unblock",
]
