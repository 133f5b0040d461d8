"""The plugin contract: the protocols a plugin implements, the hooks it may implement and the
config base models of its tables. Imports nothing else of evo but errors."""
