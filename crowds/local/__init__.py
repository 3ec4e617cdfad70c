"""The local queue as a crowd: the platform itself is the record of every assignment."""

from crowds.local.backend import LocalBackend

__all__ = ["LocalBackend"]
