"""The plugin's run state: options, per-test settings, cassette paths, the report."""
