"""Babel's extractor for mxlearn/exercises.toml: each exercise's title, hints and parts, with the line
it is on, as catalogue entries (``babel.cfg`` maps the file to it)."""

import tomllib


def extract(fileobj, keywords, comment_tags, options):
    text = fileobj.read().decode("utf-8")
    lines = text.splitlines()
    for name, entry in tomllib.loads(text).items():
        for message in [entry["title"], *entry["hints"], *entry.get("parts", [])]:
            number = next(i for i, line in enumerate(lines, 1) if f'"{message}"' in line)
            yield number, None, message, [f"exercise {name}"]
