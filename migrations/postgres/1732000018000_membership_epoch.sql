-- Up Migration

-- A member removed or given another role moves the workspace authorization epoch, as archive and
-- restore do (docs/decisions/api-conventions.md): reviews, previews and receipts bound to the
-- epoch are then stale, so a removal followed by a re-add with the same role is still seen
-- (03: an operation of an earlier membership revision answers `authorization_changed`). Done in
-- the database so every path that changes memberships moves it. Adding a member grants nobody
-- less, so it leaves the epoch alone.
CREATE FUNCTION workspace_members_move_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.role = NEW.role THEN
    RETURN NULL;
  END IF;
  UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = OLD.workspace_id;
  RETURN NULL;
END $$;
CREATE TRIGGER workspace_members_move_epoch AFTER DELETE OR UPDATE OF role ON workspace_members
  FOR EACH ROW EXECUTE FUNCTION workspace_members_move_epoch();

-- Down Migration
DROP TRIGGER workspace_members_move_epoch ON workspace_members;
DROP FUNCTION workspace_members_move_epoch();
