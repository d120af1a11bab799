"""The hot commands' typed requests and the one answer to each, given by the daemon to its
clients and by a command in its own process alike."""
