-- Why a record was archived (archive --reason / the MCP archive tool); cleared on unarchive.
ALTER TABLE records ADD COLUMN archived_reason TEXT;
