"""A submission read into files (folder, zip, notebook), who it belongs to, what it does to review."""
