"""Plugin machinery: discovering plugins, loading each in isolation, and the registry of what
they provided."""
