"""Reading a results dictionary (results.json) for the reports and plots: what it covers
(workloads, modes, rank counts) and its summary, with the defaults that older files need."""

from dataclasses import dataclass


@dataclass(frozen=True)
class ResultsView:
    settings: dict
    summary: dict        # summary.py's shape
    workloads: list      # in the order they ran
    modes: list
    rank_counts: list


def view(results):
    settings = results.get("settings", {})
    summary = results.get("summary", {})
    return ResultsView(settings=settings, summary=summary,
                       workloads=settings.get("workloads", list(summary)),
                       modes=settings.get("modes", []),
                       rank_counts=rank_counts_of(settings))


def rank_counts_of(settings):
    """The rank counts of a results' settings, as a list: older files hold one int."""
    ranks = settings.get("ranks")
    if isinstance(ranks, int) and not isinstance(ranks, bool):
        return [ranks]
    return [r for r in ranks if isinstance(r, int)] if isinstance(ranks, list) else []
