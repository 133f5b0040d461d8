"""The `evo` command."""
