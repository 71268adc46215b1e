"""A row of the mode table (modes.py): how the harness runs a workload in one mode. Its own
module so that the tables of modes made from parameters (iond_modes.py) can use it too."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    name: str
    skip_io: bool        # pass the workload's ideal option (--skip-io, or --skip-reads for the
                         # pre-execution examples): the ideal bound T_ideal
    emulated: bool       # run under stagio-emu, so storage requests cost emulated time
    stagio: bool         # LD_PRELOAD libstagio.so
    prefetch: str = ""   # STAGIO_PREFETCH for stagio modes
    description: str = ""
    settings: tuple = ()  # further (STAGIO_X, value) pairs the mode is defined by
    # The iond suites (iond_modes.py): the ranks reach a stagio-iond of their own through
    # stagio-link (with_iond.py), which gets these further daemon options.
    iond: bool = False
    iond_args: tuple = ()
    # The daemon keeps a segment store on the scratch disk (with_iond.py --segstore).
    segstore: bool = False
    # Every rank caches and serves blocks (STAGIO_AGGREGATORS = the rank count), as every
    # compute node does in seed 004's experiments; stagio's default is one per node.
    every_rank_aggregates: bool = False
