"""The local web view (`contextd ui`): server-rendered pages over the same core API as the CLI."""
