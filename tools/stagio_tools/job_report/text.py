"""The terminal summary: the job's numbers, its busiest files, its findings and the verdict;
or two jobs side by side."""

from . import advice
from . import numbers

TERMINAL_FILES = 5


def summary(job, found, page_path=None):
    lines = [f"stagio report: {job.path} (stagio {job.version})"]
    width = max(len(label) for label, _ in numbers.job_rows(job))
    lines += [f"  {label:<{width}}  {value}" for label, value in numbers.job_rows(job)]
    if job.files:
        lines += ["", f"  files (the {min(TERMINAL_FILES, len(job.files))} that moved the most):"]
        lines += _table(numbers.FILE_HEADER, numbers.file_rows(job, TERMINAL_FILES))
    if found:
        lines += ["", "  findings:"]
        lines += [f"  - [{f.severity}] {f.text}" for f in found]
    lines += ["", f"  verdict: {advice.verdict(job, found)}"]
    if page_path:
        lines.append(f"  page: {page_path}")
    return "\n".join(lines)


def comparison(first, second, page_path=None):
    lines = [f"stagio report: A = {first.path}", f"               B = {second.path}"]
    lines += _table(numbers.COMPARE_HEADER, numbers.compare_rows(first, second))
    lines += ["", f"  verdict: {numbers.compare_verdict(first, second)}"]
    if page_path:
        lines.append(f"  page: {page_path}")
    return "\n".join(lines)


def _table(header, rows):
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    def line(cells):
        first, *rest = cells
        return "  " + "  ".join([f"{first:<{widths[0]}}"] +
                                [f"{cell:>{w}}" for cell, w in zip(rest, widths[1:])])
    return [line(header)] + [line(row) for row in rows]
