"""Evaluating candidates: playing episodes with brains, vector environments, behaviour
descriptors, and checking a template can travel to workers."""
