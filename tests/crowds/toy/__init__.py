"""A test-only crowd: a fake panel that publishes, syncs, approves and pays through the pages, the API
and the commands with no edit outside this package (docs/architecture.md, "How to add a crowd").
Registered by the suite's settings (``CROWD_BACKENDS`` in tests/settings.py)."""

from tests.crowds.toy.backend import ToyBackend

__all__ = ["ToyBackend"]
