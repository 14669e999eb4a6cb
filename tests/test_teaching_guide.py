"""The teacher's guide, in both languages, names the routes a class takes to a machine that runs
MXNet 1.9.1 and to the data, and cites only commands and options that mxlearn's command line has:
a guide that tells a teacher to type what does not exist fails here, not in front of a class."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chinese_prose import problems

from mxlearn.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
GUIDES = [ROOT / "notebooks" / "TEACHING.md", ROOT / "notebooks" / "zh" / "TEACHING.md"]
# Windows, Apple Silicon, a class's server, the data prepared once; and where the data is found
ROUTES = ["WSL2", "Rosetta 2", "arch -x86_64", "JupyterHub", "The Littlest JupyterHub"]
DATA = ["MXLEARN_DATA", "XDG_CACHE_HOME", "~/.cache/mxlearn/", "letter-recognition.data"]
# `python -m mxlearn grade ...` as the guides cite it, wrapped across a line or not; the rest of
# its line (up to a closing backtick) holds the options it is given
CITED = re.compile(r"python\s+-m\s+mxlearn\s+([a-z][a-z-]*)([^`\n]*)")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _help(capsys, *command: str) -> str:
    """What ``python -m mxlearn [command] --help`` prints."""
    with pytest.raises(SystemExit) as shown:
        main([*command, "--help"])
    assert shown.value.code == 0
    return capsys.readouterr().out


def _commands(capsys) -> set[str]:
    listed = re.search(r"\{([a-z,-]+)\}", _help(capsys))
    assert listed, "python -m mxlearn --help lists no commands"
    return set(listed.group(1).split(","))


def _citations(path: Path) -> list[tuple[str, list[str]]]:
    return [
        (m.group(1), OPTION.findall(m.group(2)))
        for m in CITED.finditer(path.read_text(encoding="utf-8"))
    ]


@pytest.mark.parametrize("path", GUIDES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_guide_names_each_platform_route_and_the_data_setting(path):
    text = path.read_text(encoding="utf-8")
    missing = [name for name in ROUTES + DATA if name not in text]
    assert not missing, f"{path.name} does not name {missing}"


@pytest.mark.parametrize("path", GUIDES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_the_guide_cites_is_one_mxlearn_has(path, capsys):
    commands = _commands(capsys)
    cited = _citations(path)
    assert {"grade", "course", "doctor"} <= {command for command, _ in cited}
    unknown = sorted({command for command, _ in cited} - commands)
    assert not unknown, f"python -m mxlearn has no command {unknown}; it has {sorted(commands)}"
    for command in {command for command, options in cited if options}:
        known = set(OPTION.findall(_help(capsys, command)))
        given = {option for name, options in cited if name == command for option in options}
        assert given <= known, f"python -m mxlearn {command} has no {sorted(given - known)}"


def test_the_chinese_guide_writes_chinese_prose():
    assert problems(GUIDES[1].read_text(encoding="utf-8")) == []
