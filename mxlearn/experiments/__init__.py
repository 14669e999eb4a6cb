"""The experiment bench: compare runs, find a learning rate, read the curves, look inside."""
