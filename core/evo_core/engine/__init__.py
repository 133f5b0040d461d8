"""From a validated config to generations: wiring the components, seeding, running episodes,
the generation loop and replays."""
