"""Sweeps: one config run for every setting and seed of its `[sweep]` table (`evo sweep`)."""
