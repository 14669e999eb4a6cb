"""Each exercise's check passes right answers written in other styles than the teacher's and
fails wrong ones and shortcuts with the message a student should read, over 5 seeds where
training is involved. The answers run in the notebook's own kernel, just before the teacher's
answer cell (so on the notebook's state at that point); the check is the notebook's own check
cell. tests/exercise_answers/ holds the answers. The Chinese edition runs them too, on one seed:
its checks pass the same right answers and fail the wrong ones in Chinese."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from exercise_answers import notebooks_01_03_04, notebooks_02_05, notebooks_06_07
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1] / "notebooks"
CJK = re.compile(r"[\u4e00-\u9fff]")
ANSWERS = {**notebooks_01_03_04.ANSWERS, **notebooks_02_05.ANSWERS, **notebooks_06_07.ANSWERS}

RUNNER = """
import json as _json
import mxlearn as _mxlearn
from mxlearn.errors import CheckFailed as _CheckFailed
_seed, _tried = _mxlearn.seed, []

def _try(exercise, name, answer, check, seeds, setup):
    for offset in range(seeds):
        # every seed the answer sets, shifted: the same answer on other weights and orders
        _mxlearn.seed = lambda value, _offset=offset: _seed(value + 1000 * _offset)
        _seed(100 + offset)
        try:
            exec(setup, globals())
            exec(answer, globals())
            exec(check, globals())
            outcome = ("passed", "")
        except _CheckFailed as failed:
            outcome = ("failed", str(failed))
        except Exception as error:
            outcome = ("error", f"{type(error).__name__}: {error}")
        finally:
            _mxlearn.seed = _seed
        _tried.append(dict(exercise=exercise, name=name, seed=offset, outcome=outcome[0],
                           message=outcome[1][:2000]))
"""


def _notebook(name: str) -> Path:
    return ROOT / name


def _stub(answer_cell: str) -> str:
    """The teacher's answer cell before its first solution region, up to a def or class (the
    names set to None, the iterators it makes): what every student's cell starts with."""
    lines = []
    for line in answer_cell.split("### BEGIN SOLUTION")[0].splitlines():
        if line.startswith(("def ", "class ")):
            break
        lines.append(line)
    return "\n".join(lines) + "\n"


def _with_answers(path: Path, out: Path, seeds=None, skip=frozenset()):
    nb = nbformat.read(path, as_version=4)
    cells = [nbformat.v4.new_code_cell(RUNNER)]
    checks: dict[str, str] = {}  # an exercise graded in parts: its check cells in order
    for c in nb.cells:
        if c.metadata.get("mxlearn", {}).get("role") == "check":
            name = c.metadata["mxlearn"]["exercise"]
            checks[name] = checks.get(name, "") + c.source + "\n"
    for cell in nb.cells:
        role = cell.metadata.get("mxlearn", {})
        if role.get("role") == "answer" and role["exercise"] in ANSWERS:
            spec = ANSWERS[role["exercise"]]
            stub = _stub(cell.source)
            tries = [(n, stub + a) for n, a in spec["right"].items() if n not in skip]
            tries += [(n, stub + a) for n, (a, _) in spec["wrong"].items() if n not in skip]
            calls = [
                f"_try({role['exercise']!r}, {n!r}, {a!r}, {checks[role['exercise']]!r}, "
                f"{seeds or spec['seeds']}, {spec.get('setup', '')!r})"
                for n, a in tries
            ]
            calls.append(spec.get("setup", ""))  # the teacher's answer starts clean too
            cells.append(nbformat.v4.new_code_cell("\n".join(calls)))
        cells.append(cell)
    cells.append(nbformat.v4.new_code_cell(f"open({str(out)!r}, 'w').write(_json.dumps(_tried))"))
    nb.cells = cells
    return nb


NOTEBOOKS = {
    "01_module_step_by_step.ipynb": ["01.1", "01.2"],
    "02_fit.ipynb": ["02.1", "02.2", "02.3"],
    "03_predict_and_score.ipynb": ["03.1", "03.2"],
    "04_checkpoints_and_resume.ipynb": ["04.1", "04.2"],
    "05_variable_shapes.ipynb": ["05.1", "05.2", "05.3"],
    "06_devices_and_distributed.ipynb": ["06.1", "06.2"],
    "07_experiments.ipynb": ["07.1", "07.2"],
}


def _tried(path: Path, tmp_path: Path, seeds=None, skip=frozenset()) -> list[dict]:
    out = tmp_path / "tried.json"
    nb = _with_answers(path, out, seeds, skip)
    client = NotebookClient(
        nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_right_answers_in_other_styles_pass_and_shortcuts_fail(name, tmp_path):
    tried = _tried(_notebook(name), tmp_path)
    wrong_outcomes = []
    for exercise in NOTEBOOKS[name]:
        spec = ANSWERS[exercise]
        assert len(spec["right"]) >= 3 and len(spec["wrong"]) >= 2, exercise
        for row in (r for r in tried if r["exercise"] == exercise):
            if row["name"] in spec["right"]:
                if row["outcome"] != "passed":
                    wrong_outcomes.append(row)
            else:
                words = spec["wrong"][row["name"]][1]
                if row["outcome"] != "failed" or words not in row["message"]:
                    wrong_outcomes.append(row)
        counted = {(r["name"], r["seed"]) for r in tried if r["exercise"] == exercise}
        assert len(counted) == (len(spec["right"]) + len(spec["wrong"])) * spec["seeds"]
    assert not wrong_outcomes, json.dumps(wrong_outcomes, indent=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_the_chinese_edition_grades_the_same_answers_in_chinese(name, tmp_path):
    english = {n for e in NOTEBOOKS[name] for n in ANSWERS[e].get("reads_english", ())}
    tried = _tried(_notebook("zh") / name, tmp_path, seeds=1, skip=english)
    wrong_outcomes = []
    for exercise in NOTEBOOKS[name]:
        spec = ANSWERS[exercise]
        rows = [r for r in tried if r["exercise"] == exercise]
        expected = len(spec["right"]) + len(spec["wrong"]) - len(spec.get("reads_english", ()))
        assert len(rows) == expected, exercise
        for row in rows:
            if row["name"] in spec["right"]:
                if row["outcome"] != "passed":
                    wrong_outcomes.append(row)
            elif row["outcome"] != "failed" or not CJK.search(row["message"]):
                wrong_outcomes.append(row)
    assert not wrong_outcomes, json.dumps(wrong_outcomes, indent=1)
