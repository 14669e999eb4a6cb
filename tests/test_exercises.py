"""The course's exercises: each has an answer region and a locked check cell in both languages,
hints that teach without giving the answer, and checks that speak about the exercise."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import numpy as np
import pytest

import mxlearn
from mxlearn import checks, mx
from mxlearn.__main__ import main
from mxlearn.checks import WrongOutputShape
from mxlearn.commands.exercise_cells import mark, metadata
from mxlearn.commands.student_edition import student_cell
from mxlearn.errors import CheckFailed
from mxlearn.exercises import (
    ExerciseNotNamed,
    NoSuchExercise,
    NothingToCheckYet,
    catalogue,
    parts_of,
)
from mxlearn.module.mutable import LargerThanMax
from mxlearn.rules import WrongKind
from mxlearn.run_checks import (
    BatchRefused,
    NeverStopped,
    NoSuchFindingKind,
    NotEveryEpoch,
    NotForPredictionOnly,
    NotStoppedEarly,
    NoValidationAccuracy,
    OtherBestEpoch,
    OtherCheckpointsKept,
    OtherDevices,
    OtherEpochsTrained,
    OtherKvstore,
    ScoreDiffers,
    TrackerHooksNothing,
)

ROOT = Path(__file__).resolve().parents[1] / "notebooks"
TEACHER = sorted(ROOT.glob("*.ipynb")) + sorted((ROOT / "zh").glob("*.ipynb"))


@pytest.fixture(autouse=True)
def english_after():
    yield
    mxlearn.set_language("en")


def _exercise_cells(path):
    cells = nbformat.read(path, as_version=4).cells
    return [c for c in cells if "mxlearn" in c.metadata]


def _answers(path) -> dict[str, list[str]]:
    found = {}
    for cell in _exercise_cells(path):
        if cell.metadata["mxlearn"]["role"] == "answer":
            made = student_cell(cell.source, ("#",), False, str(path))
            found.setdefault(cell.metadata["mxlearn"]["exercise"], []).extend(made.answer)
    return found


def _verdict_of(caught, exercise: str) -> str:
    """The problem of a check's verdict about an exercise: a CheckFailed itself (the grader
    knows a failed check by that name), naming the exercise by its number and title. A verdict
    has no fields: the failure under it is read from its text, rendered by the kind itself."""
    assert type(caught.value) is CheckFailed
    problem = caught.value.problem
    title = catalogue()[exercise][0]
    assert (
        exercise in problem and title in problem and problem.index(exercise) < problem.index(title)
    )
    return problem


def _gives_a_hint(problem: str, exercise: str) -> bool:
    return any(hint in problem for hint in catalogue()[exercise][1])


@pytest.mark.parametrize("path", TEACHER, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_notebook_has_two_exercises_with_an_answer_region_and_a_locked_check(path):
    cells = _exercise_cells(path)
    ids = sorted({c.metadata["mxlearn"]["exercise"] for c in cells})
    assert len(ids) >= 2 and all(i.startswith(path.name[:2] + ".") for i in ids)
    for exercise in ids:
        answer, *checks = [c for c in cells if c.metadata["mxlearn"]["exercise"] == exercise]
        assert answer.metadata["nbgrader"]["solution"] and not answer.metadata["nbgrader"]["grade"]
        assert "### BEGIN SOLUTION" in answer.source and "### END SOLUTION" in answer.source
        assert len(checks) == max(1, len(parts_of(exercise)))  # a check cell per part
        for part, check in enumerate(checks, 1):
            grading = check.metadata["nbgrader"]
            assert grading["grade"] and grading["locked"] and not grading["solution"]
            suffix = f"_part{part}" if part > 1 else ""
            assert grading["grade_id"] == "ex" + exercise.replace(".", "_") + suffix
            assert "mxlearn.checks." in check.source
            assert check.source.count(f"exercise='{exercise}'") == check.source.count("checks.")
        assert exercise in catalogue()


@pytest.mark.parametrize("path", TEACHER, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_exercise_cell_holds_the_metadata_the_one_helper_writes(path):
    notebook = nbformat.read(path, as_version=4)
    marked, _ = mark(copy.deepcopy(notebook))
    assert [
        (c.metadata["mxlearn"]["exercise"], c.metadata["mxlearn"]["role"])
        for c in _exercise_cells(path)
    ] == marked
    for cell in notebook.cells:
        if "mxlearn" in cell.metadata:
            ours = cell.metadata["mxlearn"]
            assert {k: cell.metadata[k] for k in ("mxlearn", "nbgrader")} == metadata(
                ours["exercise"], ours["role"], ours.get("part", 1)
            )


@pytest.mark.parametrize(
    "answer_line, check_line",
    [
        ("# Exercise 08.1", "# Check of exercise 08.1 (do not change)"),
        ("# 练习 08.1", "# 练习 08.1 的检查(请勿修改)"),
    ],
)
def test_a_new_exercise_is_marked_for_mxlearn_and_nbgrader_from_its_first_lines(
    answer_line, check_line, tmp_path, capsys, exercise_08_1
):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Exercise 08.1: a markdown cell is not marked"),
        nbformat.v4.new_code_cell(answer_line + "\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION"),
        nbformat.v4.new_code_cell(check_line + "\nassert x == 1"),
        nbformat.v4.new_code_cell("# Exercise 08.1 is the one above"),
    ]
    path = tmp_path / "08_new.ipynb"
    nbformat.write(notebook, path)
    assert main(["mark", str(path)]) == 0
    assert "08.1 answer, 08.1 check" in capsys.readouterr().out
    cells = nbformat.read(path, as_version=4).cells
    assert "mxlearn" not in cells[0].metadata and "mxlearn" not in cells[3].metadata
    answer, check = cells[1].metadata, cells[2].metadata
    assert answer["mxlearn"] == {"exercise": "08.1", "role": "answer"}
    assert answer["nbgrader"]["solution"] and not answer["nbgrader"]["grade"]
    assert check["nbgrader"]["grade"] and check["nbgrader"]["locked"]
    assert check["nbgrader"]["grade_id"] == "ex08_1" and check["nbgrader"]["points"] == 1
    # the grader reads the exercise the helper marked
    from mxlearn.commands.grade_exercises import exercises_of

    found = exercises_of(nbformat.read(path, as_version=4))
    assert list(found) == ["08.1"] and found["08.1"].answers == [1] and found["08.1"].checks == [2]


@pytest.fixture
def exercise_08_1(monkeypatch):
    """A new exercise's entry in the catalogue, as its author adds it to exercises.toml."""
    from mxlearn import exercises

    entries = {**exercises._exercises(), "08.1": {"title": "a new one", "hints": ["look"]}}
    monkeypatch.setattr(exercises, "_exercises", lambda: entries)


