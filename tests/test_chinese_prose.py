"""Every Chinese text of mxlearn's catalogue reads as d2l-zh does: its terms, not English words
(batch, epoch, checkpoint...), and full-width punctuation in Chinese prose; code keeps its own.
The rules are in chinese_prose.py, for the notebooks' Markdown too."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from chinese_prose import english_terms, half_width_marks, problems

CATALOGUE_FILE = Path(__file__).resolve().parents[1] / "mxlearn/locale/zh/LC_MESSAGES/mxlearn.po"


def _chinese_texts() -> list[tuple[str, str]]:
    with open(CATALOGUE_FILE, "rb") as f:
        catalogue = read_po(f, domain="mxlearn")
    texts = []
    for entry in catalogue:
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        msgid = entry.id[0] if isinstance(entry.id, tuple) else entry.id
        texts += [(msgid, form) for form in forms if entry.id and form]
    return texts


def test_every_chinese_text_of_the_catalogue_reads_as_chinese_prose():
    texts = _chinese_texts()
    assert len(texts) > 1000
    found = [(msgid, text, problems(text)) for msgid, text in texts if problems(text)]
    listed = "".join(f"\n  {text!r}: {said}" for _, text, said in found)
    assert found == [], f"{len(found)} Chinese texts to fix in {CATALOGUE_FILE.name}:{listed}"


@pytest.mark.parametrize(
    "text, words",
    [
        ("验证集上的 accuracy 最好", ["accuracy"]),
        ("OK：曲线中没有 overfitting", ["overfitting"]),
        ("每个 epoch 结束时保存 checkpoint", ["epoch", "checkpoint"]),
        ("在 worker 和 server 上，由 scheduler 协调", ["worker", "server", "scheduler"]),
        ("先 bind 再训练，每个batch都算", ["bind", "batch"]),
        ("Epochs 之后", ["Epochs"]),
    ],
)
def test_english_terms_in_chinese_prose_are_found(text, words):
    assert english_terms(text) == words


@pytest.mark.parametrize(
    "text",
    [
        "用 `mod.bind()` 绑定，`batch` 是小批量",  # backticks
        "mod.bind(data_shapes=train_iter.provide_data) 会分配内存",  # a call
        "for batch in train_iter: mod.forward(batch, is_train=True)",  # the code's own name
        "EarlyStopping('accuracy') 按准确率停止；top_k_accuracy、num_epoch、batch_size",
        "Epoch[{epoch}] · 小批量 {batch}",  # MXNet's log tag, a field
        "--checkpoint runs/checkpoint/mlp 是前缀，见 https://example.org/epoch",
        "```\nfor epoch in range(3):\n    mod.bind()\n```\n然后训练",  # a fenced block
    ],
)
def test_code_keeps_its_english(text):
    assert english_terms(text) == []


def test_a_gloss_after_its_chinese_term_is_allowed_when_asked():
    assert english_terms("检查点（checkpoint）和小批量（batch）") == ["checkpoint", "batch"]
    assert english_terms("检查点（checkpoint）和小批量（batch）", glosses=True) == []
    assert english_terms("用（batch）", glosses=True) == []  # right after Chinese: a gloss
    assert english_terms("用 batch（小批量）", glosses=True) == ["batch"]


@pytest.mark.parametrize(
    "text, marks",
    [
        ("训练结束,验证开始", 1),  # between Chinese characters
        ("训练结束, 验证开始.", 2),  # then a space; at the end
        ("准确率更高(第一轮)之后", 2),  # parentheses around Chinese
        ("比猜测 ({guessing:.3f}) 更好", 2),  # beside Chinese, round a field
        ("{called}: 无法读取", 1),  # a call's colon that leads into Chinese
        ("它的 mod.history, 或检查点前缀", 1),
        ("是吗?对!", 2),
    ],
)
def test_half_width_marks_in_chinese_prose_are_found(text, marks):
    assert len(half_width_marks(text)) == marks, half_width_marks(text)


@pytest.mark.parametrize(
    "text",
    [
        "准确率是 0.75，损失是 1.2e-3。",  # numbers
        "形状是 (64, 16)，例如 [('data', (32, 16))]",  # tuples
        "用 context=mx.gpu(0)（或 mxlearn.auto_context()）",  # calls, full-width around them
        "请标准化数据（(X - mean) / std）",  # a formula
        "{called}(save_optimizer_states=True)：还没有优化器",  # a call of a field
        "见 https://example.org/a,b 和 runs/mlp-0001.params。",  # a URL, a file
        "检查单元格以 '# 练习 08.1 的检查(请勿修改)' 开头",  # a quoted line, as it is
        "optimizer_params={'lr': 0.1}，或 %s 和 %(name)d",  # a dict, %-fields
        "The loss fell, then rose: see (a) and (b).",  # English prose
    ],
)
def test_code_numbers_and_english_keep_their_half_width_marks(text):
    assert half_width_marks(text) == []
