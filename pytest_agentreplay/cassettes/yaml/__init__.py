"""The cassette YAML: the canonical writer, its fast reader, and the safe libyaml loader."""
