"""`ireebench replay FILE.ireereplay` (issue 5)."""

import sys


def run_replay_cli(argv: list[str]) -> int:
    print("ireebench: error: replay: not implemented yet", file=sys.stderr)
    return 1
