"""Keep the Chinese catalogue in step with the code: ``make translations``.

Finds every ``say("...")`` template in mxlearn (the English text is the gettext msgid), writes
``mxlearn/locale/zh/LC_MESSAGES/mxlearn.po`` with the templates in source order (each with
where it is used, the translations already there kept, new ones empty for a translator), and
compiles ``mxlearn.mo`` beside it, which is what Python's gettext reads at run time.

    python tools/translations.py                 # after changing a message in the code
    python tools/translations.py --from DIR      # also take translations from DIR/*.json
                                                 # ({"English template": "中文模板"})
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mxlearn"
CATALOGUE = PACKAGE / "locale" / "zh" / "LC_MESSAGES" / "mxlearn.po"
COMPILED = CATALOGUE.with_suffix(".mo")
SAYING = {"say", "say_drawn"}  # the functions of mxlearn/language.py that take a template


def templates(package: Path = PACKAGE) -> tuple[dict[str, list[tuple[str, int]]], list[str]]:
    """Each template passed to ``say`` with where it is used, and the places where ``say`` is
    given something other than one literal string (which no catalogue can hold)."""
    found: dict[str, list[tuple[str, int]]] = {}
    problems = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.Call) and _called_name(node.func) in SAYING):
                continue
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.setdefault(first.value, []).append((relative, node.lineno))
            else:
                problems.append(f"{relative}:{node.lineno}: say() needs one literal string")
    # ast.walk goes level by level: sort to list the templates in the order of the files
    in_source_order = dict(sorted(found.items(), key=lambda item: min(item[1])))
    return in_source_order, problems


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def read_catalogue(path: Path = CATALOGUE):
    from babel.messages.pofile import read_po

    if not path.exists():
        from babel.messages.catalog import Catalog

        return Catalog(locale="zh_Hans_CN", domain="mxlearn")
    with open(path, "rb") as f:
        return read_po(f, locale="zh_Hans_CN", domain="mxlearn")


def update(fragments: Path | None = None) -> tuple[int, int]:
    """Rewrite the catalogue from the code; (templates, templates still without Chinese)."""
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import write_po

    found, problems = templates()
    if problems:
        raise SystemExit("\n".join(problems))
    known = {m.id: m.string for m in read_catalogue() if m.id and m.string}
    for fragment in sorted(fragments.glob("*.json")) if fragments else []:
        known.update({k: v for k, v in json.loads(fragment.read_text()).items() if v})
    catalogue = Catalog(
        locale="zh_Hans_CN",
        domain="mxlearn",
        project="mxlearn",
        version="0.1.0",
        header_comment="# Chinese texts of mxlearn's messages. Run tools/translations.py after\n"
        "# changing a message in the code; it keeps these texts and compiles mxlearn.mo.",
        # Fixed dates: the file changes only when a text does.
        creation_date=datetime(2026, 11, 30, tzinfo=UTC),
        revision_date=datetime(2026, 11, 30, tzinfo=UTC),
        msgid_bugs_address="",
        last_translator="the mxlearn authors",
        language_team="mxlearn <zh>",
        fuzzy=False,
    )
    for template, places in found.items():
        flags = ["python-brace-format"] if "{" in template else []
        catalogue.add(template, known.get(template, ""), locations=places, flags=flags)
    CATALOGUE.parent.mkdir(parents=True, exist_ok=True)
    _write(CATALOGUE, lambda f: write_po(f, catalogue, width=100, omit_header=False))
    _write(COMPILED, lambda f: write_mo(f, catalogue))
    missing = sum(1 for template in found if not known.get(template))
    return len(found), missing


def _write(path: Path, writer) -> None:
    """Whole or not at all: several editors may run this at once."""
    with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False) as f:
        writer(f)
    os.chmod(f.name, 0o644)
    os.replace(f.name, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="fragments", type=Path, help="a folder of JSON files")
    arguments = parser.parse_args()
    total, missing = update(arguments.fragments)
    print(f"{CATALOGUE.relative_to(ROOT)}: {total} messages, {missing} without Chinese")


if __name__ == "__main__":
    main()
