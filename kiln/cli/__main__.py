"""``python -m kiln.cli``: the ``kiln`` console script."""

import sys

from . import main

sys.exit(main())
