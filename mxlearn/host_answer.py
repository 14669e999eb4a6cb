"""What a host says of itself before a job starts there, run by its path through the remote
shell (``python .../mxlearn/host_answer.py [ADDRESS]``): one JSON line with its IPv4 addresses
by interface (loopback left out), a free port on ADDRESS (none when ADDRESS is not the host's
own: binding to it succeeds only there; without ADDRESS, on the host's one address), its cores.

Standard library only, and Linux's ``SIOCGIFADDR`` (ps-lite's own way to read an interface's
address). That it runs at all says the host has the job's Python and mxlearn at the same path;
it also says the folder it runs in and whether the launcher's line reached its standard input:
what the remote shell does with a command's words and with stdin (each role's guard reads it).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import sys

SIOCGIFADDR = 0x8915
STDIN_LINE = "mxlearn-stdin"  # the launcher writes it to this script's standard input


def addresses() -> list[list[str]]:
    """[[interface, address], ...]: the first IPv4 address of each interface but loopback."""
    found = []
    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                asked = struct.pack("256s", name[:15].encode())
                packed = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, asked)
            except OSError:  # an interface without an IPv4 address
                continue
        address = socket.inet_ntoa(packed[20:24])
        if not address.startswith("127."):
            found.append([name, address])
    return found


def free_port(address: str) -> int | None:
    with socket.socket() as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return None
        return probe.getsockname()[1]


def main(argv: list[str]) -> None:
    found = addresses()
    told = argv[0] if argv and argv[0] else (found[0][1] if len(found) == 1 else "")
    port = free_port(told) if told else None
    stdin = sys.stdin.readline().strip() == STDIN_LINE
    answer = {"addresses": found, "port": port, "cpus": os.cpu_count() or 1}
    print(json.dumps({**answer, "folder": os.getcwd(), "stdin": stdin}))


if __name__ == "__main__":
    main(sys.argv[1:])