ANSWER, CHECK = "# Exercise 08.1\nx = 1", "# Check of exercise 08.1 (do not change)\nassert x"


@pytest.fixture
def exercise_08_1_in_parts(monkeypatch):
    """A new exercise graded in two parts, as its author declares them in exercises.toml."""
    from mxlearn import exercises

    entry = {"title": "a new one", "hints": ["look"], "parts": ["the loop", "the accuracy"]}
    entries = {**exercises._exercises(), "08.1": entry}
    monkeypatch.setattr(exercises, "_exercises", lambda: entries)


@pytest.mark.parametrize(
    "part_2",
    ["# Check of exercise 08.1, part 2 (do not change)", "# 练习 08.1 的检查，第 2 部分(请勿修改)"],
)
def test_an_exercise_in_parts_gets_a_check_cell_and_a_grade_id_per_part(
    part_2, exercise_08_1_in_parts
):
    notebook = _notebook(ANSWER, CHECK, part_2 + "\nassert x > 0")
    marked, _ = mark(notebook)
    assert marked == [("08.1", "answer"), ("08.1", "check"), ("08.1", "check")]
    first, second = (notebook.cells[i].metadata for i in (1, 2))
    assert first["nbgrader"]["grade_id"] == "ex08_1" and "part" not in first["mxlearn"]
    assert second["nbgrader"]["grade_id"] == "ex08_1_part2" and second["mxlearn"]["part"] == 2
    assert second["nbgrader"]["points"] == 1


