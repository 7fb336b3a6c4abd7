"""Where the checkout lies and how a test starts gradrepl as a learner's shell does."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GRADREPL = [sys.executable, "-m", "gradrepl"]
