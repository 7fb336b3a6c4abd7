"""The tensor panel: the live table, a tensor's details and its graph."""
