"""The scratch folder's life: made with its owner's pid, removed when that owner is gone.

A frontend killed by any signal cannot clean up after itself, so two things do it:
a janitor process (kernel/janitor.py: started by the zygote, outside its namespaces,
in a session of its own) that waits for the zygote to end and then removes scratch,
and every start, which removes scratch folders whose owner pid no longer runs.
The frontend makes the folder (client/launch.py); both sides ask pid_alive.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile

PREFIX = "gradrepl-scratch-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-\w+")


def make() -> str:
    """A new scratch folder named after this process, after removing folders of dead owners."""
    clean_stale()
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def clean_stale(folder: str | None = None) -> list[str]:
    """Remove our scratch folders whose owner pid is gone; returns what was removed."""
    folder = folder or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _NAME.fullmatch(name)
        path = os.path.join(folder, name)
        try:
            ours = os.lstat(path).st_uid == os.getuid()
        except OSError:
            continue
        if match and ours and not pid_alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def pid_alive(pid: int) -> bool:
    """Whether a process of that pid exists (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
