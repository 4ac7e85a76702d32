"""Team memory: sharing records of chosen projects through a PostgreSQL server."""
