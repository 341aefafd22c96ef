import type { Knex } from 'knex';

// A note's kind: 'note' (written by someone through the notes API or a bulk action) or 'refund'
// (the note a refund writes on its sale, part of the sale's record). A refund note cannot be
// edited or deleted by any code path: the notes service answers 403, and these triggers refuse
// what gets past it. Its author may still be deleted (created_by SET NULL), and it goes with its
// sale when the sale itself is deleted in the same transaction (an archive purge).
//
// Existing refund notes are recognised as the refund writes them: on a sale with a refunded
// amount, "Refund on sale <that sale's id>: ... Amount refunded: X (total refunded Y of Z)."
const MESSAGE = "A refund note is part of the sale''s record and cannot be changed";

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE notes ADD COLUMN kind text NOT NULL DEFAULT 'note'`);
  await knex.raw(`ALTER TABLE notes ADD CONSTRAINT notes_kind_check CHECK (kind IN ('note', 'refund'))`);
  await knex.raw(
    `ALTER TABLE notes ADD CONSTRAINT notes_refund_on_sale CHECK (kind <> 'refund' OR reference_type = 'sale')`,
  );
  await knex.raw(`
    UPDATE notes n SET kind = 'refund'
      FROM sales s
     WHERE n.reference_type = 'sale' AND n.reference_id = s.id::text AND s.refunded_amount > 0
       AND starts_with(n.text, 'Refund on sale ' || s.sale_id || ': ')
       AND n.text ~ ' Amount refunded: [0-9.]+ \\(total refunded [0-9.]+ of [0-9.]+\\)\\.'`);

  await knex.raw(`
    CREATE FUNCTION notes_refund_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (NEW.text, NEW.reference_type, NEW.reference_id, NEW.kind, NEW.created_at, NEW.updated_at)
           IS DISTINCT FROM (OLD.text, OLD.reference_type, OLD.reference_id, OLD.kind, OLD.created_at, OLD.updated_at)
         OR (NEW.created_by IS DISTINCT FROM OLD.created_by AND NEW.created_by IS NOT NULL) THEN
        RAISE EXCEPTION '${MESSAGE}' USING ERRCODE = 'P0001';
      END IF;
      RETURN NEW;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER notes_refund_no_update BEFORE UPDATE ON notes
      FOR EACH ROW WHEN (OLD.kind = 'refund') EXECUTE FUNCTION notes_refund_unchanged()`);

  // Deferred to the commit, so that a purge may delete the note before its sale.
  await knex.raw(`
    CREATE FUNCTION notes_refund_kept_with_sale() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.reference_id ~ '^[0-9]{1,9}$' AND EXISTS (SELECT 1 FROM sales WHERE id = OLD.reference_id::int) THEN
        RAISE EXCEPTION '${MESSAGE}' USING ERRCODE = 'P0001';
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER notes_refund_no_delete AFTER DELETE ON notes
      DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW WHEN (OLD.kind = 'refund') EXECUTE FUNCTION notes_refund_kept_with_sale()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER notes_refund_no_delete ON notes');
  await knex.raw('DROP FUNCTION notes_refund_kept_with_sale()');
  await knex.raw('DROP TRIGGER notes_refund_no_update ON notes');
  await knex.raw('DROP FUNCTION notes_refund_unchanged()');
  await knex.raw('ALTER TABLE notes DROP CONSTRAINT notes_refund_on_sale');
  await knex.raw('ALTER TABLE notes DROP CONSTRAINT notes_kind_check');
  await knex.raw('ALTER TABLE notes DROP COLUMN kind');
}
