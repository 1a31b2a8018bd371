-- Up Migration

-- One copy per version of every `$defs` member its operations reference (shared/contracts/
-- definitions.ts): an operation's `schema` is stored without `$defs` and reads put back the
-- members it reaches, so a definition that many operations share is stored once. Rows written
-- before keep their `$defs` inline and read as they are.
ALTER TABLE contract_versions ADD COLUMN definitions jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Down Migration
ALTER TABLE contract_versions DROP COLUMN definitions;
