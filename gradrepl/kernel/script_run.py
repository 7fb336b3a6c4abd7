"""A script run as `python FILE ARGS` runs it (`gradrepl run`): sys.argv, __file__, __doc__, its
folder as the current folder and first on sys.path, sys.exit(n) as the end of the run.

`setup` runs once in a fresh kernel, after the sandbox is applied (worker.serve): only this
sandboxed process ever imports from the script's folder, never the zygote or the frontend
(import_path.py). Without a script (the REPL) sys.argv is [''] as in `python -i`, so no path or
number of the kernel's launcher is visible to learner code.
"""

from __future__ import annotations

import ast
import os
import sys
import types

_state: dict = {"script": None, "exit": None}  # this kernel's script, and the status it exited with


def main_namespace(names: dict) -> dict:
    """The learner's globals as the dict of a module that is sys.modules['__main__'], as a script's
    are: `import __main__` and pickling a class the learner defined (torch.save(model)) find them."""
    main = types.ModuleType("__main__")
    main.__dict__.update(names)  # __doc__, __spec__, __package__ None, as in `python -i`
    sys.modules["__main__"] = main
    return main.__dict__


def setup(policy: dict, namespace: dict) -> None:
    """sys.argv and, for a script (policy "script": its absolute path, "argv": its arguments), what
    `python FILE ARGS` gives it."""
    script = policy.get("script")
    sys.argv = [script, *map(str, policy.get("argv") or ())] if script else [""]
    sys.orig_argv = [os.path.basename(sys.executable), *(sys.argv if script else ())]
    if not script:
        return
    _state["script"] = script
    folder = os.path.dirname(script)
    namespace.update(__file__=script, __doc__=_docstring(script))
    sys.path.insert(0, folder)
    try:
        os.chdir(folder)  # readable through the sandbox (commands/common.py added it), writable if the workspace
    except OSError:
        pass  # not readable (a home folder is not granted): the run stays in scratch, the refusal says why


def exit_status(exc: SystemExit) -> int | None:
    """The status `python FILE` would exit with on this sys.exit() (its message, if any, goes to
    stderr as Python writes it); None in the REPL, where sys.exit() ends nothing."""
    if _state["script"] is None:
        return None
    code = exc.code
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:
        print(code, file=sys.stderr)
        status = 1
    _state["exit"] = status
    return status


def ended() -> bool:
    """Whether the script has called sys.exit(): the steps after it never run."""
    return _state["exit"] is not None


def _docstring(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return ast.get_docstring(ast.parse(handle.read()), clean=False)
    except (OSError, SyntaxError, ValueError):
        return None
