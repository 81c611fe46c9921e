"""Operations on artifacts that combine reading, checking and writing: the resize in place or to a copy."""
