"""``python -m kernel_lens`` = the CLI."""

import sys

from kernel_lens.cli import main

sys.exit(main())
