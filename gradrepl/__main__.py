"""`python -m gradrepl` is the `gradrepl` command."""

import os
import sys

# `python -m` puts the start folder first on sys.path; the installed command does not. Take it off
# before anything more is imported: this process is not sandboxed. A gradrepl.py planted there still
# runs before this file (no --workspace may be or hold the current folder: import_path.unsafe_to_write). (Only gradrepl/__init__.py, which imports nothing, was read before this line.)
if not sys.flags.safe_path:
    sys.path[:] = [entry for entry in sys.path if entry not in ("", os.getcwd())]

from gradrepl.cli import main  # noqa: E402

sys.exit(main())
