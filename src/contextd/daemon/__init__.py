"""The warm daemon: keeps the model, the store and the vector matrix loaded behind a Unix socket."""
