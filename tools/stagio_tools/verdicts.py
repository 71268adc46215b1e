"""A target of an issue, judged from a summary: what the issue asks, the numbers behind the
verdict, and the verdict. The targets modules (collective_targets.py, preexec_targets.py) make
them; the reports show them as a table."""

from dataclasses import dataclass

from . import markdown

WORDS = {True: "**met**", False: "**not met**", None: "not judged"}


@dataclass(frozen=True)
class Verdict:
    target: str     # the words
    measured: str   # the numbers behind the verdict
    met: object     # True, False, or None when it could not be judged


def table(verdicts):
    """The verdicts as a Markdown table."""
    rows = [[v.target, v.measured, WORDS[v.met]] for v in verdicts]
    return markdown.table(["target", "measured", "verdict"], rows, numbers=False)


def every_case(target, cases, missing, prefix="", separator="; "):
    """The verdict on a target every measured case must meet. `cases` are (text, met) pairs,
    one per case measured, the texts joined after `prefix` as the numbers behind it; none
    measured: not judged, `missing` saying why."""
    if not cases:
        return Verdict(target, missing, None)
    return Verdict(target, prefix + separator.join(text for text, _ in cases),
                   all(met for _, met in cases))
