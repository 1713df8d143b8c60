"""``python -m inspect_empathy.cli``: the ``inspect-empathy`` command."""

import sys

from . import main

sys.exit(main())
