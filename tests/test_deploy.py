"""The documented production environment (docs/deploy.md) passes ``manage.py check --deploy``, and
DEBUG is off unless set. Run in subprocesses: settings are read once per process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from django.conf import settings

DEPLOY_DOC = Path(settings.BASE_DIR, "docs", "deploy.md")
# Of the suite's environment, only what finds programs: nothing the suite or its tests set.
BASE_ENVIRONMENT = ("PATH", "HOME", "LANG")


def _documented_exports() -> str:
    """The ``export`` lines of docs/deploy.md, as a shell runs them (the secret key included)."""
    lines = [line for line in DEPLOY_DOC.read_text().splitlines() if line.startswith("export ")]
    assert any(line.startswith("export SECURE_HSTS_SECONDS=") for line in lines)
    return "\n".join(lines)


def _run(shell: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {key: os.environ[key] for key in BASE_ENVIRONMENT if key in os.environ}
    return subprocess.run(
        ["bash", "-c", shell],
        cwd=settings.BASE_DIR,
        env={**clean, "PYTHON": sys.executable, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_documented_production_environment_passes_the_deploy_check() -> None:
    result = _run(f'{_documented_exports()}\n"$PYTHON" manage.py check --deploy --fail-level WARNING')

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_debug_is_off_unless_set_and_then_a_secret_key_is_required() -> None:
    show = '"$PYTHON" -c "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"'

    without_key = _run(show, DJANGO_SETTINGS_MODULE="crowdlex.settings")
    with_key = _run(show, DJANGO_SETTINGS_MODULE="crowdlex.settings", SECRET_KEY="k" * 50)

    assert without_key.returncode != 0
    assert re.search(r"SECRET_KEY is required when DEBUG is off", without_key.stderr)
    assert with_key.stdout.strip() == "False"


def test_behind_the_documented_proxy_a_direct_client_cannot_choose_its_address() -> None:
    """BEHIND_HTTPS_PROXY=1 believes X-Forwarded-For from the proxy on the loopback alone."""
    show = (
        '"$PYTHON" -c "import django; django.setup(); from django.test import RequestFactory; '
        "from crowdlex.throttling import client_ip; "
        "print(client_ip(RequestFactory().get('/', REMOTE_ADDR='192.0.2.50', HTTP_X_FORWARDED_FOR='198.51.100.1'))); "
        "print(client_ip(RequestFactory().get('/', REMOTE_ADDR='127.0.0.1', HTTP_X_FORWARDED_FOR='198.51.100.1')))\""
    )

    result = _run(f"{_documented_exports()}\n{show}", DJANGO_SETTINGS_MODULE="crowdlex.settings")

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["192.0.2.50", "198.51.100.1"]
