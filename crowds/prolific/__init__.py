"""Prolific: ``client`` (the HTTP client with retries, the study's parameters, the entry URL) and
``backend`` (the crowd backend built on it). docs/prolific.md walks through a study."""

from crowds.prolific.backend import ProlificBackend
from crowds.prolific.client import (
    DEFAULT_REJECTION_CATEGORY,
    MIN_REJECTION_MESSAGE,
    REJECTION_CATEGORIES,
    ProlificClient,
    ProlificError,
    completion_url,
    entry_url,
    estimated_minutes,
    prolific_client,
    rejection_category,
    study_params,
    study_token,
)

__all__ = [
    "DEFAULT_REJECTION_CATEGORY",
    "MIN_REJECTION_MESSAGE",
    "REJECTION_CATEGORIES",
    "ProlificBackend",
    "ProlificClient",
    "ProlificError",
    "completion_url",
    "entry_url",
    "estimated_minutes",
    "prolific_client",
    "rejection_category",
    "study_params",
    "study_token",
]
