"""Plugin machinery: discovering plugins, loading each in isolation, the registry of what they
provided, and relaying events to their hooks."""
