"""The mirrored API: Module (each override is its guards, then MXNet's own method),
MutableModule for batches of varying shapes, resume() beside Module.load, and the summary."""

from .module import Module
from .mutable import MutableModule, ShapeInspector
from .resuming import resume

__all__ = ["Module", "MutableModule", "ShapeInspector", "resume"]
