"""Running a run: wiring a config into an experiment, the generation loop, seeding, replays and
the progress bar."""
