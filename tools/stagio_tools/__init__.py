"""The Python side of stagio: the `stagio` command's subcommands and their helpers.

Only the standard library is needed, except matplotlib for the benchmark plots (imported lazily
in plots.py, so everything else, including the unit tests, runs without it).
"""