@pytest.mark.parametrize(
    "checks",
    [
        (CHECK,),  # two parts named, one check
        (CHECK, "# Check of exercise 08.1, part 3 (do not change)"),  # part 2 missing
        (CHECK, CHECK.replace("08.1", "08.1, part 2"), CHECK.replace("08.1", "08.1, part 3")),
    ],
)
def test_check_cells_that_are_not_the_parts_named_are_refused(checks, exercise_08_1_in_parts):
    with pytest.raises(mxlearn.errors.InputError) as refused:
        mark(_notebook(ANSWER, *checks))
    assert type(refused.value).__name__ == "PartsNotAsNamed"


def _notebook(*sources):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return notebook


@pytest.mark.parametrize(
    "sources, kind",
    [
        (("# Exercise 99.9\nx = 1", "# Check of exercise 99.9 (do not change)"), "NotInCatalogue"),
        ((ANSWER, ANSWER, CHECK), "ExerciseCellTwice"),
        ((ANSWER,), "ExerciseWithoutCheck"),
        ((CHECK,), "CheckWithoutExercise"),
        (("#Exercise 08.1\nx = 1", CHECK), "AlmostAFirstLine"),
        (("# exercise 08.1\nx = 1", CHECK), "AlmostAFirstLine"),
        (("# Exercise 8.1\nx = 1", CHECK), "AlmostAFirstLine"),
        (("# Exercise ０８.１\nx = 1", CHECK), "AlmostAFirstLine"),
    ],
)
def test_mark_refuses_cells_the_grader_or_nbgrader_would_misread(sources, kind, exercise_08_1):
    notebook = _notebook(*sources)
    before = copy.deepcopy(notebook)
    with pytest.raises(mxlearn.errors.InputError) as refused:
        mark(notebook)
    assert type(refused.value).__name__ == kind
    assert notebook == before  # nothing half marked


def test_mark_removes_the_metadata_of_a_cell_no_longer_an_exercise(exercise_08_1):
    notebook = _notebook(ANSWER, CHECK, "# setup\nimport numpy as np")
    notebook.cells[2].metadata.update(metadata("08.1", "answer"))  # once an exercise
    marked, unmarked = mark(notebook)
    assert marked == [("08.1", "answer"), ("08.1", "check")] and unmarked == [2]
    assert "mxlearn" not in notebook.cells[2].metadata
    assert "nbgrader" not in notebook.cells[2].metadata


def test_titles_and_hints_are_data_beside_the_checks_not_code():
    source = (Path(mxlearn.__file__).parent / "exercises.py").read_text()
    for title, hints in catalogue().values():
        assert f'"{title}"' not in source and not any(hint in source for hint in hints)


def test_every_exercise_of_the_catalogue_is_in_both_editions():
    for edition in (ROOT, ROOT / "zh"):
        found = {e for path in edition.glob("*.ipynb") for e in _answers(path)}
        assert found == set(catalogue()), edition


@pytest.mark.parametrize("language", ["en", "zh"])
def test_hints_teach_in_the_notebooks_language_and_never_hold_an_answer_line(language):
    mxlearn.set_language(language)
    answers = {}
    for path in ROOT.glob("*.ipynb"):
        answers.update(_answers(path))
    for exercise, (title, hints) in catalogue().items():
        assert len(hints) >= 2 and title
        if language == "zh":
            assert all(any("\u4e00" <= ch <= "\u9fff" for ch in h) for h in [title, *hints])
        for line in answers[exercise]:
            body = line.strip()
            if len(body) >= 8:
                assert not any(body in h for h in hints), (exercise, body)


def test_hint_gives_one_more_each_call_and_refuses_an_unknown_exercise(capsys):
    total = len(catalogue()["02.2"][1])
    for _ in range(total + 1):
        mxlearn.hint("02.2")
    lines = capsys.readouterr().out.splitlines()
    assert [f"hint {n} of {total}" in line for n, line in enumerate(lines, 1)][:total] == [
        True
    ] * total
    assert "ask your teacher" in lines[-1] and f"hint {total} of {total}" in lines[-1]
    with pytest.raises(NoSuchExercise) as unknown:
        mxlearn.hint("2.9")
    assert unknown.value.fields["exercise"] == "2.9" and "'02.2'" in unknown.value.fix


