"""`stagio report`: what a job's stats file (STAGIO_STATS=path) says, for the person who ran it.

job.py reads and checks the stats document and derives the metrics; advice.py turns them into
findings and a one-line verdict; text.py writes the terminal summary; plots.py draws the PNGs
(matplotlib) and page.py writes the HTML page (a Jinja2 template with the plots inside it).
Two stats files are compared side by side (compare.py).
"""
