"""The README's flows run to the end, as written: what `make run` does (from the Makefile), a tour that
leaves a HIT claimed, the demo's simulation (from the README's tour), then every line of the README's
end-to-end block, in order, in one shell on a fresh SQLite database with DEBUG=1 (the embedded
default). The commands are read from README.md and the Makefile, so neither can drift from this test;
only `M=` and the repository's paths are pointed at this checkout."""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
README = ROOT / "README.md"
MAKEFILE = ROOT / "Makefile"
#: Folders of this repository the README's commands name; in the temporary folder they point here.
REPOSITORY_PATHS = ("annotation/demo/", "docs/examples/")

TOUR = r"""
import re
import django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from hits.models import Assignment, AssignmentStatus

browser = Client()
browser.force_login(User.objects.get(username="annotator1"))
claimed = browser.post("/work/next")
page = browser.get(claimed["Location"]).content.decode()
ids = sorted(set(re.findall(r'name="item-(\d+)"', page)))
submitted = browser.post(claimed["Location"], {**{f"item-{i}": "accept" for i in ids}, "seconds_on_page": "30"})
# Submitting opened the next HIT: the annotator leaves it claimed, as the tour does.
browser.get(submitted["Location"])
held = Assignment.objects.filter(worker__user__username="annotator1", status=AssignmentStatus.CLAIMED).count()
print(f"HELD {held}")
"""


def readme_blocks() -> tuple[str, str]:
    """The demo's simulation line (inline code in the tour) and the end-to-end block (a ```sh block)."""
    text = README.read_text(encoding="utf-8")
    demo = re.search(r"`(DEBUG=1 \.venv/bin/python manage\.py simulate_crowd demo [^`]*)`", text)
    block = re.search(r"## A collection, end to end.*?```sh\n(.*?)```", text, re.DOTALL)
    assert demo and block, "README.md lost its demo simulation or its end-to-end block"
    return demo.group(1), block.group(1)


def make_run_commands() -> list[str]:
    """The manage.py commands of the Makefile's `run` recipe, the server left out."""
    recipe = re.search(r"^run: [^\n]*\n((?:run: [^\n]*\n)*)((?:\t[^\n]*\n)+)", MAKEFILE.read_text(), re.MULTILINE)
    assert recipe, "the Makefile lost its run target"
    lines = [line.strip() for line in recipe.group(2).splitlines()]
    commands = [line.replace("$(BIN)/python", ".venv/bin/python") for line in lines if "manage.py" in line]
    assert any("runserver" in command for command in commands)
    return [command for command in commands if "runserver" not in command]


def in_checkout(command: str) -> str:
    """The command with the venv's python and manage.py of this checkout, and its paths pointed here."""
    command = command.replace(".venv/bin/python manage.py", f"{shlex.quote(sys.executable)} {ROOT / 'manage.py'}")
    for path in REPOSITORY_PATHS:
        command = command.replace(f" {path}", f" {ROOT}/{path}")
    return command


def shell(script: str, *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def embedded(tmp_path: Path) -> dict[str, str]:
    """The environment of a fresh clone: nothing set but what the README sets, on a SQLite file here."""
    environment = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    environment.update(
        {
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "DERIVED_CACHE_DIR": str(tmp_path / "cache"),
        }
    )
    return environment


def test_the_readme_runs_word_for_word_to_its_end(tmp_path: Path, embedded: dict[str, str]) -> None:
    demo, block = readme_blocks()
    outputs: list[str] = []

    def run(script: str, env: dict[str, str]) -> str:
        result = shell(script, cwd=tmp_path, env=env)
        output = result.stdout + result.stderr
        outputs.append(output)
        assert result.returncode == 0, f"{script}\n{output[-4000:]}"
        return result.stdout

    # `make run`, as its recipe says (it sets DEBUG=1 for this default).
    for command in make_run_commands():
        run(in_checkout(command), {**embedded, "DEBUG": "1"})
    tour_env = {
        **embedded,
        "DEBUG": "1",
        "DJANGO_SETTINGS_MODULE": "crowdlex.settings",
        "PYTHONPATH": str(ROOT),
        "ALLOWED_HOSTS": "testserver",
    }
    tour = run(f"{shlex.quote(sys.executable)} -c {shlex.quote(TOUR)}", tour_env)
    # The tour leaves one claim open, which used to hold its slot and stop the demo's crowd.
    assert "HELD 1" in tour

    simulated = run(in_checkout(demo), embedded)
    assert "benchmark demo (seed 1): finished" in simulated
    assert "targets done: 14/14" in simulated

    lines = block.splitlines()
    assert lines[1].startswith("M=")
    script = "\n".join([lines[0], in_checkout(lines[1]), *(in_checkout(line) for line in lines[2:])])
    printed = run("set -x\n" + script, embedded)

    # Every command ran and did what its comment says.
    assert "Dry run: nothing is sent to Prolific." in printed
    assert "Qualification test of mybench:" in printed
    assert "benchmark mybench (seed 1): finished" in printed
    assert "targets done: 14/14" in printed.split("benchmark mybench (seed 1)")[1]
    with gzip.open(tmp_path / "mybench.json.gz", "rt", encoding="utf-8") as exported:
        swords = json.load(exported)
    assert len(swords["targets"]) == 14 and swords["substitute_labels"]
    assert (tmp_path / "workers.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    card = (tmp_path / "mybench-dataset" / "README.md").read_text(encoding="utf-8")
    assert "license: cc-by-4.0" in card
    assert "Simulated data." in card and "implied hourly pay" not in card
    assert re.search(r"Precision at 10\s+\d", printed) or re.search(r"GAP\s+\d", printed), printed[-2000:]
    # Nothing a user did wrong, and no task's log line, reached the terminal.
    everything = "\n".join(outputs)
    assert "Traceback" not in everything
    assert "RefreshResult" not in everything


def test_the_readme_names_only_files_that_exist() -> None:
    _, block = readme_blocks()
    named = {word for word in block.split() if word.startswith(REPOSITORY_PATHS)}
    assert named, "the end-to-end block names no data file of the repository"
    for path in named:
        assert (ROOT / path).is_file(), path


def test_make_run_installs_the_runtime_lock_only_and_make_test_adds_the_development_lock(tmp_path: Path) -> None:
    for name in ("Makefile", "requirements.txt", "requirements-dev.txt"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())

    def planned(target: str) -> str:
        result = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout

    run = planned("run")
    assert "-r requirements.txt" in run and "requirements-dev.txt" not in run
    tests = planned("lint")  # the first of `make test`'s steps that needs the venv
    assert "-r requirements.txt" in tests and "-r requirements-dev.txt" in tests
    # Once the runtime is in place, the tests add only the development lock.
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / ".runtime").touch()
    again = planned("venv")
    assert "-r requirements.txt" not in again and "-r requirements-dev.txt" in again
