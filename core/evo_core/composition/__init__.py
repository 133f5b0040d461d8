"""Brains made of brains: the `chain` brain, a core feature registered like any plugin's."""
