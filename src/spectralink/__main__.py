"""``python -m spectralink`` runs the command line (same as the ``spectralink`` command)."""

import sys

from .cli import main

sys.exit(main())
