"""Where this process imports Python code from, and whether learner code could write there.

The zygote and a spawned kernel import modules before and after the sandbox exists (the zygote,
never sandboxed, imports worker.WARM_LATER while idle), so a module learner code could plant in an
import folder would run outside the sandbox, in that session or in any later one. Imports must come
only from folders the kernel cannot write: Python is started with -P (client/launch.py), from "/", and no
writable folder of the kernel (scratch, --workspace) may hold or lie in an import folder.
"""

from __future__ import annotations

import os
import shutil
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


# Variables naming folders the next Python or its dynamic loader reads code from (":"-separated);
# LD_PRELOAD and LD_AUDIT name files, whose folders count.
CODE_FOLDER_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH")
CODE_FILE_VARIABLES = ("LD_PRELOAD", "LD_AUDIT")


def code_folders() -> list[tuple[str, str]]:
    """Every folder (real path) that code outside the sandbox runs or imports from, with what it is:
    the import folders, the interpreter's folders and prefixes (a swapped .venv/bin/python runs
    unsandboxed in the next session), the folder of the running gradrepl launcher and of the one on
    PATH, and the folders the environment points Python and the dynamic loader at."""
    found = [(place, "a folder Python imports gradrepl or its libraries from") for place in import_folders()]
    interpreter = "the interpreter's folder or prefix"
    for path in (sys.executable, os.path.realpath(sys.executable)):
        if path:
            found.append((os.path.dirname(path), interpreter))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        found.append((prefix, interpreter))
    if os.sep in (sys.argv[:1] or [""])[0]:  # not "-c": a launcher named by its path (PATH lookup gives one)
        found.append((os.path.dirname(os.path.abspath(sys.argv[0])), "the folder of the running gradrepl"))
    if launcher := shutil.which("gradrepl"):
        found.append((os.path.dirname(launcher), "the folder of the gradrepl command on PATH"))
    for name in CODE_FOLDER_VARIABLES + CODE_FILE_VARIABLES:
        for entry in os.environ.get(name, "").replace(" ", ":").split(":"):
            if entry:
                place = os.path.dirname(os.path.abspath(entry)) if name in CODE_FILE_VARIABLES else entry
                found.append((place, f"a folder ${name} names"))
    return list({os.path.realpath(place): (os.path.realpath(place), why) for place, why in found}.values())


CURRENT_FOLDER = "the current folder, where `python -m gradrepl` finds a planted gradrepl.py before gradrepl runs"


def unsafe_to_write(folder: str) -> str | None:
    """Why learner code must not write `folder` (a --workspace), or None: it is, holds or lies in a
    folder code outside the sandbox runs from (code_folders). The one rule for writable folders."""
    real = os.path.realpath(folder)
    for place, why in code_folders():
        if within(place, real) or within(real, place):
            relation = "is" if place == real else "holds" if within(place, real) else "lies in"
            return _refusal(folder, relation, place, why)
    # Only a folder that is or holds it: a folder below it is not where Python looks for a module.
    if not sys.flags.safe_path and within(cwd := os.path.realpath(os.getcwd()), real):
        return _refusal(folder, "is" if cwd == real else "holds", cwd, CURRENT_FOLDER)
    return None


def _refusal(folder: str, relation: str, place: str, why: str) -> str:
    what = why if relation == "is" else f"{place}, {why}"
    return (f"{folder} {relation} {what}, so learner code could plant code there that runs outside the sandbox; "
            "give a folder of its own")


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
