"""The core's environment wrappers, registered through the `evo_wrappers` hook like a plugin's.

Each module holds one wrapper class: its `config_model` is the `{type = ...}` table of
`environment.wrappers`, and calling the class with (config, env) wraps the environment.
"""
