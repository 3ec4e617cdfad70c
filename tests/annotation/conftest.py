"""Uploads stored for import jobs go to a folder of each test's own; ``root`` is the admin's client of a superuser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client


@pytest.fixture(autouse=True)
def _media_root(settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def root(client: Client) -> Client:
    client.force_login(User.objects.create_superuser("root", password="x"))
    return client