def _trained_module(epochs=0):
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
    it = mx.io.NDArrayIter(X, y, batch_size=32)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    return mod, it


def test_nothing_answered_yet_is_said_and_never_counted_toward_hints():
    for _ in range(3):
        with pytest.raises(CheckFailed) as stub:
            checks.learned(None, None, above=0.5, exercise="01.1")
        problem = _verdict_of(stub, "01.1")
        assert NothingToCheckYet().problem in problem and not _gives_a_hint(problem, "01.1")
        assert stub.value.fix == NothingToCheckYet().fix  # not the way to a hint: not counted


def test_a_hint_follows_from_the_second_real_failure_in_the_notebooks_language():
    mod, it = _trained_module()
    wrong = WrongOutputShape(name="softmax_output", shape=(32, 4), expected=(64, 4))
    with pytest.raises(CheckFailed) as first:
        checks.output_shape(mod, (64, 4), exercise="05.2")
    problem = _verdict_of(first, "05.2")
    assert wrong.problem in problem and not _gives_a_hint(problem, "05.2")
    assert "mxlearn.hint('05.2')" in first.value.fix  # the way to a hint, not the check's fix
    with pytest.raises(CheckFailed) as second:
        checks.output_shape(mod, (64, 4), exercise="05.2")
    problem = _verdict_of(second, "05.2")
    hints = catalogue()["05.2"][1]
    assert wrong.problem in problem and hints[0] in problem and hints[1] not in problem
    mxlearn.set_language("zh")
    with pytest.raises(CheckFailed) as chinese:
        checks.output_shape(mod, (64, 4), exercise="05.2")
    assert "练习 05.2" in chinese.value.problem and "提示 2" in chinese.value.problem


def test_a_value_of_the_wrong_kind_fails_the_check_instead_of_crashing_it():
    mod, it = _trained_module()
    with pytest.raises(CheckFailed) as crashed:
        checks.score_matches(("accuracy", 0.5), mod, it, "acc", exercise="03.2")
    assert "TypeError" in _verdict_of(crashed, "03.2")  # Python's own error, named in the verdict
    with pytest.raises(WrongKind) as refused:  # the refusal of mod=5 outside an exercise
        checks.learned(5, it)
    assert refused.value.fields["name"] == "mod" and refused.value.fields["shown"] == "5"
    with pytest.raises(CheckFailed) as verdict:
        checks.learned(5, it, exercise="01.1")
    assert refused.value.problem in _verdict_of(verdict, "01.1")


@pytest.mark.parametrize("given, name", [("3.2", "03.2"), (" 03.2 ", "03.2"), ("03.2", "03.2")])
def test_exercise_names_written_the_usual_other_ways_are_understood(given, name, capsys):
    mxlearn.hint(given)
    assert f"Exercise {name} " in capsys.readouterr().out


@pytest.mark.parametrize("given", [None, 3.2, 1])
def test_an_exercise_that_is_not_a_string_is_refused_with_the_way_to_write_it(given):
    with pytest.raises(ExerciseNotNamed) as refused:
        mxlearn.hint(given)
    assert refused.value.fields["given"] == given and "mxlearn.hint('03.2')" in refused.value.fix
    if given is not None:  # exercise=None is a check outside the exercises
        with pytest.raises(ExerciseNotNamed) as refused:
            checks.learned(None, None, exercise=given)
        assert refused.value.fields["given"] == given


def test_a_failed_check_names_the_exercise():
    mod, it = _trained_module()
    with pytest.raises(CheckFailed) as failed:
        checks.output_shape(mod, (64, 4), exercise="01.2")
    problem = _verdict_of(failed, "01.2")
    wrong = WrongOutputShape(name="softmax_output", shape=(32, 4), expected=(64, 4)).problem
    assert problem.index(catalogue()["01.2"][0]) < problem.index(wrong)  # exercise, then check


