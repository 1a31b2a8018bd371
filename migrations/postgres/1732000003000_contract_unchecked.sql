-- Up Migration

-- 00-decisions §7: per operation, the sub-schemas left unchecked on import
-- ([{pointer, schemaPointer, reason}], pointer into the source document, schemaPointer into
-- `schema`). The analyzer reports no undeclared field at those stored sub-schemas.
ALTER TABLE contract_operations ADD COLUMN unchecked jsonb NOT NULL DEFAULT '[]'::jsonb;

-- Down Migration
ALTER TABLE contract_operations DROP COLUMN unchecked;
