"""``python -m chaja.cli``: the ``chaja`` command."""
import sys

from chaja.cli.app import main

sys.exit(main())