def test_score_matches_compares_with_score_itself(capsys):
    mod, it = _trained_module()
    accuracy = mod.score(it, "acc")[0][1]
    checks.score_matches(accuracy, mod, it, "acc")
    checks.score_matches(mod.score(it, "acc"), mod, it, "acc")
    assert capsys.readouterr().out.count("OK: accuracy") == 2
    with pytest.raises(ScoreDiffers) as differs:
        checks.score_matches(accuracy + 0.01, mod, it, "acc")
    fields = differs.value.fields
    assert fields["name"] == "accuracy" and fields["value"] == accuracy + 0.01
    assert fields["expected"] == pytest.approx(accuracy)
    with pytest.raises(ScoreDiffers) as differs:
        checks.score_matches(accuracy, mod, it, mxlearn.create_metric("top_k_acc", top_k=3))
    assert differs.value.fields["name"] == "top_3_accuracy"


def test_checkpoints_kept_counts_complete_checkpoints_only(tmp_path):
    mod, it = _trained_module()
    prefix = str(tmp_path / "every2")
    mod.init_optimizer()
    for epoch in (4, 6):
        mxlearn.checkpoint.save(mod, prefix, epoch)
    checks.checkpoints_kept(prefix, [6, 4])
    (tmp_path / "every2-0008.params").write_bytes(b"")  # a file made by hand is no checkpoint
    checks.checkpoints_kept(prefix, [4, 6])
    with pytest.raises(OtherCheckpointsKept) as kept:
        checks.checkpoints_kept(prefix, [2, 4, 6])
    assert kept.value.fields["saved"] == [4, 6] and kept.value.fields["expected"] == [2, 4, 6]
    assert kept.value.fields["prefix"] == prefix


def test_accepts_batch_runs_the_batch_and_explains_a_refusal():
    net = mxlearn.models.conv_net(num_classes=3, channels=4)
    small = mxlearn.MutableModule(net, max_data_shapes=[("data", (4, 1, 16, 16))])
    small.bind([("data", (4, 1, 16, 16))], for_training=False)
    small.init_params()
    batch = mx.io.DataBatch([mx.nd.zeros((4, 1, 24, 24))], provide_data=[("data", (4, 1, 24, 24))])
    with pytest.raises(LargerThanMax) as larger:  # the module's own refusal of the batch
        small.forward(batch, is_train=False)
    assert larger.value.fields["shape"] == (4, 1, 24, 24) and larger.value.fields["limit"] == 16
    with pytest.raises(BatchRefused) as refused:
        checks.accepts_batch(small, batch, num_classes=3)
    assert refused.value.fields["reason"] == larger.value.problem
    assert refused.value.fix == larger.value.fix
    large = mxlearn.MutableModule(net, max_data_shapes=[("data", (4, 1, 24, 24))])
    large.bind([("data", (4, 1, 24, 24))], for_training=False)
    large.set_params(*small.get_params())
    checks.accepts_batch(large, batch, num_classes=3)
    assert np.isfinite(large.get_outputs()[0].asnumpy()).all()


def test_on_devices_compares_the_bound_contexts():
    contexts = [mx.cpu(0), mx.cpu(1)]
    pair = mxlearn.Module(mxlearn.models.mlp(), context=contexts)
    with pytest.raises(OtherDevices) as unbound:
        checks.on_devices(pair, contexts)
    assert unbound.value.fields["bound"] == [] and unbound.value.fields["expected"] == contexts
    pair.bind([("data", (32, 16))], [("softmax_label", (32,))])
    checks.on_devices(pair, contexts)
    with pytest.raises(OtherDevices) as other:
        checks.on_devices(pair, [mx.cpu(0)])
    assert other.value.fields["bound"] == contexts
    assert other.value.fields["expected"] == [mx.cpu(0)]


def test_best_epoch_recorded_compares_a_callback_with_the_history():
    class First(mxlearn.Callback):  # a wrong answer: keeps the first epoch, not the best
        def on_validation_end(self, run, epoch):
            if epoch == 0:
                self.best_epoch = epoch
                self.best_accuracy = run.history.last("accuracy", "validation")

    mxlearn.seed(1)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
    it = mx.io.NDArrayIter(X, y, batch_size=32)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu())
    tracker = First()
    mod.fit(
        it, eval_data=it, num_epoch=4, optimizer_params={"learning_rate": 0.01}, callbacks=[tracker]
    )
    epochs, values = mod.history.series("accuracy", "validation", "epoch")
    best = epochs[values.index(max(values))]
    assert values[0] < max(values)  # this seeded run learns: epoch 0 is not its best
    with pytest.raises(OtherBestEpoch) as other:
        checks.best_epoch_recorded(tracker, mod)
    assert other.value.fields["right"] == best and other.value.fields["epoch"] == 0
    tracker.best_epoch, tracker.best_accuracy = best, max(values)
    checks.best_epoch_recorded(tracker, mod)


