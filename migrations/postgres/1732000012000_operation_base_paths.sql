-- Up Migration

-- Issue 26: the path prefixes the document's servers declare for an operation (OpenAPI 3.x
-- `servers` at document, path and operation level, server variables expanded from their defaults
-- and enums; Swagger 2.0 `basePath`), e.g. `{/v1}` for OpenAI's `https://api.openai.com/v1`.
-- Each starts with `/` and has no trailing `/`; empty when every server is at the root. An
-- observed route matches the operation with or without one of them in front of its template.
ALTER TABLE contract_operations ADD COLUMN base_paths text[] NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE contract_operations DROP COLUMN base_paths;
