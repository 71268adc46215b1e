"""The modes of the segstore suite (suites.py: segstore): stagio with a stagio-iond of its own,
without and with the daemon's segment store (seed 002). Both use stagio's client defaults; the
daemon options they share are the suite's (its cache smaller than the data read again, see
suites.py).
"""

from .mode_row import Mode

IOND = Mode("stagio-iond", skip_io=False, emulated=True, stagio=True, prefetch="auto",
            iond=True,
            description="libstagio.so with STAGIO_IOND: the ranks reach their own stagio-iond "
                        "(no segment store), which runs under stagio-emu with the device")
SEGSTORE = Mode("stagio-segstore", skip_io=False, emulated=True, stagio=True, prefetch="auto",
                iond=True, segstore=True,
                description="the same, the daemon with a segment store (--segstore) on the "
                            "local scratch disk, which the emulator does not charge")
MODES = (IOND, SEGSTORE)