@pytest.mark.parametrize(
    "metric, phase", [("acc", "val"), ("accuracy", "validation"), ("acc", "eval")]
)
def test_a_tracker_written_with_fits_names_passes_the_check_of_02_3(metric, phase):
    # #26: history.last('acc', 'val') read nothing, and this answer to 02.3 failed on None
    class BestEpoch(mxlearn.Callback):
        def __init__(self):
            self.best_epoch, self.best_accuracy = None, None

        def on_validation_end(self, run, epoch):
            accuracy = run.history.last(metric, phase)
            if self.best_accuracy is None or accuracy > self.best_accuracy:
                self.best_epoch, self.best_accuracy = epoch, accuracy

    mxlearn.seed(1)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
    it = mx.io.NDArrayIter(X, y, batch_size=32)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu())
    tracker = BestEpoch()
    mod.fit(it, eval_data=it, num_epoch=4, optimizer_params={"learning_rate": 0.01},
            callbacks=[tracker])  # fmt: skip
    checks.best_epoch_recorded(tracker, mod)


def test_best_epoch_recorded_without_accuracy_says_there_is_none():
    history = mxlearn.MetricHistory()
    history.record("cross-entropy", "validation", "epoch", epoch=0, batch=1, samples=1, time=0.0,
                   value=1.0)  # fmt: skip
    mod = type("Trained", (), {"history": history})()

    class Keeper(mxlearn.Callback):
        best_epoch, best_accuracy = 0, 1.0

        def on_validation_end(self, run, epoch):
            pass

    with pytest.raises(NoValidationAccuracy):
        checks.best_epoch_recorded(Keeper(), mod)


def test_for_prediction_only_wants_no_labels_and_no_gradients():
    net = mxlearn.models.mlp(num_classes=4)
    trained = mxlearn.Module(net, context=mx.cpu())
    trained.bind([("data", (8, 16))], [("softmax_label", (8,))])
    with pytest.raises(NotForPredictionOnly) as refused:
        checks.for_prediction_only(trained)
    condition = refused.value.fields["condition"]  # bound: for_training and the label shapes
    assert "True" in condition and "softmax_label" in condition
    predicting = mxlearn.Module(net, context=mx.cpu())
    predicting.bind([("data", (8, 16))], for_training=False)
    checks.for_prediction_only(predicting)


def _history(validation, phase_epochs=None, stopped=False, watched=(), first=0):
    history = mxlearn.MetricHistory()
    history.stops = [first + len(validation) - 1] if stopped else []
    history.watched_with = list(watched)  # (patience, metric) of each early stopping of the fit
    for epoch, value in enumerate(validation, start=first):
        for phase in ("train", "validation"):
            history.record(
                "accuracy", phase, "epoch", epoch=epoch, batch=1, samples=1, time=0.0, value=value
            )
    return type("Trained", (), {"history": history})()


def test_stopped_early_wants_the_end_patience_epochs_after_the_best():
    checks.stopped_early(_history([0.5, 0.7, 0.6, 0.65], stopped=True), patience=2, num_epoch=30)
    with pytest.raises(NotStoppedEarly) as still_learning:
        checks.stopped_early(_history([0.5, 0.6, 0.7, 0.8], stopped=True), patience=2, num_epoch=30)
    assert still_learning.value.fields["best"] == 3 and still_learning.value.fields["after"] == 0
    # patience after the best, at num_epoch, stopped by something that was no early stopping
    with pytest.raises(NeverStopped) as ran_out:
        checks.stopped_early(_history([0.5, 0.7, 0.6, 0.65], stopped=True), patience=2, num_epoch=4)
    assert ran_out.value.fields["count"] == ran_out.value.fields["num_epoch"] == 4
    # 4 epochs asked for, the best 2 before the end by chance: nothing stopped the run
    with pytest.raises(NeverStopped):
        checks.stopped_early(_history([0.5, 0.7, 0.6, 0.65]), patience=2, num_epoch=30)


