"""The HTML page: templates/report.html rendered with Jinja2, the plots inside it as data
URIs, so that the one file can be mailed or attached to a ticket; the PNGs are written beside
it too."""

import base64
import os

from . import advice
from . import numbers
from . import plots

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
PAGE_NAME = "report.html"


def write_job_page(job, found, out_dir):
    pyplot = _pyplot()
    pictures = [("Time per rank", plots.time_per_rank(pyplot, job, out_dir)),
                ("Bytes", plots.bytes_moved(pyplot, job, out_dir)),
                ("Prefetching", plots.prefetch_outcomes(pyplot, job, out_dir))]
    return _render(out_dir, title=f"stagio report: {os.path.basename(job.path)}", job=job,
                   verdict=advice.verdict(job, found), findings=found,
                   job_rows=numbers.job_rows(job),
                   file_header=numbers.FILE_HEADER, file_rows=numbers.file_rows(job),
                   rank_header=numbers.RANK_HEADER, rank_rows=numbers.rank_rows(job),
                   settings=sorted(job.settings.items()), pictures=_embedded(pictures))


def write_comparison_page(first, second, out_dir):
    pyplot = _pyplot()
    pictures = [("A against B", plots.comparison(pyplot, first, second, out_dir))]
    return _render(out_dir, title="stagio report: A against B", first=first, second=second,
                   verdict=numbers.compare_verdict(first, second),
                   compare_header=numbers.COMPARE_HEADER,
                   compare_rows=numbers.compare_rows(first, second),
                   verdicts=[("A", advice.verdict(first)), ("B", advice.verdict(second))],
                   pictures=_embedded(pictures))


def _render(out_dir, **values):
    import jinja2
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
                                     autoescape=jinja2.select_autoescape(["html"]))
    path = os.path.join(out_dir, PAGE_NAME)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(environment.get_template("report.html").render(**values))
    return path


def _embedded(pictures):
    result = []
    for caption, path in pictures:
        with open(path, "rb") as handle:
            data = base64.b64encode(handle.read()).decode("ascii")
        result.append({"caption": caption, "name": os.path.basename(path),
                       "uri": f"data:image/png;base64,{data}"})
    return result


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    return pyplot
