"""Team memory: several developers' workers share what they learned through PostgreSQL +
pgvector (see ARCHITECTURE.md, "Team memory"). Nothing here is on the hook path; psycopg and
the embedded server load only when a command or the worker's sync needs them."""
