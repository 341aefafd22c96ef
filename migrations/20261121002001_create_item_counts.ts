import type { Knex } from 'knex';

// Item counts per category (active / inactive), kept by statement-level triggers, so the item
// list's total costs one primary-key read instead of counting 50,000 rows on every request.
// Counter rows are always touched in category_id order, so concurrent writers queue instead of
// deadlocking. Stock changes (UPDATE of current_stock) change no count and touch no counter row.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE item_counts (
      category_id integer PRIMARY KEY,
      active bigint NOT NULL DEFAULT 0,
      inactive bigint NOT NULL DEFAULT 0
    )`);
  await knex.raw(`
    CREATE FUNCTION item_counts_add(deltas jsonb) RETURNS void LANGUAGE sql AS $$
      INSERT INTO item_counts AS c (category_id, active, inactive)
      SELECT (d->>'category_id')::int, (d->>'active')::bigint, (d->>'inactive')::bigint
        FROM jsonb_array_elements(deltas) d
       ORDER BY (d->>'category_id')::int
      ON CONFLICT (category_id) DO UPDATE SET active = c.active + excluded.active, inactive = c.inactive + excluded.inactive
    $$`);
  await knex.raw(`
    CREATE FUNCTION item_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM item_counts_add(coalesce((
        SELECT jsonb_agg(jsonb_build_object('category_id', category_id, 'active', a, 'inactive', i))
          FROM (SELECT category_id, count(*) FILTER (WHERE is_active) AS a, count(*) FILTER (WHERE NOT is_active) AS i
                  FROM new_rows GROUP BY category_id) g), '[]'::jsonb));
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION item_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM item_counts_add(coalesce((
        SELECT jsonb_agg(jsonb_build_object('category_id', category_id, 'active', -a, 'inactive', -i))
          FROM (SELECT category_id, count(*) FILTER (WHERE is_active) AS a, count(*) FILTER (WHERE NOT is_active) AS i
                  FROM old_rows GROUP BY category_id) g), '[]'::jsonb));
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION item_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM item_counts_add(coalesce((
        SELECT jsonb_agg(jsonb_build_object('category_id', category_id, 'active', a, 'inactive', i))
          FROM (SELECT category_id, sum(a) AS a, sum(i) AS i FROM (
                  SELECT o.category_id, -(o.is_active::int) AS a, -((NOT o.is_active)::int) AS i
                    FROM old_rows o JOIN new_rows n ON n.id = o.id
                   WHERE o.is_active IS DISTINCT FROM n.is_active OR o.category_id IS DISTINCT FROM n.category_id
                  UNION ALL
                  SELECT n.category_id, n.is_active::int, (NOT n.is_active)::int
                    FROM old_rows o JOIN new_rows n ON n.id = o.id
                   WHERE o.is_active IS DISTINCT FROM n.is_active OR o.category_id IS DISTINCT FROM n.category_id) d
                 GROUP BY category_id HAVING sum(a) <> 0 OR sum(i) <> 0) g), '[]'::jsonb));
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER items_count_insert AFTER INSERT ON items REFERENCING NEW TABLE AS new_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION item_counts_after_insert()`);
  await knex.raw(`CREATE TRIGGER items_count_delete AFTER DELETE ON items REFERENCING OLD TABLE AS old_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION item_counts_after_delete()`);
  await knex.raw(`CREATE TRIGGER items_count_update AFTER UPDATE ON items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION item_counts_after_update()`);
  await knex.raw(`
    INSERT INTO item_counts (category_id, active, inactive)
    SELECT category_id, count(*) FILTER (WHERE is_active), count(*) FILTER (WHERE NOT is_active) FROM items GROUP BY category_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER items_count_update ON items');
  await knex.raw('DROP TRIGGER items_count_delete ON items');
  await knex.raw('DROP TRIGGER items_count_insert ON items');
  await knex.raw(
    'DROP FUNCTION item_counts_after_update(), item_counts_after_delete(), item_counts_after_insert(), item_counts_add(jsonb)',
  );
  await knex.raw('DROP TABLE item_counts');
}
