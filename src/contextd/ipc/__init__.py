"""The socket between contextd's clients and its daemon: where it is, who may use it, and the
frames that cross it. The standard library only: the prompt hook loads it on every prompt."""
