"""Projects, sessions and the store as a whole: attaching folders, status, the
inventory, copying a store, the home folder and its files."""
