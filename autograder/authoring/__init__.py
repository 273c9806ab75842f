"""Writing assignments: markers, stubs and student folders, the source notebook, scaffolds, doctor."""
