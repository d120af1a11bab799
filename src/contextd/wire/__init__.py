"""How a process reaches the daemon: where it listens and the checks that it is this user's
(rendezvous), the frame format (frames), asking one question (to_daemon), starting it
(launch), and the hook events a request may name (hook_events). The standard library only:
the prompt hook pays for every import here on every prompt."""
