"""``python -m chaja.eval.cli``: the ``eval`` commands on their own."""
import sys

from chaja.eval.cli.app import main

sys.exit(main())