def test_stopped_early_passes_an_early_stopping_that_fires_in_the_last_epoch():
    # best in epoch 1, patience 2: the early stopping stops after epoch 3, which num_epoch=4 ends
    fired = _history([0.5, 0.7, 0.6, 0.65], stopped=True, watched=[(2, "accuracy")])
    checks.stopped_early(fired, patience=2, num_epoch=4)
    with pytest.raises(NeverStopped):  # an early stopping of the loss does not do the exercise
        checks.stopped_early(
            _history([0.5, 0.7, 0.6, 0.65], stopped=True, watched=[(2, "cross-entropy")]),
            patience=2,
            num_epoch=4,
        )
    # two early stoppings: the one the exercise asks for is among them, whichever came last
    both = _history([0.5, 0.7, 0.6, 0.65], stopped=True, watched=[(2, "accuracy"), (9, "mse")])
    checks.stopped_early(both, patience=2, num_epoch=4)


def test_stopped_early_wants_every_epoch_from_the_first():
    # a fresh module fit with begin_epoch=25 shows 5 epochs, not 30, under the right patience
    late = _history([0.5, 0.6, 0.7, 0.8, 0.9], watched=[(5, "accuracy")], first=25)
    with pytest.raises(NotEveryEpoch) as refused:
        checks.stopped_early(late, patience=5, num_epoch=30)
    assert refused.value.fields["first"] == 25


def test_stopped_early_passes_a_run_its_early_stopping_had_no_cause_to_stop(
    small_iter, small_net, small_data
):
    X, y = small_data

    def run(**fit_args):
        mxlearn.seed(0)
        small_iter.reset()
        mod = mxlearn.Module(small_net)
        mod.fit(
            small_iter,
            eval_data=mx.io.NDArrayIter(X[:64], y[:64], batch_size=32),
            num_epoch=3,
            live=False,
            optimizer_params={"learning_rate": 0.1},
            **fit_args,
        )
        return mod

    checks.stopped_early(run(early_stopping=5), patience=5, num_epoch=3)  # all 3 epochs ran
    with pytest.raises(NeverStopped):  # the same epochs, and no early stopping asked for
        checks.stopped_early(run(), patience=5, num_epoch=3)
    with pytest.raises(NeverStopped):  # another patience than the exercise asks
        checks.stopped_early(run(early_stopping=4), patience=5, num_epoch=3)


def test_resumed_epochs_reads_which_epochs_the_module_trained():
    resumed = _history([0.1] * 8)
    resumed.history.records = [r for r in resumed.history.records if r.epoch >= 5]
    checks.resumed_epochs(resumed, begin_epoch=5, num_epoch=8)
    with pytest.raises(OtherEpochsTrained) as other:
        checks.resumed_epochs(_history([0.1] * 8), begin_epoch=5, num_epoch=8)
    assert other.value.fields["trained"] == list(range(8))
    assert other.value.fields["expected"] == [5, 6, 7]


def test_uses_kvstore_reads_the_kind_fit_used():
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=64)
    it = mx.io.NDArrayIter(X, y, batch_size=32)
    pair = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=[mx.cpu(0), mx.cpu(1)])
    pair.fit(it, num_epoch=1, kvstore="device")
    checks.uses_kvstore(pair, "device")
    with pytest.raises(OtherKvstore) as other:
        checks.uses_kvstore(pair, "local")
    assert other.value.fields["kind"] == "local" and other.value.fields["used"] == "'device'"


def test_a_tracker_must_be_a_callback_with_a_hook():
    mod = _history([0.5, 0.7])

    class Plain:
        best_epoch, best_accuracy = 1, 0.7

    with pytest.raises(TrackerHooksNothing) as refused:
        checks.best_epoch_recorded(Plain(), mod)
    assert refused.value.fields["kind"] == "Plain"


def test_no_finding_refuses_a_kind_it_could_never_find():
    with pytest.raises(NoSuchFindingKind) as info:
        checks.no_finding(_history([0.5, 0.6, 0.7]), "overfit")
    assert info.value.fields["kind"] == "overfit"
    assert "overfitting" in info.value.fix
    checks.no_finding(_history([0.5, 0.6, 0.7]), "overfitting")
