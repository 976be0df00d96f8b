"""Helpers every floor of the library may use; nothing here imports the rest of the package."""
