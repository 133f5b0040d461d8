"""What brain authors use: an optional template base class, freezing, observation encoders
and action decoders, the conformance checker and the package scaffold."""
