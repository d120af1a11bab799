"""Reading records: one with its history, a project's lists, pages to browse, and
the plain views every surface shows."""
