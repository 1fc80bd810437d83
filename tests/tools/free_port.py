#!/usr/bin/env python3
"""Print a loopback TCP port that a test may hand to a server it starts.

Tests run in parallel (ctest -j) beside clients that open many loopback
connections, so a port picked at random can be taken: by another test's
server, or by an outgoing connection's local port when it falls in the
kernel's ephemeral range (ip_local_port_range, 32768-60999 by default).
A port printed here:
  - lies outside the ephemeral range, so no outgoing connection gets it;
  - is claimed by an O_EXCL file under $TMPDIR/magpie-test-ports, so no
    other test of this or a parallel run gets it while the claim is fresh
    (claims older than CLAIM_TTL_S are taken over);
  - could be bound on 127.0.0.1 and 0.0.0.0 at the time it was printed.

Usage: free_port.py [COUNT]   (COUNT distinct ports, one per line)
"""
import os
import random
import socket
import sys
import tempfile
import time

CLAIM_TTL_S = 1800


def ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def candidates():
    lo, hi = ephemeral_range()
    spans = [(s, e) for s, e in ((15000, lo - 1), (hi + 1, 65535)) if e - s >= 100]
    if not spans:  # an unusual range leaves no room: fall back to the low ports above 10000
        spans = [(10000, 14999)]
    while True:
        s, e = random.choice(spans)
        yield random.randint(s, e)


def bindable(port):
    for host in ("127.0.0.1", "0.0.0.0"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((host, port))
        except OSError:
            return False
        finally:
            s.close()
    return True


def claim(port, d):
    path = os.path.join(d, str(port))
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            os.write(fd, b"%d\n" % os.getppid())
            os.close(fd)
            return True
        except FileExistsError:
            try:
                if time.time() - os.path.getmtime(path) < CLAIM_TTL_S:
                    return False
                os.unlink(path)  # a stale claim: take it over
            except OSError:
                return False
    return False


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    d = os.path.join(tempfile.gettempdir(), "magpie-test-ports")
    os.makedirs(d, exist_ok=True)
    got = []
    for port in candidates():
        if len(got) == count:
            break
        if port in got or not bindable(port) or not claim(port, d):
            continue
        got.append(port)
    print("\n".join(str(p) for p in got))


if __name__ == "__main__":
    main()
