"""Lesson files a test writes: the course format's front matter around a body."""

from pathlib import Path


def lesson(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.md"
    path.write_text(f"---\nid: {name}\ntitle: {name}\n---\n\n{body}", encoding="utf-8")
    return path


HINTS = "hints:\n  - first\n  - second\n"

# The question a lesson about something else ends on (learners and tests answer it with "2").
ONE_PLUS_ONE = "```question\nid: q\ntype: predict\nprompt: 1 + 1?\nask: 1 + 1\n```\n"

# A lesson whose cell calls help(): play prints the page, learn opens the help view.
HELP_LESSON = '''---
id: helpful
title: A cell that asks for help
version: 1
---

```python
def scale(t):
    """Multiply t by three."""
    return 3 * t
help(scale)
```

''' + ONE_PLUS_ONE
