"""nanoGPT's "poor man's configurator" in miniature: ``--key=value`` overrides the globals of
the script that execs this file (``exec(open('configurator.py').read())``)."""

import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    assert arg.startswith("--"), arg
    key, val = arg[2:].split("=")
    if key not in globals():
        raise ValueError(f"Unknown config key: {key}")
    try:
        attempt = literal_eval(val)
    except (SyntaxError, ValueError):
        attempt = val
    assert type(attempt) is type(globals()[key]), (key, attempt)
    print(f"Overriding: {key} = {attempt}")
    globals()[key] = attempt
