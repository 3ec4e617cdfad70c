""".ci/check-links, which `make test` runs: a tracked symbolic link must stay inside the repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CHECK = Path(__file__).resolve().parent.parent / ".ci" / "check-links"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def repository_with_links(path: Path, links: dict[str, str]) -> Path:
    """A git repository that tracks a README and the given links (path -> target)."""
    git(path, "init", "--quiet")
    (path / "README").write_text("hello\n")
    for link, target in links.items():
        (path / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path / link)
    git(path, "add", "--all")
    return path


def check(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHECK)], cwd=repo, capture_output=True, text=True)


def test_links_that_stay_inside_the_repository_pass(tmp_path: Path) -> None:
    repo = repository_with_links(tmp_path, {"docs/readme": "../README", "here": "docs"})

    assert check(repo).returncode == 0


def test_an_absolute_link_and_a_link_climbing_out_fail_by_name(tmp_path: Path) -> None:
    repo = repository_with_links(
        tmp_path, {".venv": "/work/main/.venv", "docs/up": "../../elsewhere", "docs/ok": "../README"}
    )

    result = check(repo)

    assert result.returncode == 1
    assert "tracked link .venv points outside the repository, to /work/main/.venv" in result.stderr
    assert "tracked link docs/up points outside the repository, to ../../elsewhere" in result.stderr
    assert "docs/ok" not in result.stderr


def test_an_untracked_link_is_no_concern_of_the_check(tmp_path: Path) -> None:
    repo = repository_with_links(tmp_path, {})
    os.symlink("/work/main/.venv", repo / ".venv")

    assert check(repo).returncode == 0
