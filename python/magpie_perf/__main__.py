"""`magpie` (console script) and `python -m magpie_perf`: the bundled magpie.

The process is replaced by the executable (os.execv), so its exit status,
signals, stdin/stdout/stderr and terminal are those of magpie itself; the
Python interpreter is gone by the time magpie runs."""
import os
import sys

from . import binary


def main():
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("magpie: the bundled executable %s is missing or not executable; "
                         "reinstall magpie-perf\n" % exe)
        return 127
    os.execv(exe, ["magpie"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
