"""The student edition as a git repository, which a class hub's nbgitpuller link pulls into each
student's home: ``python -m mxlearn course --student OUT --git`` makes it (``git init``) or
commits what changed since the last edition. nbgitpuller merges an update into a student's
copy and keeps the student's version of any line both changed (``git merge -Xours``), so a fix
reaches a student when it changes lines the student did not (the teacher's guide says how).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from ..errors import N_, InputError
from ..language import say

BRANCH = "main"
# A commit needs an author; a teacher's own git identity is used when there is one.
FALLBACK_IDENTITY = ("-c", "user.name=mxlearn course", "-c", "user.email=course@mxlearn.invalid")


class NoGit(InputError):
    says = N_("course --student --git: git is not installed, so no repository can be made.")
    fix_says = N_("install git (Debian, Ubuntu: apt-get install git), or leave out --git")


class GitFailed(InputError):
    says = N_("course --student --git: git {command} failed in {out}: {problem}")
    fix_says = N_("run the same git command in {out} to see why")


def _git(out: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", *args], cwd=out, capture_output=True, text=True)
    if check and done.returncode != 0:
        problem = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
        raise GitFailed(command=args[0], out=str(out), problem=problem[0])
    return done


def commit_edition(out: Path) -> str | None:
    """Commit the edition at ``out`` (its repository made first if it has none): the new
    commit's short hash, or None when nothing changed since the last one."""
    if shutil.which("git") is None:
        raise NoGit()
    if not (out / ".git").exists():
        _git(out, "init", "--quiet", "--initial-branch", BRANCH)
    _git(out, "add", "--all")
    if _git(out, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return None
    named = _git(out, "config", "user.email", check=False).stdout.strip()
    identity = () if named else FALLBACK_IDENTITY
    message = say("Student edition of {date}", date=time.strftime("%Y-%m-%d %H:%M"))
    done = subprocess.run(
        ["git", *identity, "commit", "--quiet", "--message", message],
        cwd=out,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise GitFailed(command="commit", out=str(out), problem=done.stderr.strip()[-200:])
    return _git(out, "rev-parse", "--short", "HEAD").stdout.strip()
