"""``python -m kernel_lens.cli`` = the CLI (as ``python -m kernel_lens``)."""

import sys

from kernel_lens.cli import main

sys.exit(main())
