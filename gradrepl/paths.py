"""Where gradrepl keeps the learner's files (progress, review log, REPL history).

One folder per user, chosen by platformdirs; the GRADREPL_HOME environment
variable overrides it (tests point it at a temporary folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

HOME_ENV = "GRADREPL_HOME"


def data_dir() -> Path:
    """The user data folder, created if missing: $GRADREPL_HOME or the platform's default."""
    override = os.environ.get(HOME_ENV)
    folder = Path(override).expanduser() if override else platformdirs.user_data_path("gradrepl")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def progress_db() -> Path:
    """The SQLite file holding lesson progress, quiz cards and the review log."""
    return data_dir() / "progress.sqlite3"
