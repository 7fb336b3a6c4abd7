"""Where this process imports Python code from, and whether learner code could write there.

The zygote and a spawned kernel import modules before and after the sandbox exists (the zygote,
never sandboxed, imports worker.WARM_LATER while idle), so a module learner code could plant in an
import folder would run outside the sandbox, in that session or in any later one. Imports must come
only from folders the kernel cannot write: Python is started with -P (launch.py), from "/", and no
writable folder of the kernel (scratch, --workspace) may hold or lie in an import folder.
"""

from __future__ import annotations

import os
import site
import sys


def import_folders() -> list[str]:
    """The folders on sys.path, and those of top-level packages loaded from elsewhere (an editable
    install maps gradrepl to its checkout through a finder, not through sys.path). A package inside a
    sys.path folder adds nothing: whatever holds or lies in it holds or lies in that folder too.
    Folders that do not exist yet count (a PYTHONPATH entry, the user site-packages): learner code
    could make one and fill it, and the next Python to start would import from it."""
    # "" is the current folder; a relative name that is no folder is a path hook's key (an editable
    # install's finder), not a place on disk.
    path = [entry or os.getcwd() for entry in sys.path
            if isinstance(entry, str) and (not entry or os.path.isabs(entry) or os.path.exists(entry))]
    if site.ENABLE_USER_SITE:  # site leaves a missing user site off sys.path, yet reads it once it exists
        path.append(site.getusersitepackages())
    inside = tuple(entry.rstrip("/") + "/" for entry in path)
    elsewhere = []
    for name, module in list(sys.modules.items()):
        if "." in name:
            continue
        # From the module's dict: getattr could run a module-level __getattr__ (a lazy import).
        for place in getattr(module, "__dict__", {}).get("__path__") or ():
            if isinstance(place, str) and not (place + "/").startswith(inside):
                elsewhere.append(place)
    return list(dict.fromkeys(os.path.realpath(place) for place in path + elsewhere))


def overlapping(folder: str, folders: list[str] | None = None) -> list[str]:
    """The import folders that `folder` holds or lies in: writing in `folder` could plant code there."""
    folder = os.path.realpath(folder)
    return [place for place in (import_folders() if folders is None else folders)
            if within(place, folder) or within(folder, place)]


def confined(writable: list[str], landlocked: bool) -> str:
    """The "import_path" layer: imports come from no folder the kernel can write. `writable` are its
    writable folders; without Landlock (`landlocked` False) the kernel may write wherever this user
    may, which os.access tells (read-only mounts included)."""
    if not (sys.flags.safe_path or sys.flags.isolated):
        raise ValueError("Python was started without -P, so the folder gradrepl was started in comes first "
                         "on sys.path of the unsandboxed zygote")
    folders = import_folders()
    for folder in writable:
        if hits := overlapping(folder, folders):
            raise ValueError(f"learner code can write {hits[0]} (through {folder}), a folder that code "
                             "outside the sandbox imports from")
    if not landlocked and (hits := [folder for folder in folders if os.access(folder, os.W_OK)]):
        raise ValueError(f"without Landlock learner code can write {hits[0]}, a folder that code outside "
                         "the sandbox imports from")
    return (f"safe path (-P, started in /): Python imports only from {len(folders)} folders learner code "
            "cannot write, never from the folder gradrepl was started in")


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it (both real paths)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
