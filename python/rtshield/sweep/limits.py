"""The limits of a sweep, stated once (``rtshield sweep --help``, docs/outputs.md).

Nothing here imports more than the standard library: the command's help
reads these without loading the sweep."""

#: The most points of one sweep. The client's memory does not grow with the
#: points, but the table does (about 250 bytes a row: 2.5 GB of sweep.csv at
#: the limit), and so do the arrays the safe region and the figure are found
#: from (25 bytes a point: 250 MB).
MAX_POINTS = 10_000_000

#: The most points with ``--keep-runs``: each point's folder (about 60 kB
#: without figures) and a line of the output folder's manifest.
MAX_KEPT_RUNS = 100_000

#: The most points a sweep's report shows, each with its own folder under
#: ``runs/``: every point of a grid this small, else the extremes and the
#: boundary of the safe region.
MAX_SHOWN = 12
