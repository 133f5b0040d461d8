"""Shaping the search: novelty search's archive, its distances, and the shaped score told to the
optimizer."""
