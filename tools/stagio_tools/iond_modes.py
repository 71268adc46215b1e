"""The modes of the iond suites (suites.py: iond, iond-sweep; issue 6): stagio's client tier
alone, and with a stagio-iond of its own behind an emulated link; and the sweep's points, each a
mode named after its client and daemon settings.

Every run of these suites pays the same link: in `plain` and `client` the application's storage
requests cross stagio-emu's link stage (--link-*) in series with the device; in `iond` the ranks
talk to the daemon through stagio-link (with_iond.py), and the daemon runs under stagio-emu with
the device alone. All stagio modes make every rank an aggregator, as seed 004's experiments do
("all the compute nodes cache data").
"""

from dataclasses import dataclass

from .mode_row import Mode


def _stagio(name, description, settings=(), iond=False, iond_args=()):
    return Mode(name, skip_io=False, emulated=True, stagio=True, prefetch="auto",
                description=description, settings=settings, iond=iond, iond_args=iond_args,
                every_rank_aggregates=True)


CLIENT = _stagio("client", "libstagio.so, no daemon: the client tier alone, writing back and "
                           "fetching across the emulated link (stagio-emu --link-*)")
IOND = _stagio("iond", "libstagio.so with STAGIO_IOND: the ranks reach their own stagio-iond "
                       "through stagio-link; the daemon runs under stagio-emu, the device alone",
               iond=True)

# ---- The sweep (seed 004, VI-B and VI-C) ----------------------------------------------------
#
# Water marks (Fig. 6): client high mark x daemon high mark, each low mark half its high one (as
# stagio's defaults, 6.25 / 3.125); 64 MiB client caches and a 512 MiB daemon cache, as there.
# Cache sizes (Fig. 9): client cache x daemon cache, at the marks seed 004 used for it (client
# 6.25%, daemon 0%). A client cache of 0 keeps only what a call is using (no caching); the
# daemon refuses --cache-size 0, so its smallest point is one block (1M), nearly none.
# STAGIO_WB_QUIET=0 in every sweep point: the
# quiet-period flush would write everything back during each compute phase whatever the marks
# say, and the sweep is about the marks.
CLIENT_MARKS = (0, 6.25, 12.5, 25, 50, 100)
DAEMON_MARKS = (0, 25, 50, 100)
CLIENT_CACHES = ("0", "8M", "16M", "64M")
DAEMON_CACHES = ("1M", "64M", "128M", "512M")
CLIENT_CACHE = "64M"
DAEMON_CACHE = "512M"
CACHE_SWEEP_MARKS = (6.25, 0)

MARKS = "marks"
CACHES = "caches"


@dataclass(frozen=True)
class SweepPoint:
    mode: str      # the mode's name
    kind: str      # MARKS or CACHES
    client: object  # the client's high mark (percent) or cache size ("8M")
    daemon: object  # the daemon's likewise


def _number(value):
    """6.25 -> "6.25", 50 -> "50": as typed, for names and options alike."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _point_mode(point, client_mark, daemon_mark, client_cache, daemon_cache):
    settings = (("STAGIO_WB_HIGH", _number(client_mark)),
                ("STAGIO_WB_LOW", _number(client_mark / 2)),
                ("STAGIO_CACHE_SIZE", client_cache), ("STAGIO_WB_QUIET", "0"))
    iond_args = ("--write-back-high", _number(daemon_mark),
                 "--write-back-low", _number(daemon_mark / 2), "--cache-size", daemon_cache)
    return _stagio(point.mode, f"sweep point: client {point.client}, daemon {point.daemon}",
                   settings=settings, iond=True, iond_args=iond_args)


def _sweep():
    points, modes = [], []
    for client in CLIENT_MARKS:
        for daemon in DAEMON_MARKS:
            point = SweepPoint(f"iond-wb-c{_number(client)}-d{_number(daemon)}", MARKS,
                               client, daemon)
            points.append(point)
            modes.append(_point_mode(point, client, daemon, CLIENT_CACHE, DAEMON_CACHE))
    for client in CLIENT_CACHES:
        for daemon in DAEMON_CACHES:
            point = SweepPoint(f"iond-cache-c{client}-d{daemon}", CACHES, client, daemon)
            points.append(point)
            modes.append(_point_mode(point, *CACHE_SWEEP_MARKS, client, daemon))
    return tuple(points), tuple(modes)


SWEEP_POINTS, SWEEP_MODES = _sweep()
MODES = (CLIENT, IOND) + SWEEP_MODES


def sweep_point(mode_name):
    """The sweep point a mode stands for, or None for the other modes."""
    return next((p for p in SWEEP_POINTS if p.mode == mode_name), None)
