"""The command line's commands: tour, course and doctor (``python -m mxlearn ...``)."""
