"""Text from the kernel or a file, made safe to put on a terminal.

Learner output and lesson prose may hold escape sequences: clear screen, set the
window title, write the clipboard (OSC 52). Every control character but newline
and tab is shown as a visible escape (``\\x1b``), so nothing reaches the terminal
that the terminal would act on.

One rule at one place: text is made visible where it enters the frontend, not where it
is shown. Kernel replies are made visible as they are checked (protocol/reply_schema.py),
the learner's stdout and stderr as the client cuts them into steps (client/kernel_client.py), a
`stats --import` file and the progress store as they are read; a lesson holding a control
character is refused when it loads (tutor/lesson.py). Views then show what they are given.
"""

from __future__ import annotations

import json
import re

# C0 controls but \t and \n, DEL, and the C1 controls (which some terminals also obey).
_CONTROLS = [code for code in range(0x20) if code not in (0x09, 0x0A)] + list(range(0x7F, 0xA0))
_TABLE = {code: f"\\x{code:02x}" for code in _CONTROLS}
# Lone surrogates (JSON's "\ud800" decodes to one) cannot be encoded to UTF-8: printing one raises.
_TABLE.update({code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)})
_ANY_CONTROL = re.compile("[" + "".join(re.escape(chr(code)) for code in _CONTROLS) + "\ud800-\udfff]")
# What json.dumps(ensure_ascii=False) leaves raw and a terminal may obey: DEL and the C1 controls.
_JSON_RAW = re.compile("[\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN``, and every
    lone surrogate as ``\\uNNNN``."""
    if _ANY_CONTROL.search(text) is None:  # nearly always: no copy
        return text
    return text.translate(_TABLE)


def visible_data(value):
    """Parsed JSON (a file's) with every string in it, keys too, made visible."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [visible_data(item) for item in value]
    if isinstance(value, dict):
        return {visible(key): visible_data(item) for key, item in value.items()}
    return value


def first_control(text: str) -> str | None:
    """The first character of ``text`` that `visible` would escape, or None when there is none."""
    found = _ANY_CONTROL.search(text)
    return found.group() if found else None


def moved_column(line: str | None, column: int | None, base: int = 0) -> int | None:
    """Where ``column`` of ``line`` (counted from ``base``) lands once the line is made visible."""
    if not line or column is None or column < base:
        return column
    return len(visible(line[:column - base])) + base


def json_line(obj) -> str:
    """JSON for a terminal as much as for a program: non-ASCII text stays readable, and DEL and the
    C1 controls, which json.dumps would leave raw, are written as \\u escapes (JSON already escapes C0)."""
    return _JSON_RAW.sub(lambda found: f"\\u{ord(found.group()):04x}", json.dumps(obj, ensure_ascii=False))
