-- Up Migration

-- A batch marker written by a reanalysis's recount (analyzer/reanalysis.ts markRecounted) says
-- that the batch's shapes are counted, not that its reconciliation rules were evaluated: the
-- recount compares shapes only. Live analysis still claims such a batch once for its rules
-- (rules_evaluated false → true) and leaves its shapes alone.
ALTER TABLE analysed_batches
  ADD COLUMN recounted boolean NOT NULL DEFAULT false,
  ADD COLUMN rules_evaluated boolean NOT NULL DEFAULT true;

-- Down Migration
ALTER TABLE analysed_batches DROP COLUMN recounted, DROP COLUMN rules_evaluated;
