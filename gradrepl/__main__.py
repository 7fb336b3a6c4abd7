"""`python -m gradrepl` is the `gradrepl` command."""

import sys

from gradrepl.cli import main

sys.exit(main())
