"""Team memory in the repository: a project's shared records as one file each under
`.contextd/` in its git work tree, carried by git, reviewed in pull requests, indexed by the
store per checkout (so memory follows branches)."""
