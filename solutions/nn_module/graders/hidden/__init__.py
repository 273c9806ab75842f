"""Hidden checks of nn_module: reference comparisons, properties, statistics and security."""
