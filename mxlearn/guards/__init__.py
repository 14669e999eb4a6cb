"""The explanations, written once: lifecycle and next step, arguments and names, bind and
parameter checks, per-batch and first-batch checks, optimizer requests, fit's arguments.

A guard is a function that returns quietly when all is well and raises an
:class:`mxlearn.errors.MXLearnError` that names the fix otherwise. Guards read only what they
are given (values, or a module's public attributes): the Module passes them its own state.
"""
