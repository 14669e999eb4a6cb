"""The explanations, written once. A guard returns quietly when all is well and otherwise raises
an :class:`mxlearn.errors.MXLearnError` that names the fix; it reads only what it is given
(values, or a module's public attributes)."""
