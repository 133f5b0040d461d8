"""Optimizers: ask/tell strategies over float64 genomes, registered through the plugin hooks."""
