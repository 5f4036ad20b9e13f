"""``python -m meeplecam`` is the ``meeplecam`` command."""

import sys

from meeplecam.cli import main

sys.exit(main())
