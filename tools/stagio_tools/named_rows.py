"""The harness's tables (workloads, modes, suites) are tuples of frozen rows with a `name`;
this looks one up."""


def find(rows, name):
    """The row called `name`; KeyError when there is none."""
    for row in rows:
        if row.name == name:
            return row
    raise KeyError(name)
