"""The request counts in a stagio-iond --stats file, for the test scripts.

    python3 iond_stats.py STATS.json          prints "Hello=n Open=n ReadBlocks=n ..."
    python3 iond_stats.py STATS.json NAME     prints the count of one request type (0 if none)
    python3 iond_stats.py STATS.json --segment-store
                                              prints the segment store's counters
                                              ("reads=n read_hits=n ..."); exits 1 if none

Exits 1 with a message if the file is missing or not JSON. The counts are the first
"requests" object found in the file, wherever the daemon puts it.
"""

import json
import sys


def find(node, key):
    """The first value named `key` anywhere in the JSON tree, depth first; None if none."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        node = list(node.values())
    for child in node if isinstance(node, list) else ():
        found = find(child, key)
        if found is not None:
            return found
    return None


def main(argv):
    try:
        with open(argv[1], encoding="utf-8") as stream:
            stats = json.load(stream)
    except (OSError, ValueError) as error:
        print(f"iond_stats: {argv[1]}: {error}", file=sys.stderr)
        return 1
    if argv[2:] == ["--segment-store"]:
        store = find(stats, "segment_store")
        if not store:
            print(f"iond_stats: {argv[1]}: no segment store", file=sys.stderr)
            return 1
        print(" ".join(f"{name}={value}" for name, value in store.items()
                       if isinstance(value, (int, float))))
        return 0
    requests = find(stats, "requests") or {}
    if len(argv) > 2:
        print(requests.get(argv[2], 0))
    else:
        print(" ".join(f"{name}={count}" for name, count in requests.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
