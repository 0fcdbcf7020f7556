"""What a measure is: the registry and grammar, the ranked-list input, one family per module."""
